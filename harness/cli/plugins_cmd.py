"""``harness plugins list``: installed plugin packages, what each provides, and their state."""

from __future__ import annotations

import contextlib
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from harness import plugins
from harness.errors import HarnessError
from harness.plugins import Plugin

app = typer.Typer(no_args_is_help=True, help="Installed plugin packages (entry points).")

def _shown_name(p: Plugin) -> str:
    return f"{p.name}:" if p.group == plugins.MODELS else p.name  # model backends are prefixes


def _check(p: Plugin) -> str:
    """Load one entry point; task packages also list and validate their tasks."""
    if p.group != plugins.TASKS:
        with contextlib.suppress(HarnessError):  # the failure is kept for status()
            plugins.load(p)
        return plugins.status(p)
    from harness.tasks.providers import from_plugin
    from harness.tasks.registry import TaskIndex

    try:
        refs = from_plugin(p).refs()
        index = TaskIndex({}, [])
        for ref in refs:
            index.spec(ref)
    except HarnessError as e:
        return f"error: {e}"
    return f"ok ({len(refs)} task{'s' if len(refs) != 1 else ''})"


@app.command("list")
def list_plugins(
    check: Annotated[bool, typer.Option(
        "--check", help="Import every plugin (and validate task packages); exit 1 on errors.")
    ] = False,
) -> None:
    """List installed plugins without importing them (--check: import each and report)."""
    found = plugins.discover_all()
    if not found:
        typer.echo("no plugins installed (entry-point groups: " + ", ".join(plugins.GROUPS) + ")")
        return
    rows: dict[tuple[str, str, str], list[Plugin]] = {}
    for p in found:
        rows.setdefault((p.dist, p.version, p.group), []).append(p)
    table = Table(title=f"{len({p.dist for p in found})} plugin package(s)")
    table.add_column("distribution", no_wrap=True)
    table.add_column("version", no_wrap=True)
    table.add_column("group", no_wrap=True)  # entry-point group harness.<group>
    table.add_column("names", overflow="fold")
    table.add_column("status", overflow="fold")
    failed = False
    for (dist, version, group), eps in sorted(rows.items()):
        states = [_check(p) if check else plugins.status(p) for p in eps]
        failed = failed or any(s.startswith("error") for s in states)
        status = states[0] if len(set(states)) == 1 else "; ".join(
            f"{_shown_name(p)} {s}" for p, s in zip(eps, states, strict=True))
        table.add_row(escape(dist), escape(version), group.removeprefix("harness."),
                      escape(", ".join(_shown_name(p) for p in eps)), escape(status))
    Console().print(table)
    if check and failed:
        raise typer.Exit(1)
