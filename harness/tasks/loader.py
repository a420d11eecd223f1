"""YAML task file → validated ``TaskSpec``.

Resolves ``include:`` (relative paths, deep merge, cycles are an error) and turns every problem
into one line: ``file:line: key.path: problem``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from harness.errors import TaskSpecError
from harness.sources.paths import check_read
from harness.spec.task import TaskSpec
from harness.tasks.origins import KeySources
from harness.tasks.schema_errors import all_errors, without

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


def spec_from_data(data: Mapping[str, Any], where: str) -> TaskSpec:
    """Validate a task given as a mapping (e.g. by a plugin) with the same schema as a file;
    errors read ``where: key.path: problem``. Registry checks run later (``check_spec``)."""
    try:
        return TaskSpec.model_validate(dict(data))
    except ValidationError as e:
        raise TaskSpecError(all_errors(where, e, None)) from None


def load_spec(path: str | Path) -> TaskSpec:
    """Load and validate one task file (with includes). Raises ``TaskSpecError`` listing every
    problem of the file in one pass: the schema's, and (when the file validates without the
    keys the schema refused) the checks against the registries, templates and generator
    parameters; each at the file and line that give its key."""
    spec, lines = load_checked(path)
    if lines or spec is None:
        raise TaskSpecError("\n".join(lines))
    return spec


def load_checked(path: str | Path) -> tuple[TaskSpec | None, list[str]]:
    """``load_spec`` without raising: the spec as far as it could be read (without the keys the
    schema refused; None when even that fails) and every problem found, one line each, so that
    ``harness tasks validate`` can go on to check the task's records with it."""
    p = Path(path)
    if not p.exists():
        return None, [f"{p}: file not found"]
    data = resolve_includes(p)
    lines: list[str] = []
    try:
        spec: TaskSpec | None = TaskSpec.model_validate(data)
    except ValidationError as e:
        sources = _sources(p)
        lines = all_errors(p, e, sources).splitlines()
        spec = without(data, e)
    if spec is None:
        return None, lines
    from harness.tasks.checks import check_spec
    from harness.tasks.template_sets import expand_templates

    try:
        spec = expand_templates(spec, p)  # `templates_from:` rows, seen ids for multi_prompt
        check_spec(spec, p)
    except TaskSpecError as e:
        sources = _sources(p)
        lines += [sources.relocate(line) for line in str(e).splitlines()]
    return spec, list(dict.fromkeys(lines))


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
        message = all_errors(p, e, _sources(p), partial=True)
        if message:
            raise TaskSpecError(message) from None
    return len(data)
