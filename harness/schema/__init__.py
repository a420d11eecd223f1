"""The JSON Schema of a task file, generated from the pydantic models of ``harness.spec.task``.

Two schemas ship in the wheel next to this module (``python -m harness.schema`` rewrites them and
docs/task-files.md; a test checks that the shipped copies equal what the models give, so they
cannot drift):

- ``task.schema.json``: a task file. Without ``include:`` it must be a complete task; with
  ``include:`` every key is optional (the bases fill the rest), but every key given must still
  be known and well typed.
- ``task-base.schema.json``: a ``_``-prefixed base file, a partial task: every key optional.

Editors validate and complete a YAML file against a schema named on its first line (see
docs/task-files.md): ``# yaml-language-server: $schema=<path or URL of task.schema.json>``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
TASK_SCHEMA = "task.schema.json"  # file name of the task-file schema
BASE_SCHEMA = "task-base.schema.json"  # file name of the base-file schema
_PARTIAL = "Partial"  # prefix of the partial copies of the models in ``$defs``

INCLUDE_PROPERTY: dict[str, Any] = {
    "description": "base file(s) merged in first, relative to this file; this file's keys win "
                   "(a block whose `type` differs replaces the base's block whole)",
    "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
}


def shipped_dir() -> Path:
    """The folder of the shipped schema files (this package's folder)."""
    return Path(__file__).resolve().parent


def _model_schema() -> dict[str, Any]:
    from harness.spec.task import TaskSpec

    return TaskSpec.model_json_schema()


def _partial(node: Any) -> Any:
    """A copy of a schema fragment where nothing is required and ``$ref``s point at the partial
    copies; discriminated unions become ``anyOf`` (a partial block may omit its ``type``)."""
    if isinstance(node, list):
        return [_partial(x) for x in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("required", "discriminator"):
            continue
        if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
            out[key] = "#/$defs/" + _PARTIAL + value[len("#/$defs/"):]
        elif key == "oneOf":
            out["anyOf"] = _partial(value)
        elif key in ("default", "const", "enum"):
            out[key] = copy.deepcopy(value)
        else:
            out[key] = _partial(value)
    return out


def _defs(model: dict[str, Any]) -> dict[str, Any]:
    """Complete and partial definitions of every model (the task itself included)."""
    defs = dict(model.get("$defs", {}))
    top = {k: v for k, v in model.items() if k != "$defs"}
    defs["TaskSpec"] = top
    out = dict(sorted(defs.items()))
    for name, schema in sorted(defs.items()):
        out[_PARTIAL + name] = _partial(schema)
    return out


def _requires(node: Any, defs: dict[str, Any]) -> bool:
    """Whether ``node`` (or a block inside it) has required keys."""
    if isinstance(node, list):
        return any(_requires(x, defs) for x in node)
    if not isinstance(node, dict):
        return False
    if node.get("required"):
        return True
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _requires(defs[ref[len("#/$defs/"):]], defs)
    return any(_requires(v, defs) for k, v in node.items() if k != "$defs")


def _required_only(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``node`` that checks only that required keys are there (``$ref``s inlined).

    A complete file is checked twice: against the partial top level (every key given known and
    well formed) and against this copy (nothing missing). The copy can fail only on a missing
    key, so no problem is reported by both (an unknown key used to be reported twice)."""
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _required_only(defs[ref[len("#/$defs/"):]], defs)
    disc = node.get("discriminator")
    if isinstance(disc, dict) and "oneOf" in node:  # tagged union: the member its tag names
        tag = disc["propertyName"]
        return {"required": [tag], "allOf": [
            {"if": {"properties": {tag: {"const": value}}, "required": [tag]},
             "then": _required_only({"$ref": member}, defs)}
            for value, member in disc["mapping"].items()
            if _requires({"$ref": member}, defs)]}
    out: dict[str, Any] = {}
    if node.get("required"):
        out["required"] = list(node["required"])
    props = {k: _required_only(v, defs) for k, v in node.get("properties", {}).items()
             if _requires(v, defs)}
    if props:
        out["properties"] = props
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict) and _requires(node[key], defs):
            out[key] = _required_only(node[key], defs)
    for key in ("anyOf", "oneOf"):  # members with nothing required accept any value here
        members = [_required_only(m, defs) for m in node.get(key, []) if _requires(m, defs)]
        if members:
            out.update(members[0] if len(members) == 1 else {"anyOf": members})
    return out


def _with_include(schema: dict[str, Any]) -> dict[str, Any]:
    """A partial top level that also allows ``include:`` (listed first, as files put it)."""
    out = dict(schema)
    out["properties"] = {"include": INCLUDE_PROPERTY, **schema["properties"]}
    return out


def task_schema(base: bool = False) -> dict[str, Any]:
    """The JSON Schema of a task file (``base``: of a ``_``-prefixed base file)."""
    model = _model_schema()
    defs = _defs(model)
    top = _with_include(defs[_PARTIAL + "TaskSpec"])
    out: dict[str, Any] = {
        "$schema": SCHEMA_DIALECT,
        "title": "genharness task base file" if base else "genharness task file",
        "description": (
            "A base file for `include:` (a partial task; every key optional)." if base else
            "A genharness task. Without `include:` it must be complete; with `include:` the "
            "bases supply the missing keys."),
    }
    out.update({k: v for k, v in top.items() if k not in ("title", "description")})
    if not base:  # a file without include: must be a complete task by itself
        out["if"] = {"not": {"required": ["include"]}}
        out["then"] = _required_only(defs["TaskSpec"], defs)
    out["$defs"] = defs
    return out


def dumps(schema: dict[str, Any]) -> str:
    """The text of a schema file (stable: the same models give the same bytes)."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def shipped_texts() -> dict[str, str]:
    """File name → the text each shipped schema file must have."""
    return {TASK_SCHEMA: dumps(task_schema()), BASE_SCHEMA: dumps(task_schema(base=True))}
