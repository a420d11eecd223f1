"""``harness tasks list|show|sample|validate``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.errors import HarnessError

app = typer.Typer(no_args_is_help=True, help="List, inspect, preview and validate tasks.")
IncludeOpt = Annotated[list[Path] | None,  # noqa: UP007
                      typer.Option("--include-path", help="Extra task folder (repeatable).")]


def _index(include: list[Path] | None):  # type: ignore[no-untyped-def]
    from harness.tasks.registry import TaskIndex

    return TaskIndex.build(include or [])


@app.command("list")
def list_tasks(include_path: IncludeOpt = None) -> None:
    """List every task with its suites, difficulty variable and ID/OOD buckets."""
    index = _index(include_path)
    refs = index.all_refs()  # imports every task plugin; a broken one is a warning
    ordered = sorted(refs.values(), key=lambda r: r.address)
    # cached per file (harness.tasks.summaries); an invalid plugin task is a warning, not an error
    summaries = index.summaries(ordered)
    rows = [["task", "suites", "difficulty", "ID buckets", "OOD buckets", "output", "templates",
             "from"]]
    for ref in ordered:
        s = summaries.get(ref.address)
        if s is not None:
            rows.append([ref.address, ",".join(sorted({ref.folder, *s.suites} - {""})),
                         s.difficulty, _span(s.id_buckets), _span(s.ood_buckets), s.output,
                         str(s.templates), _from(ref.origin)])
    typer.echo(_plain_table(f"{len(rows) - 1} tasks", rows))


def _plain_table(title: str, rows: list[list[str]]) -> str:
    """Aligned columns, one line per row (fast for thousands of rows; easy to grep)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [title]
    for k, row in enumerate(rows):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _from(origin: str) -> str:
    if origin.startswith("plugin:"):
        return origin[len("plugin:"):]
    return origin.split(":", 1)[0]  # "builtin" or "include"


def _span(labels: list[str]) -> str:
    if not labels:
        return "-"
    return labels[0] if len(labels) == 1 else f"{labels[0]} … {labels[-1]} ({len(labels)})"


@app.command("show")
def show(task: str, include_path: IncludeOpt = None) -> None:
    """Show a task's resolved spec and its buckets with roles."""
    import yaml
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from harness.tasks.buckets import build_buckets

    index = _index(include_path)
    ref = index.resolve([task])[0]
    spec = index.spec(ref)
    console = Console()
    console.print(f"[bold]{escape(ref.address)}[/bold]  "
                  f"({escape(ref.where)}; {escape(ref.origin)})")
    console.print(yaml.safe_dump(spec.model_dump(mode="json", exclude_defaults=False),
                                 sort_keys=False, allow_unicode=True), markup=False)
    table = Table(title=f"buckets over {spec.difficulty_name}")
    for col in ("bucket", "from", "to", "role"):
        table.add_column(col)
    for b in build_buckets(spec.buckets, spec.roles):
        table.add_row(b.label, f"{b.lo:g}", f"{b.top:g}", b.role)
    console.print(table)


@app.command("sample")
def sample(
    task: str,
    n: Annotated[int, typer.Option("-n", min=1, help="How many items.")] = 3,
    bucket: Annotated[str | None, typer.Option(help="Only this bucket label.")] = None,  # noqa: UP007
    template: Annotated[str | None, typer.Option(help="Template id (default: first).")] = None,  # noqa: UP007
    seed: Annotated[int, typer.Option(help="Run seed.")] = 0,
    num_fewshot: Annotated[int | None, typer.Option(min=0, help="Override few-shot k.")] = None,  # noqa: UP007
    include_path: IncludeOpt = None,
) -> None:
    """Print rendered prompts and targets exactly as the model would see them."""
    from harness.tasks.instances import build_instances, select_fewshot
    from harness.tasks.prompts import build_prompt, target_text

    index = _index(include_path)
    ref = index.resolve([task])[0]
    spec = index.spec(ref)
    inst = build_instances(spec, ref.address, seed, ref.base_dir, None)
    labels = [b.label for b in inst.buckets]
    if bucket is not None and bucket not in labels:
        raise HarnessError(f"--bucket: {ref.address} has no bucket {bucket!r} "
                           f"(buckets: {', '.join(labels)})")
    tpls = {t.id: t for t in spec.templates}
    if template is not None and template not in tpls:
        raise HarnessError(f"--template: {ref.address} has no template {template!r} "
                           f"(templates: {', '.join(tpls)})")
    tpl = tpls[template] if template else spec.templates[0]
    k = spec.fewshot.k if num_fewshot is None else num_fewshot
    items = [it for it in inst.items if bucket is None or it.bucket.label == bucket][:n]
    for it in items:
        shots = select_fewshot(it, inst.pool, k, seed, ref.address, shared=spec.fewshot.shared)
        typer.echo(f"--- {it.id}  bucket={it.bucket.label} role={it.bucket.role} "
                   f"{spec.difficulty_name}={it.difficulty:g}")
        typer.echo(build_prompt(spec, tpl, it, shots))
        typer.echo(f">>> target: {target_text(spec, tpl, it)}")


@app.command("validate")
def validate(files: list[Path]) -> None:
    """Validate task files; prints one line per file, exits 1 if any is invalid."""
    from harness.tasks.loader import load_spec

    bad = 0
    for f in files:
        try:
            spec = load_spec(f)
            typer.echo(f"ok: {f} ({spec.name}, {len(spec.templates)} template(s))")
        except HarnessError as e:
            bad += 1
            typer.echo(f"error: {e}", err=True)
    if bad:
        raise typer.Exit(1)
