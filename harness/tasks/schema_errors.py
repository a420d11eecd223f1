"""A task file's schema errors as one line each (``file:line: key.path: problem``), and the
spec read without the keys the schema refused, so that the later checks still run."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from harness.spec.sources import SourceSpec
from harness.spec.task import OutputSpec, TaskSpec, type_tags
from harness.tasks.origins import KeySources


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


def all_errors(where: Path | str, e: ValidationError, sources: KeySources | None,
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


def without(data: dict[str, Any], e: ValidationError) -> TaskSpec | None:
    """The spec of ``data`` without the keys the schema refused (so that the later checks can
    report their problems too): an unknown key is left out, or read as the key it misspells
    when that one is missing (``descriptionx`` for a missing ``description``); None when it
    does not validate even so."""
    import copy

    trimmed = copy.deepcopy(data)
    meant = set()
    for err in e.errors():
        if err["type"] == "extra_forbidden":
            close, _ = _suggestion(err)
            meant.add((*_file_loc(err)[:-1], close))
    for err in e.errors():
        loc = _file_loc(err)
        if err["type"] == "missing" and loc in meant:
            continue  # the misspelt key stands in for it
        parent: Any = trimmed
        for key in loc[:-1]:
            try:
                parent = parent[key]
            except (KeyError, IndexError, TypeError):
                return None
        if not loc or not isinstance(parent, dict) or loc[-1] not in parent:
            return None  # a missing key, or a problem of a whole block: nothing to leave out
        value = parent.pop(loc[-1])
        close = _suggestion(err)[0] if err["type"] == "extra_forbidden" else None
        if close is not None and (*loc[:-1], close) in meant and close not in parent:
            parent[close] = value
    try:
        return TaskSpec.model_validate(trimmed)
    except ValidationError:
        return None
