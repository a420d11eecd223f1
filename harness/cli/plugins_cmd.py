"""``harness plugins list``: installed plugin packages, what each provides, and their state."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
from typing import TYPE_CHECKING, Annotated, Any

import typer

from harness import plugins
from harness.errors import HarnessError
from harness.plugins import Plugin
from harness.registry import Registry

if TYPE_CHECKING:
    from harness.tasks.refs import TaskRef

app = typer.Typer(no_args_is_help=True, help="Installed plugin packages (entry points).")


def _shown_name(p: Plugin) -> str:
    return f"{p.name}:" if p.group == plugins.MODELS else p.name  # model backends are prefixes


# entry-point group → the registry its names join ("module:attribute", imported when needed);
# tasks are checked through the task index instead
_REGISTRIES = {
    plugins.GENERATORS: "harness.generators.registry:GENERATORS",
    plugins.METRICS: "harness.answers.metrics:METRICS",
    plugins.ANALYSES: "harness.analyses.registry:ANALYSES",
    plugins.GAPS: "harness.gaps.registry:GAPS",
    plugins.MODELS: "harness.models.backends:BACKENDS",
    plugins.STRATEGIES: "harness.strategies.registry:STRATEGIES",
    plugins.EXTRACTORS: "harness.answers.extract:EXTRACTORS",
}


def _registry(group: str) -> Registry[Any] | None:
    """The registry an entry point of ``group`` adds to (None for task packages)."""
    if group not in _REGISTRIES:
        return None
    module, _, attr = _REGISTRIES[group].partition(":")
    reg: Registry[Any] = getattr(importlib.import_module(module), attr)
    return reg


def _others(p: Plugin, found: list[Plugin]) -> str:
    return " and ".join(f"{o.dist}=={o.version} ({o.value})" for o in found
                        if o.group == p.group and o.name == p.name and o.dist != p.dist)


def _check(p: Plugin, found: list[Plugin], task_clashes: dict[str, list[str]]) -> str:
    """Load one entry point and report what would go wrong using it: an import failure, a name
    that a built-in has (the plugin's would be ignored) or that another plugin also provides;
    task packages also list and validate their tasks."""
    reg = _registry(p.group)
    if reg is not None:
        if not reg.builtin_names:  # built-ins given by name are known without importing them
            reg.load_builtins()
        if reg.is_builtin(p.name):
            return (f"error: shadowed: the built-in {reg.kind} {p.name!r} is used instead; "
                    "rename it")
    if p.group != plugins.TASKS:
        other = _others(p, found)
        if other:
            return f"error: clash: {p.name!r} is also provided by {other}"
        obj: object = None
        with contextlib.suppress(HarnessError):  # the failure is kept for status()
            obj = plugins.load(p)
        others = reg.other_names(p.name, obj) if reg is not None and obj is not None else []
        if others and reg is not None:
            return f"error: misnamed: {reg.misnamed_message(p.name, p, others)}"
        return plugins.status(p)
    from harness.tasks.providers import from_plugin

    try:
        refs = from_plugin(p).refs()
    except HarnessError as e:
        return f"error: {e}"
    problems = _task_problems(p, refs, found)
    if problems:
        return f"error: {problems}"
    clashes, ambiguous = [], []
    for r in refs:
        others = [s for s in task_clashes.get(r.address, []) if s != f"{r.origin} ({r.where})"]
        if others:
            clashes.append(f"{r.address} is also defined by {' and '.join(others)}")
        same_name = sorted({a for a in task_clashes if a != r.address
                            and a.rsplit("/", 1)[-1] == r.name})
        if same_name:
            ambiguous.append(f"{r.address} shares its name with {', '.join(same_name)}, so "
                             f"--tasks {r.name} becomes ambiguous for everyone")
    if clashes or ambiguous:
        return "error: " + "; ".join(
            [f"clash: {c}" for c in clashes] + [f"ambiguous: {a} (rename it)" for a in ambiguous])
    return f"ok ({len(refs)} task{'s' if len(refs) != 1 else ''})"


def _task_problems(p: Plugin, refs: list[TaskRef], found: list[Plugin]) -> str:
    """The first problem of the tasks ``refs`` of the task plugin ``p`` that ``harness tasks
    validate`` and ``eval`` would refuse (the same checks: ``check_indexed``), and how many
    more; "" when there is none. The task an ``items_from`` names is looked for among the
    plugin's own tasks, the built-in ones and other installed plugins'."""
    from harness.tasks.index import TaskIndex
    from harness.tasks.providers import from_plugin
    from harness.tasks.task_checks import check_indexed

    index = TaskIndex.build(providers=[from_plugin(q) for q in found
                                       if q.group == plugins.TASKS and q.name != p.name])
    for ref in refs:
        index.refs.setdefault(ref.address, ref)  # a built-in's address: reported as a clash
    lines: list[str] = []
    for ref in refs:
        try:
            check_indexed(index, ref, index.spec(ref), note=" (not a task of this package, a "
                          "built-in or another installed package's task)")
        except HarnessError as e:
            # a problem of a file that several tasks include is one problem
            lines.extend(x for x in (str(e).splitlines() or [type(e).__name__])
                         if x.split(" (included by", 1)[0] not in
                         {y.split(" (included by", 1)[0] for y in lines})
    if len(lines) <= 1:
        return "".join(lines)
    files = [r.path for r in refs if r.spec is None]
    folder = f" (harness tasks validate {os.path.commonpath(files)} shows them all)" \
        if len(files) == len(refs) else ""
    return f"{lines[0]}; and {len(lines) - 1} more problem(s){folder}"


def scripted_warning(found: list[Plugin]) -> None:
    """Warn of a model backend registered under the plain name ``scripted``: every package
    that does so clashes with every other (docs/writing-a-task-package.md)."""
    for p in found:
        if p.group == plugins.MODELS and p.name == "scripted":
            ns = next((q.name for q in found if q.dist == p.dist and q.group == plugins.TASKS),
                      p.dist)
            plugins.warn(
                f"{p.dist} registers the model backend under the plain name 'scripted' "
                f"({p.group}:{p.name} = {p.value}), which any package may take, so two such "
                f"packages clash: register it under your package's own name, e.g. "
                f'{ns}-scripted = "{p.value}"')


def _task_sources(found: list[Plugin]) -> dict[str, list[str]]:
    """Task address → every source defining it (built-ins and each task plugin that loads)."""
    from harness.tasks.index import TaskIndex
    from harness.tasks.providers import from_plugin

    out: dict[str, list[str]] = {}
    for ref in TaskIndex.build([], providers=[]).refs.values():
        out.setdefault(ref.address, []).append(f"{ref.origin} ({ref.where})")
    for p in found:
        if p.group == plugins.TASKS:
            with contextlib.suppress(HarnessError):  # reported by _check
                for ref in from_plugin(p).refs():
                    out.setdefault(ref.address, []).append(f"{ref.origin} ({ref.where})")
    return out


@app.command("list")
def list_plugins(
    check: Annotated[bool, typer.Option(
        "--check", help="Import every plugin (and validate task packages); exit 1 on errors.")
    ] = False,
    as_json: Annotated[bool, typer.Option(
        "--json", help="One JSON array of objects, one per entry point.")] = False,
) -> None:
    """List installed plugins without importing them (--check: import each and report; names
    that clash with a built-in or another plugin are errors)."""
    found = plugins.discover_all()
    scripted_warning(found)
    clashes = _task_sources(found) if check else {}
    states = {p: _check(p, found, clashes) if check else plugins.status(p) for p in found}
    failed = any(s.startswith("error") for s in states.values())
    if as_json:
        typer.echo(json.dumps([
            {"distribution": p.dist, "version": p.version, "group": p.group,
             "name": _shown_name(p), "value": p.value, "status": states[p]} for p in found],
            indent=2, ensure_ascii=False))
    elif not found:
        typer.echo("no plugins installed (entry-point groups: " + ", ".join(plugins.GROUPS) + ")")
    else:
        typer.echo(_table(found, states))
    if check and failed:
        raise typer.Exit(1)


def _table(found: list[Plugin], states: dict[Plugin, str]) -> str:
    """One line per (distribution, group), names and status whole at any width (a pipe too)."""
    from harness.cli.tasks_cmd import plain_table

    rows: dict[tuple[str, str, str], list[Plugin]] = {}
    for p in found:
        rows.setdefault((p.dist, p.version, p.group), []).append(p)
    table = [["distribution", "version", "group", "names", "status"]]
    for (dist, version, group), eps in sorted(rows.items()):
        got = [states[p] for p in eps]
        status = got[0] if len(set(got)) == 1 else "; ".join(
            f"{_shown_name(p)} {s}" for p, s in zip(eps, got, strict=True))
        table.append([dist, version, group.removeprefix("harness."),
                      ", ".join(_shown_name(p) for p in eps), status])
    return plain_table(f"{len({p.dist for p in found})} plugin package(s)", table)
