"""YAML task file → validated ``TaskSpec``.

Resolves ``include:`` (relative paths, deep merge, cycles are an error) and turns every problem
into one line: ``file:line: key.path: problem``.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from harness.errors import TaskSpecError
from harness.sources.paths import check_read
from harness.spec.sources import SourceSpec
from harness.spec.task import OutputSpec, TaskSpec, type_tags
from harness.tasks.origins import KeySources

try:  # the C loader is several times faster; fall back where libyaml is missing
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

MAX_TASK_FILE_BYTES = 4_000_000  # a task file (or an included one) larger than this is refused


class _DuplicateKey(yaml.YAMLError):
    """A mapping gives one key twice (``key``: the key node, ``first``: its first node)."""

    def __init__(self, key: yaml.Node, first: yaml.Node) -> None:
        super().__init__(f"duplicate key {key.value!r}")
        self.key, self.first = key, first


class _Loader(_BaseLoader):
    """The safe loader, refusing a key given twice in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(
                    key_node, yaml.ScalarNode):
                continue
            if key_node.value in seen:
                raise _DuplicateKey(key_node, seen[key_node.value])
            seen[key_node.value] = key_node
        return super().construct_mapping(node, deep=deep)


def _key_path(root: yaml.Node | None, target: yaml.Node) -> str:
    """The dotted key path of ``target`` (a key node) in the tree ``root``."""
    todo: list[tuple[yaml.Node, tuple[str, ...]]] = [(root, ())] if root is not None else []
    while todo:
        node, path = todo.pop()
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                here = (*path, str(getattr(k, "value", "?")))
                if k.start_mark.index == target.start_mark.index:
                    return ".".join(here)
                todo.append((v, here))
        elif isinstance(node, yaml.SequenceNode):
            todo.extend((v, (*path, str(i))) for i, v in enumerate(node.value))
    return str(target.value)


def _yaml_error(path: Path, text: str, e: yaml.YAMLError) -> TaskSpecError:
    """One line for a YAML problem: ``file:line:col: malformed YAML: problem``."""
    from harness.templates import one_line

    if isinstance(e, _DuplicateKey):
        try:
            key = _key_path(yaml.compose(text, Loader=_BaseLoader), e.key)
        except yaml.YAMLError:
            key = str(e.key.value)
        return TaskSpecError(f"{path}:{e.key.start_mark.line + 1}: {one_line(key)}: duplicate key "
                             f"(first given on line {e.first.start_mark.line + 1})")
    if isinstance(e, yaml.MarkedYAMLError):
        mark = e.problem_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        return TaskSpecError(f"{where}: malformed YAML: {one_line(str(e.problem))}")
    if isinstance(e, yaml.reader.ReaderError):
        char = e.character if isinstance(e.character, str) else chr(e.character)
        return TaskSpecError(f"{path}: malformed YAML: character {char!r} at offset "
                             f"{e.position} is not allowed in YAML")
    return TaskSpecError(f"{path}: malformed YAML: {one_line(str(e))}")


def read_text(path: Path) -> str:
    """A task file's text: UTF-8, at most ``MAX_TASK_FILE_BYTES``; anything else is one line."""
    from harness.bounds import read_utf8

    try:
        return read_utf8(path, MAX_TASK_FILE_BYTES)
    except (OSError, ValueError) as e:
        if isinstance(e, ValueError) and str(e).startswith("is "):  # a FIFO, too large, not UTF-8
            tail = "; task files are UTF-8 YAML" if "UTF-8" in str(e) else ""
            raise TaskSpecError(f"{path}: {e}{tail}") from None
        why = getattr(e, "strerror", None) or str(e)
        raise TaskSpecError(f"{path}: cannot read: {why}") from None


def read_yaml(path: Path, with_node: bool = False) -> tuple[dict[str, Any], yaml.Node | None]:
    """Parse one YAML file into a mapping, and with ``with_node`` its node tree (line numbers
    for error messages: a second parse, so only on the error path)."""
    text = read_text(path)
    try:
        data = yaml.load(text, Loader=_Loader)
        node = yaml.compose(text, Loader=_Loader) if with_node else None
    except yaml.YAMLError as e:
        raise _yaml_error(path, text, e) from None
    except RecursionError:
        raise TaskSpecError(f"{path}: malformed YAML: nested too deeply") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise TaskSpecError(f"{path}: expected a mapping of keys at the top level")
    return data, node


def _parsed(path: Path) -> dict[str, Any]:
    """``read_yaml(path)``'s mapping (a fresh top level; nested values are shared and never
    mutated), parsed once per file version: a base file that 1,000 tasks include is read once."""
    try:
        st = path.stat()
    except (OSError, ValueError) as e:
        raise TaskSpecError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    return dict(_parse_cached(path, st.st_mtime_ns, st.st_size))


@functools.lru_cache(maxsize=256)
def _parse_cached(path: Path, mtime_ns: int, size: int) -> dict[str, Any]:
    return read_yaml(path)[0]


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge mappings: ``over`` wins; lists and scalars are replaced, not concatenated.
    A block whose ``type`` differs from the base's (``output``, ``source``, ``fewshot.source``:
    discriminated unions) replaces the base's block whole: its keys belong to another kind."""
    out = dict(base)
    for k, v in over.items():
        old = out.get(k)
        if isinstance(v, dict) and isinstance(old, dict) and not _other_kind(old, v):
            out[k] = _merge(old, v)
        else:
            out[k] = v
    return out


def _other_kind(base: dict[str, Any], over: dict[str, Any]) -> bool:
    """True when both blocks name a ``type`` and the types differ."""
    return "type" in base and "type" in over and base["type"] != over["type"]


def resolve_includes(path: Path, _stack: tuple[Path, ...] = ()) -> dict[str, Any]:
    """Load ``path`` with its ``include:`` chain merged in (included files first)."""
    path = path.resolve()
    if path in _stack:
        chain = " -> ".join(p.name for p in (*_stack, path))
        raise TaskSpecError(f"{_stack[0]}: include: cycle {chain}")
    data = _parsed(path)
    inc = data.pop("include", None)
    if inc is None:
        return data
    names = [inc] if isinstance(inc, str) else inc
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise TaskSpecError(f"{path}: include: expected a file name or a list of file names")
    merged: dict[str, Any] = {}
    for name in names:
        try:
            target = (path.parent / name).resolve()
            found = target.is_file()
        except (OSError, ValueError):  # a NUL byte, a name too long for the file system
            found = False
        if not found:
            from harness.templates import one_line

            raise TaskSpecError(f"{path}: include: file not found: {one_line(repr(name), 120)}")
        check_read(target, _stack[0] if _stack else path, "include")
        merged = _merge(merged, resolve_includes(target, (*_stack, path)))
    return _merge(merged, data)


def _allowed_keys(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """Field names allowed at the parent of ``loc`` (for "did you mean")."""
    current: Any = model
    annotation: Any = None
    for key in loc[:-1]:
        if isinstance(key, int):
            continue
        fields = getattr(current, "model_fields", None)
        if fields is not None and key in fields:
            annotation = fields[key].annotation
            current = _model_in(annotation)
        elif annotation is not None:  # a discriminated-union tag (e.g. "multiple_choice")
            current = _model_in(annotation, tag=str(key)) or current
        else:
            return []
    fields = getattr(current, "model_fields", {})
    return list(fields)


def _model_in(annotation: Any, tag: str | None = None) -> Any:
    """The pydantic model class inside an annotation like ``list[X]`` or ``X | None``; with
    ``tag``, the union member whose ``type`` literal is ``tag``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if tag is None:
            return annotation
        field = annotation.model_fields.get("type")
        return annotation if field is not None and tag in getattr(
            field.annotation, "__args__", ()) else None
    for arg in getattr(annotation, "__args__", ()):
        found = _model_in(arg, tag)
        if found is not None:
            return found
    return None


# the member tags pydantic puts in an error's location for a discriminated union (not in the file)
_UNION_TAGS = frozenset(type_tags(SourceSpec) + type_tags(OutputSpec))


def _file_loc(err: Mapping[str, Any]) -> tuple[int | str, ...]:
    """The error's key path as written in the file (union tags such as "generator" left out)."""
    return tuple(x for x in err["loc"] if x not in _UNION_TAGS)


def _suggestion(err: Mapping[str, Any]) -> tuple[str | None, list[str]]:
    """For an unknown key: the closest allowed key (never the key itself) and every allowed key."""
    allowed = _allowed_keys(TaskSpec, err["loc"])
    key = str(err["loc"][-1])
    close = difflib.get_close_matches(key, [a for a in allowed if a != key], n=1, cutoff=0.5)
    return (close[0] if close else None), allowed


def _format_error(path: Path | str, err: dict[str, Any], sources: KeySources | None) -> str:
    from harness.templates import one_line

    loc = _file_loc(err)
    dotted = one_line(".".join(str(x) for x in loc), 200) or "(top level)"
    shown, line, by, _ = sources.locate(loc) if sources else (str(path), None, "", 0)
    where = f"{shown}:{line}" if line else shown
    if err["type"] == "extra_forbidden":
        close, allowed = _suggestion(err)
        hint = f" (did you mean '{close}'?)" if close else f" (allowed: {', '.join(allowed)})"
        return f"{where}: {dotted}: unknown key{hint}{by}"
    msg = one_line(str(err["msg"]), 500)
    if loc == ("items_from",) and err["type"] == "string_pattern_mismatch":
        msg = (f"{err['input']!r} is not a task address: write NAMESPACE/TASK, as --tasks names "
               "it (a package's tasks: its harness.tasks entry-point name, e.g. mybench/moves "
               "for its tasks/moves.yaml)")
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    return f"{where}: {dotted}: {msg}{by}"


# errors a partial task (a ``_`` base file) may have: keys (and block types) left to includers
_PARTIAL_OK = frozenset({"missing", "union_tag_not_found"})


def _all_errors(where: Path | str, e: ValidationError, sources: KeySources | None,
                partial: bool = False) -> str:
    """Every problem, one line each, in file order (a missing key last; none for a missing key
    that a misspelt key meant), each at the file and line that give its key (``sources``: the
    include tree; None for a spec given as data); ``partial``: without the keys a base file
    may leave out."""

    def order(err: Any) -> tuple[int, int]:
        if sources is None:
            return 0, 0
        _, line, _, place = sources.locate(_file_loc(err))
        return (place, line) if line else (1 << 30, 0)

    errors = sorted(e.errors(), key=order)
    meant: set[tuple[Any, ...]] = set()  # what misspelt keys meant: their "missing" is no news
    for err in errors:
        if err["type"] == "extra_forbidden":
            close, _ = _suggestion(err)
            meant.add((*_file_loc(err)[:-1], close))
    lines = [_format_error(where, dict(err), sources) for err in errors
             if not (partial and err["type"] in _PARTIAL_OK)
             and not (err["type"] == "missing" and _file_loc(err) in meant)]
    return "\n".join(dict.fromkeys(lines))  # a problem reported twice is shown once


def spec_from_data(data: Mapping[str, Any], where: str) -> TaskSpec:
    """Validate a task given as a mapping (e.g. by a plugin) with the same schema as a file;
    errors read ``where: key.path: problem``. Registry checks run later (``check_spec``)."""
    try:
        return TaskSpec.model_validate(dict(data))
    except ValidationError as e:
        raise TaskSpecError(_all_errors(where, e, None)) from None


def load_spec(path: str | Path) -> TaskSpec:
    """Load and validate one task file (with includes). Raises ``TaskSpecError`` listing every
    problem of the file in one pass: the schema's, and (when the file validates without the
    keys the schema refused) the checks against the registries, templates and generator
    parameters; each at the file and line that give its key."""
    p = Path(path)
    if not p.exists():
        raise TaskSpecError(f"{p}: file not found")
    data = resolve_includes(p)
    lines: list[str] = []
    try:
        spec: TaskSpec | None = TaskSpec.model_validate(data)
    except ValidationError as e:
        sources = _sources(p)
        lines = _all_errors(p, e, sources).splitlines()
        spec = _without(data, e)
    if spec is None:
        raise TaskSpecError("\n".join(lines))
    from harness.tasks.checks import check_spec
    from harness.tasks.template_sets import expand_templates

    try:
        spec = expand_templates(spec, p)  # `templates_from:` rows, seen ids for multi_prompt
        check_spec(spec, p)
    except TaskSpecError as e:
        sources = _sources(p)
        lines += [sources.relocate(line) for line in str(e).splitlines()]
    if lines:
        raise TaskSpecError("\n".join(dict.fromkeys(lines)))
    return spec


def placed(path: Path | str, lines: list[str]) -> list[str]:
    """Problem lines ``<path>: key.path: problem`` of the task file ``path``, each put at the
    file and line that give its key (``KeySources.relocate``); as they are where ``path`` is
    not a file (a spec given in code)."""
    p = Path(path)
    try:
        if not p.is_file():
            return lines
        sources = _sources(p)
    except (OSError, ValueError, TaskSpecError):
        return lines
    return [sources.relocate(line) for line in lines]


def _sources(p: Path) -> KeySources:
    return KeySources(p, lambda f: read_yaml(f, with_node=True))


def _without(data: dict[str, Any], e: ValidationError) -> TaskSpec | None:
    """The spec of ``data`` without the keys the schema refused (so that the later checks can
    report their problems too); None when it does not validate without them."""
    import copy

    trimmed = copy.deepcopy(data)
    for err in e.errors():
        loc = _file_loc(err)
        parent: Any = trimmed
        for key in loc[:-1]:
            try:
                parent = parent[key]
            except (KeyError, IndexError, TypeError):
                return None
        if not loc or not isinstance(parent, dict) or loc[-1] not in parent:
            return None  # a missing key, or a problem of a whole block: nothing to leave out
        del parent[loc[-1]]
    try:
        return TaskSpec.model_validate(trimmed)
    except ValidationError:
        return None


def validate_base(path: str | Path) -> int:
    """Validate a ``_``-prefixed base file (with its own includes) as a partial task: every key
    it gives must be known and well formed; keys it leaves out are not required. Returns the
    number of keys it sets; raises ``TaskSpecError`` listing every problem."""
    p = Path(path)
    if not p.exists():
        raise TaskSpecError(f"{p}: file not found")
    data = resolve_includes(p)
    try:
        TaskSpec.model_validate(data)
    except ValidationError as e:
        message = _all_errors(p, e, _sources(p), partial=True)
        if message:
            raise TaskSpecError(message) from None
    return len(data)
