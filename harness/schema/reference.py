"""docs/task-files.md: the task-file reference, generated from the same JSON Schema as
``harness tasks schema`` (so from the pydantic models): one table per block, every key with its
type and allowed values, its default and its one-line doc."""

from __future__ import annotations

import json
from typing import Any

INTRO = """\
# Task files

<!-- Generated from harness/spec/task.py by `python -m harness.schema`; do not edit by hand.
     A test fails when this file and the models disagree. -->

A task is one YAML file, `tasks/<suite>/<name>.yaml` (or in a plugin package, or in an
`--include-path` folder). This page lists every key a task file may hold, generated from the
models the harness validates with, so it is always complete and current. Unknown keys are
errors ("did you mean" names the closest known key), and `harness tasks validate FILE|FOLDER`
reports every problem of every file at once.

## Editor support: validation and completion as you type

The JSON Schema of a task file ships inside the harness (`harness/schema/task.schema.json`) and
`harness tasks schema` prints it. Editors that use the YAML language server (VS Code with the
Red Hat YAML extension, Neovim, Helix, JetBrains IDEs, Zed, …) validate and complete a task
file, with each key's doc, allowed values and default, when its first line names the schema:

```yaml
# yaml-language-server: $schema=../task.schema.json
name: digitsum
```

The path is relative to the YAML file (an absolute path or an `https://` URL also works). Write
the schema next to your tasks once, and again after upgrading the harness:

```
harness tasks schema --output task.schema.json          # task files
harness tasks schema --base --output task-base.schema.json   # `_` base files (every key optional)
```

A file with `include:` may leave out whatever its bases provide; one without must be complete.
`_`-prefixed base files are partial tasks: point them at `task-base.schema.json`. Rules the
schema cannot express (a generator or metric that must exist, template syntax, exactly one of
`values`/`edges`/`quantiles`) are checked by `harness tasks validate`.

## `include:` and base files

`include: _base.yaml` (or a list of files, merged in order) merges base files in first; this
file's keys win. Mappings merge key by key, lists and scalars are replaced. A block with a
`type` (`source`, `output`, `fewshot.source`) whose `type` differs from the base's replaces the
base's block whole: a multiple-choice task can include a generation base. Files whose name
starts with `_` are bases, never tasks; `harness tasks validate` checks them as partial tasks.

A task can also include another task (a file without `_`): the included file stays a task of
its own, and the including file is a variant that changes only what it names. Its address comes
from its own file name; give it its own `name:` too (otherwise it keeps the included task's),
and note that it inherits `suites:` (`suites: []` keeps it out of the included task's suites):

```yaml
# tasks/mybench/digitsum_long.yaml: digitsum with longer lists and more exemplars
include: digitsum.yaml
name: digitsum_long
buckets:
  values: [2, 4, 8, 16, 32]   # a list replaces the included one whole
roles:
  id_max: 4
fewshot:
  k: 4                        # a mapping merges key by key: fewshot.shared etc. are kept
```

A variant draws items of its own: items are seeded by the task's address, so
`digitsum_long` above and `digitsum` evaluate different items even where their buckets agree.
To evaluate the included task's items instead, item for item (and the same exemplars), name it
in `items_from`; a variant that changes only the template then evaluates exactly the same
questions, and `harness compare` pairs a run of one with a run of the other item by item:

```yaml
# tasks/mybench/digitsum_steps.yaml: digitsum's items, asked step by step
include: digitsum.yaml
name: digitsum_steps
items_from: mybench/digitsum  # the address of the task whose items it evaluates
templates:
  - {id: steps, prompt: "Add the digits one at a time: {{ digits }}\\nSum:"}
```

The variant's items are still made from its own `source`, `buckets` and (for files and
datasets) `fields.id`, `fields.difficulty` and `fields.difficulty_pattern`, under the named
task's item ids and seeds: these must be the named task's, or its items would be other
questions that `harness compare` could pair as the same ones. `harness tasks validate` and
`harness eval` refuse such a variant, in one line at its `items_from` key (`digitsum_steps.yaml:4:
items_from: buckets differ from mybench/digitsum's (buckets.values [...] here, [...] in
mybench/digitsum), so its items would not be mybench/digitsum's, though they carry its item
ids; ...`), and likewise a name that is no task, or a task whose own `items_from` names a
third (name that one). Everything else may differ: templates, output, scoring, `fewshot`
(other exemplars for the same items; the same settings give the same ones) and
`source.per_bucket` (item j of a bucket is the same item whatever the count; runs pair where
they hold the same items, e.g. both with `--limit-per-bucket`).

An `include:` path is relative to the file that names it. A problem in a key that an included
file gives is shown at that file's path and line, naming the file that includes it
(`moves.yaml:36: fewshots: unknown key (did you mean 'fewshot'?) (included by
moves_stepwise.yaml)`), once however many files include it (`(included by a.yaml,
b.yaml)`); every problem of a file is shown in one pass (a misspelt key does not hide a
template variable that the generator does not make), each at the line of its key, whether the
schema, a registry, the generator or its first items found it.

## Building blocks

Names that task files use come from registries, each listed with its origin (built-in or plugin
and version), parameters and the fields it produces (`--json` for machines):

```
harness generators list     # source.name, the fields each generator makes (for templates)
harness metrics list        # scoring.metric, scoring.metrics
harness extractors list     # scoring.extract.kind
harness analyses list       # analyses[].name
harness strategies list     # the keys of strategies: (and harness eval --strategy)
harness gaps list           # gaps.report
```

## Several metrics

A task scores its answers with one metric (`scoring.metric`), or with several: list them in
`scoring.metrics`, and every sample is scored by each, from the same extracted answer:

```yaml
scoring:
  extract: {kind: last_number}
  metrics: [numeric_match, within_1pct]   # the first is the primary; then a plugin's metric
```

The first is the **primary** metric: `scoring.metric` is set to it, and the sample's `score`,
the gaps, baselines and floors, the eval table's main table and the board's scores are its. Every
other metric is reported per bucket and per role, with the same 95% intervals, under the main
table of `harness eval`, in results.json (each template report's `metrics`) and on the board's
task page; each sample record carries its scores (`scores: {name: value}`), so `harness
rescore` and anyone reading the samples file recompute them. `scoring.metric` may be given
with `scoring.metrics` only when it is the first of them (a variant including a task that
gives `scoring.metric` gives `metric` again, as the first of its `metrics`); a name given twice
is refused, and every name must be registered, as for `scoring.metric`. Multiple-choice tasks
are scored by their most likely choice, not by a metric, and refuse `scoring.metrics`. A task
with one metric keeps its files as before: no `metrics` or `scores` keys.
"""


def _anchor(name: str) -> str:
    return name.lower()


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "\\n").replace("<", "&lt;")


def _type(node: dict[str, Any]) -> str:
    """A property's type and allowed values, in words (links to nested blocks)."""
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{_anchor(name)})"
    for union in ("oneOf", "anyOf"):
        if union in node:
            parts = [_type(x) for x in node[union] if x.get("type") != "null"]
            nullable = any(x.get("type") == "null" for x in node[union])
            return " or ".join(parts) + (" or null" if nullable else "")
    if "const" in node:
        return f"`{json.dumps(node['const'])}`"
    if "enum" in node:
        return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in node["enum"])
    kind = node.get("type")
    if kind == "array":
        return "list of " + (_type(node["items"]) if "items" in node else "anything")
    if kind == "object":
        extra = node.get("additionalProperties")
        return f"mapping of {_type(extra)}" if isinstance(extra, dict) and extra else "mapping"
    names = {"string": "string", "integer": "integer", "number": "number",
             "boolean": "boolean"}
    text = names.get(str(kind), str(kind))
    bounds = [f"≥ {node['minimum']}" if "minimum" in node else "",
              f"> {node['exclusiveMinimum']}" if "exclusiveMinimum" in node else "",
              f"≤ {node['maximum']}" if "maximum" in node else "",
              f"at least {node['minItems']} item(s)" if "minItems" in node else ""]
    shown = ", ".join(b for b in bounds if b)
    return f"{text} ({shown})" if shown else text


def _default(name: str, node: dict[str, Any], required: set[str]) -> str:
    if name in required:
        return "**required**"
    if "default" not in node:
        return ""
    value = node["default"]
    if isinstance(value, dict) and value and "$ref" in node:
        return "each key's default"
    return f"`{json.dumps(value, ensure_ascii=False)}`"


def _refs(node: Any) -> list[str]:
    """Model names referenced under ``node``, in order of appearance."""
    if isinstance(node, list):
        return [r for x in node for r in _refs(x)]
    if not isinstance(node, dict):
        return []
    out: list[str] = []
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str):
            out.append(value.rsplit("/", 1)[-1])
        elif key not in ("default", "discriminator"):
            out.extend(_refs(value))
    return out


def _walk(defs: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """Models in the order a reader meets them, each with the key paths that lead to it."""
    order: list[str] = ["TaskSpec"]
    paths: dict[str, list[str]] = {"TaskSpec": ["(top level)"]}
    i = 0
    while i < len(order):
        name = order[i]
        i += 1
        for key, prop in defs[name].get("properties", {}).items():
            for ref in _refs(prop):
                for prefix in paths[name]:
                    path = key if prefix == "(top level)" else f"{prefix}.{key}"
                    if path not in paths.setdefault(ref, []):
                        paths[ref].append(path)
                if ref not in order:
                    order.append(ref)
    return [(n, paths[n]) for n in order]


def reference_markdown() -> str:
    """The text of docs/task-files.md."""
    from harness.schema import task_schema

    defs = task_schema()["$defs"]
    lines = [INTRO.rstrip("\n"), "", "## Keys", ""]
    for name, paths in _walk(defs):
        model = defs[name]
        lines.append(f"### {name}")
        lines.append("")
        where = ", ".join(f"`{p}`" if p != "(top level)" else p for p in paths)
        lines.append(f"{model.get('description', '')}  ")
        lines.append(f"Used at: {where}.")
        lines.append("")
        lines.append("| key | type and allowed values | default | meaning |")
        lines.append("|---|---|---|---|")
        required = set(model.get("required", []))
        props = dict(model.get("properties", {}))
        if name == "TaskSpec":
            from harness.schema import INCLUDE_PROPERTY

            props = {"include": INCLUDE_PROPERTY, **props}
        for key, prop in props.items():
            lines.append(f"| `{key}` | {_cell(_type(prop))} | "
                         f"{_cell(_default(key, prop, required))} | "
                         f"{_cell(prop.get('description', ''))} |")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
