"""``harness generators|metrics|analyses|gaps|strategies|extractors list``: the building blocks
a task file (or ``--strategy``) names, each with its origin (built-in, or plugin and version),
parameters, the fields a generator makes, and a one-line description; ``--json`` for machines.

Listing imports the plugins of the group (like ``harness tasks list``); one that fails to import
is a row with its error (and a warning), never a crash.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import textwrap
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Annotated, Any

import typer

from harness import plugins
from harness.errors import HarnessError
from harness.registry import Registry

JsonOpt = Annotated[bool, typer.Option("--json", help="One JSON array of objects.")]


@dataclass(frozen=True)
class Param:
    """One parameter of a building block."""

    name: str  # the key in the task file (source.params / analyses[].params)
    default: str | None  # the default, as Python writes it; None: required


@dataclass(frozen=True)
class Block:
    """One row of a listing."""

    name: str  # the name task files use
    origin: str  # "builtin", or "plugin:<dist>==<version>"
    status: str  # "ok", "ignored: ..." (a shadowing plugin) or "error: ..."
    description: str  # first line of the docstring
    params: list[Param] = field(default_factory=list)  # parameters a task file may set
    fields: list[str] = field(default_factory=list)  # generators: record fields produced
    difficulty: str = ""  # generators: what the difficulty argument means


_LITERAL = re.compile(r"``(.+?)``")  # reStructuredText inline literal in docstrings


def _doc(fn: object) -> str:
    """The first paragraph of ``fn``'s docstring on one line, as plain text (inline literals
    lose their double backticks: a listing is not rendered)."""
    doc = inspect.getdoc(fn) or ""
    return _LITERAL.sub(r"\1", " ".join(doc.split("\n\n", 1)[0].split()))


def signature_params(fn: Callable[..., Any], skip: int,
                     hidden: tuple[str, ...] = ("count_tokens",)) -> list[Param]:
    """Parameters of ``fn`` after its first ``skip`` positional ones (``**kw`` left out)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    out = []
    for i, p in enumerate(sig.parameters.values()):
        if i < skip or p.name in hidden or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        out.append(Param(p.name, None if p.default is p.empty else repr(p.default)))
    return out


def params_read(fn: Callable[..., Any], arg: str = "params") -> list[Param]:
    """Keys an analysis reads from its ``params`` mapping (``params.get("k", default)`` or
    ``params["k"]``), found in its source; empty when the source is not available."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return []
    found: dict[str, str | None] = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get" and isinstance(node.func.value, ast.Name)
                and node.func.value.id == arg and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            default = ast.unparse(node.args[1]) if len(node.args) > 1 else "None"
            found.setdefault(node.args[0].value, default)
        elif (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
              and node.value.id == arg and isinstance(node.slice, ast.Constant)
              and isinstance(node.slice.value, str)):
            found.setdefault(node.slice.value, None)
    return [Param(k, v) for k, v in found.items()]


def _blocks(reg: Registry[Any], describe: Callable[[str, Any], Block]) -> list[Block]:
    """Every built-in and plugin item of ``reg``: plugins imported, failures and shadowing
    plugins listed as rows of their own."""
    reg.load_builtins()
    rows = [describe(name, reg.items[name]) for name in sorted(reg.items)
            if reg.is_builtin(name)]
    for p in reg.entry_points():
        if reg.is_builtin(p.name):
            rows.append(Block(p.name, p.origin, f"ignored: the built-in {reg.kind} "
                              f"{p.name!r} is used ({p.value})", ""))
            continue
        try:
            item = reg.get(p.name)
        except HarnessError as e:
            message = plugins.failed_message(p) if plugins.failure(p) else str(e)
            plugins.warn(message)  # the message, once; the row points at it
            rows.append(Block(p.name, p.origin, f"error: {message}", ""))
            continue
        rows.append(describe(p.name, item))
    listed = {r.name for r in rows}
    rows += [describe(n, reg.items[n]) for n in sorted(reg.items) if n not in listed]
    return sorted(rows, key=lambda r: (r.name, r.origin != "builtin"))


def _short(text: str, most: int = 24) -> str:
    """A long default cut for the table (``--json`` has it whole)."""
    return text if len(text) <= most else text[:most - 1] + "…"


def _why_not(status: str) -> str:
    """The table cell of a row that is not usable: a failed plugin points at its warning line
    (the message is printed once); an ignored one says what is used instead."""
    if status.startswith("error: "):
        return "error: failed to load (see the warning above)"
    return status


def _show(rows: list[Block], as_json: bool, kind: str, columns: list[str]) -> None:
    if as_json:
        typer.echo(json.dumps([asdict(r) for r in rows], indent=2, ensure_ascii=False))
        return
    table = [columns]
    for r in rows:
        cells = {"name": r.name, "origin": r.origin.removeprefix("plugin:"),
                 "params": ", ".join(p.name if p.default is None else
                                     f"{p.name}={_short(p.default)}" for p in r.params) or "-",
                 "fields": ", ".join(r.fields) or "-", "difficulty": r.difficulty or "-",
                 "description": r.description}
        row = [cells[c] for c in columns]
        if r.status != "ok":  # the same cell in every listing: the last column says why
            row[2:] = ["-"] * (len(row) - 3) + [_why_not(r.status)]
        table.append(row)
    widths = [max(len(row[i]) for row in table) for i in range(len(columns) - 1)]
    lines = [f"{len(rows)} {kind}"]
    for k, row in enumerate(table):
        lines.append("  ".join([*(c.ljust(w) for c, w in zip(row, widths, strict=False)),
                                row[-1]]).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in [*widths, len(row[-1])]))
    typer.echo("\n".join(lines))


# --- generators ------------------------------------------------------------------------------

generators_app = typer.Typer(no_args_is_help=True, help="Generators (task files: source.name).")


def generator_blocks() -> list[Block]:
    """Every generator, built-in and plugin."""
    from harness.generators.registry import GENERATORS

    def describe(name: str, info: Any) -> Block:
        return Block(name, GENERATORS.origin(name), "ok", _doc(info.fn),
                     signature_params(info.fn, skip=2), list(info.fields), info.difficulty)

    return _blocks(GENERATORS, describe)


@generators_app.command("list")
def list_generators(as_json: JsonOpt = False) -> None:
    """Name, origin, parameters (source.params), the fields each record has (for templates and
    fields:), and what the difficulty means."""
    _show(generator_blocks(), as_json, "generators",
          ["name", "origin", "fields", "params", "difficulty"])


# --- metrics ---------------------------------------------------------------------------------

metrics_app = typer.Typer(no_args_is_help=True, help="Metrics (task files: scoring.metric).")


def metric_blocks() -> list[Block]:
    """Every metric, built-in and plugin."""
    from harness.answers.metrics import METRICS

    def describe(name: str, fn: Any) -> Block:
        return Block(name, METRICS.origin(name), "ok", _doc(fn), signature_params(fn, skip=2))

    return _blocks(METRICS, describe)


@metrics_app.command("list")
def list_metrics(as_json: JsonOpt = False) -> None:
    """Name, origin and what each metric scores: (extracted, target) -> score in [0, 1]."""
    _show(metric_blocks(), as_json, "metrics", ["name", "origin", "description"])


# --- analyses --------------------------------------------------------------------------------

analyses_app = typer.Typer(no_args_is_help=True, help="Task-level analyses (analyses[].name).")


def analysis_blocks() -> list[Block]:
    """Every analysis, built-in and plugin."""
    from harness.analyses.registry import ANALYSES

    def describe(name: str, a: Any) -> Block:
        model = a.params
        params = (params_read(a.fn) if model is None else
                  [Param(k, None if f.is_required() else repr(f.default))
                   for k, f in model.model_fields.items()])
        return Block(name, ANALYSES.origin(name), "ok", _doc(a.fn), params)

    return _blocks(ANALYSES, describe)


@analyses_app.command("list")
def list_analyses(as_json: JsonOpt = False) -> None:
    """Name, origin, the params each analysis reads (analyses[].params) and what it reports."""
    _show(analysis_blocks(), as_json, "analyses", ["name", "origin", "params", "description"])


# --- strategies and extractors ----------------------------------------------------------------

strategies_app = typer.Typer(no_args_is_help=True,
                             help="Prompting strategies (harness eval --strategy).")
extractors_app = typer.Typer(no_args_is_help=True,
                             help="Answer extractors (task files: scoring.extract.kind).")


def strategy_blocks() -> list[Block]:
    """Every strategy, built-in and plugin."""
    from harness.strategies.registry import STRATEGIES

    return _blocks(STRATEGIES, lambda name, s: Block(name, STRATEGIES.origin(name), "ok",
                                                     _doc(getattr(s, "fn", s))))


def extractor_blocks() -> list[Block]:
    """Every extractor, built-in and plugin."""
    from harness.answers.extract import EXTRACTORS

    return _blocks(EXTRACTORS, lambda name, e: Block(
        name, EXTRACTORS.origin(name), "ok", _doc(e.fn),
        [Param("pattern", None)] if e.needs_pattern else []))


@strategies_app.command("list")
def list_strategies(as_json: JsonOpt = False) -> None:
    """Name, origin and what each strategy does (params: the task file's strategies.<name>)."""
    _show(strategy_blocks(), as_json, "strategies", ["name", "origin", "description"])


@extractors_app.command("list")
def list_extractors(as_json: JsonOpt = False) -> None:
    """Name, origin, whether it needs scoring.extract.pattern, and what it takes out."""
    _show(extractor_blocks(), as_json, "extractors", ["name", "origin", "params", "description"])


# --- gaps ------------------------------------------------------------------------------------

gaps_app = typer.Typer(no_args_is_help=True, help="Generalization gaps (task files: gaps.report).")


def gap_blocks() -> list[Block]:
    """Every gap, built-in and plugin."""
    from harness.gaps.registry import GAPS

    def describe(name: str, g: Any) -> Block:
        return Block(name, GAPS.origin(name), "ok", _doc(g.fn))

    return _blocks(GAPS, describe)


@gaps_app.command("list")
def list_gaps(as_json: JsonOpt = False) -> None:
    """Name, origin and what each gap reports (its parameters are the task's gaps: keys)."""
    _show(gap_blocks(), as_json, "gaps", ["name", "origin", "description"])


__all__ = ["Block", "Param", "analyses_app", "extractors_app", "gaps_app", "generators_app",
           "metrics_app", "strategies_app"]
