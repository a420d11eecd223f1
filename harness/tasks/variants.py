"""A variant's ``items_from``: the task it names must make the items the variant evaluates.

``items_from: NS/TASK`` makes the item ids and seeds those of ``NS/TASK``, but the items are
still made from the variant's own source, fields and buckets (``harness.items.build_instances``).
Where these differ from the named task's, the variant evaluates other questions under the named
task's item ids and seeds, and ``harness compare`` may pair them with the named task's items as
if they were one: so a difference is an error (``check_items_from``), found by ``harness tasks
validate`` and by ``harness eval`` before any model loads.

What may differ: templates, output, scoring, gaps, analyses, roles, ``fewshot`` (exemplars, not
items) and ``source.per_bucket`` (item j of a bucket is the same item whatever the count).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.errors import HarnessError, TaskSpecError, did_you_mean
from harness.spec.sources import DatasetSource, FilesSource, GeneratorSource
from harness.spec.task import TaskSpec

if TYPE_CHECKING:
    from harness.tasks.index import TaskIndex


@dataclass(frozen=True)
class NamedTask:
    """The task an ``items_from`` names, as found."""

    address: str  # e.g. "mybench/digitsum"
    spec: TaskSpec  # its validated spec
    base_dir: Path  # the folder its relative paths start from
    path: Path | None = None  # its task file (None: a spec given in code)


# address → the task (None: no such task); a task that does not load raises HarnessError
FindTask = Callable[[str], "NamedTask | None"]

_SHOWN = 3  # differing keys shown in the message, at most


def check_items_from(spec: TaskSpec, path: Path | str, base_dir: Path, find: FindTask,
                     address: str | None = None,
                     hint: Callable[[str], str] = lambda name: "") -> None:
    """Raise ``TaskSpecError`` (one line, ``file: items_from: ...``) when the task that
    ``spec.items_from`` names does not exist, takes its own items from a third task, or makes
    its items from another source, other buckets or other item fields than ``spec``
    (``address``: the variant's own address, where known; ``hint(name)``: added to the line
    for a name that is no task, e.g. close names and how to make the task known)."""
    named_address = spec.items_from
    if named_address is None or named_address == address:
        return
    where = f"{path}: items_from"
    try:
        named = find(named_address)
    except HarnessError as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise TaskSpecError(f"{where}: {named_address} does not load, so its items cannot be "
                            f"compared with this task's ({first})") from None
    if named is None:
        raise TaskSpecError(f"{where}: no task {named_address!r}{hint(named_address)}")
    if named.path is not None and _same_file(named.path, path):
        return
    of = named.spec.items_from
    if of is not None and of != named_address:
        raise TaskSpecError(f"{where}: {named_address} evaluates the items of {of} (its own "
                            f"items_from), so name {of} here")
    found = differences(spec, base_dir, named)
    if found:
        blocks = list(dict.fromkeys(key.split(".")[0] for key, _, _ in found))
        shown = "; ".join(f"{key} {mine} here, {theirs} in {named_address}"
                          for key, mine, theirs in found[:_SHOWN])
        more = f"; and {len(found) - _SHOWN} more" if len(found) > _SHOWN else ""
        verb = "differs" if blocks == ["source"] else "differ"
        raise TaskSpecError(
            f"{where}: {' and '.join(blocks)} {verb} from {named_address}'s ({shown}{more}), "
            f"so its items would not be {named_address}'s, though they carry its item ids; "
            f"give it {named_address}'s {' and '.join(blocks)}, or remove items_from")


def differences(spec: TaskSpec, base_dir: Path, named: NamedTask) -> list[tuple[str, str, str]]:
    """(key, this task's value, the named task's value) for each key that decides which items
    a task makes and differs between the two (a changed ``source.type``: that key alone)."""
    mine, theirs = _item_keys(spec, base_dir), _item_keys(named.spec, named.base_dir)
    if mine["source.type"] != theirs["source.type"]:
        keys = ["source.type"]
    else:
        keys = [k for k in dict.fromkeys([*mine, *theirs]) if mine.get(k) != theirs.get(k)]
    return [(k, _show(mine.get(k)), _show(theirs.get(k))) for k in keys]


def _item_keys(spec: TaskSpec, base_dir: Path) -> dict[str, Any]:
    """The settings that decide a task's items, flattened to dotted keys: its source (but
    ``per_bucket``; file paths resolved from the task's folder), its buckets and, for record
    sources, the fields that give each record's id and difficulty."""
    from harness.sources.files import resolve_path

    src = spec.source
    source = src.model_dump(mode="json", exclude={"per_bucket"})
    if isinstance(src, FilesSource):
        source["path"] = str(resolve_path(src.path, base_dir).resolve())
    elif isinstance(src, DatasetSource) and src.local_path:
        source["local_path"] = str(resolve_path(src.local_path, base_dir).resolve())
    out = _flat({"source": source,
                 "buckets": spec.buckets.model_dump(mode="json", exclude_none=True)})
    if not isinstance(src, GeneratorSource):
        f = spec.fields
        out.update({"fields.id": f.id, "fields.difficulty": f.difficulty,
                    "fields.difficulty_pattern": f.difficulty_pattern})
    return out


def _flat(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, Mapping) and value and all(isinstance(k, str) for k in value):
            out.update(_flat(value, f"{prefix}{key}."))
        elif not (isinstance(value, Mapping) and not value):  # an empty mapping: no keys
            out[f"{prefix}{key}"] = value
    return out


def _show(value: Any) -> str:
    """A value as written in a task file (whole numbers without ``.0``), cut to one short
    line; ``(unset)`` for a key one task does not give."""
    from harness.templates import one_line

    if value is None:
        return "(unset)"
    return one_line(json.dumps(_whole(value), ensure_ascii=False), 80)


def _whole(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_whole(v) for v in value]
    if isinstance(value, dict):
        return {k: _whole(v) for k, v in value.items()}
    return value


def _same_file(a: Path, b: Path | str) -> bool:
    try:
        return a.resolve() == Path(b).resolve()
    except (OSError, ValueError):
        return False


def files_finder(variant: Path) -> FindTask:
    """How ``harness tasks validate`` finds the task an ``items_from`` of the task file
    ``variant`` names: in the package folder ``variant`` is in, by its installed address
    (``harness.tasks.namespaces``), else ``ADDRESS.yaml`` in a folder above the file (an
    ``--include-path`` layout), else a built-in or installed plugin task, else ``TASK.yaml``
    (the address without its namespace) in a folder above the file (a package's tasks folder
    that no ``pyproject.toml`` names)."""
    from harness.tasks.loader import load_spec
    from harness.tasks.namespaces import package_folder

    def in_folders(address: str, rel: str) -> NamedTask | None:
        for folder in variant.resolve().parents:
            cand = folder / f"{rel}.yaml"
            if cand.is_file():
                return NamedTask(address, load_spec(cand), cand.parent, cand)
        return None

    index: list[TaskIndex] = []  # built on first need
    package = package_folder(variant)

    def find(address: str) -> NamedTask | None:
        if package is not None and address.startswith(f"{package[1]}/"):
            cand = package[0] / f"{address.split('/', 1)[1]}.yaml"
            if cand.is_file():
                return NamedTask(address, load_spec(cand), cand.parent, cand)
        found = in_folders(address, address)
        if found is None:
            from harness.tasks.index import TaskIndex

            index[:] = index or [TaskIndex.build()]
            found = index_finder(index[0])(address)
        if found is None and "/" in address:
            found = in_folders(address, address.split("/", 1)[1])
        return found

    return find


def files_hint(variant: Path) -> Callable[[str], str]:
    """What ``harness tasks validate`` adds for a name that is no task: close addresses (of
    the tasks of the package folder ``variant`` is in, else of the files beside it as
    ``--include-path`` of the folder above would address them; of built-in and installed
    tasks) and where it was looked for."""

    def hint(name: str) -> str:
        from harness.tasks.index import TaskIndex
        from harness.tasks.namespaces import package_addresses

        here = variant.resolve().parent
        index = TaskIndex.build()
        index.load_providers({name.split("/", 1)[0]}, quiet=True)
        beside = package_addresses(variant) or [  # a package's, else as --include-path's
            f"{here.name}/{f.stem}" for f in here.glob("*.yaml") if not f.name.startswith("_")]
        known = [*beside, *index.refs]
        return (close_addresses(name, known) + " (looked for it in the folders above this file "
                "and among built-in and installed tasks)")

    return hint


def index_finder(index: TaskIndex) -> FindTask:
    """How ``harness eval`` finds the task an ``items_from`` names: in its task index (built-in
    tasks, ``--include-path`` folders, installed plugins)."""

    def find(address: str) -> NamedTask | None:
        if "/" in address:
            index.load_providers({address.split("/", 1)[0]}, quiet=True)
        ref = index.refs.get(address)
        if ref is None:
            return None
        return NamedTask(address, index.spec(ref), ref.base_dir,
                         ref.path if ref.spec is None else None)

    return find


def close_addresses(name: str, known: Iterable[str]) -> str:
    """``did_you_mean`` among the task addresses an ``items_from`` may hold (a bare name, the
    address of a task file at the top of a folder given without a namespace, never: the schema
    refuses it), the tasks of ``name``'s own namespace compared by their names first."""
    valid = sorted({a for a in known if "/" in a and not any(c.isspace() for c in a)})
    namespace, _, rest = name.partition("/")
    mine = [a.partition("/")[2] for a in valid if a.partition("/")[0] == namespace]
    close = difflib.get_close_matches(rest, mine, n=3, cutoff=0.6)
    if close:
        return f" (did you mean: {', '.join(f'{namespace}/{c}' for c in close)}?)"
    return did_you_mean(name, valid)
