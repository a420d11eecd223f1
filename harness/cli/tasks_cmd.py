"""``harness tasks list|show|sample|validate``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from harness.cli.sample_cmd import sample
from harness.cli.task_args import IncludeOpt, RestrictOpt, restrict, task_index
from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.spec.task import TaskSpec
    from harness.tasks.refs import TaskRef

app = typer.Typer(no_args_is_help=True, help="List, inspect, preview and validate tasks.")


def _one_task(task: str, include: list[Path] | None) -> tuple[TaskRef, TaskSpec]:
    """The task named ``task`` (an address or a bare name) and its validated spec."""
    index = task_index(include)
    ref = index.resolve([task])[0]
    return ref, index.spec(ref)


@app.command("list")
def list_tasks(include_path: IncludeOpt = None, restrict_paths: RestrictOpt = False) -> None:
    """List every task with its suites, difficulty variable and ID/OOD buckets."""
    restrict(restrict_paths)
    index = task_index(include_path)
    refs = index.all_refs()  # imports every task plugin; a broken one is a warning
    ordered = sorted(refs.values(), key=lambda r: r.address)
    # cached per file (harness.tasks.summaries); an invalid plugin task is a warning, not an error
    summaries = index.summaries(ordered, skip_invalid=True)  # a bad file: one warning
    rows = [["task", "suites", "difficulty", "ID buckets", "OOD buckets", "output", "templates",
             "from"]]
    for ref in ordered:
        s = summaries.get(ref.address)
        if s is not None:
            rows.append([ref.address, ",".join(sorted({ref.folder, *s.suites} - {""})),
                         s.difficulty, _span(s.id_buckets), _span(s.ood_buckets), s.output,
                         str(s.templates), _from(ref.origin)])
    typer.echo(plain_table(f"{len(rows) - 1} tasks", rows))


def plain_table(title: str, rows: list[list[str]]) -> str:
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
def show(
    task: str,
    yaml_only: Annotated[bool, typer.Option(
        "--yaml", help="Print only the resolved spec, as plain YAML that validates when saved.")
    ] = False,
    include_path: IncludeOpt = None,
    restrict_paths: RestrictOpt = False,
) -> None:
    """Show a task's resolved spec (plain YAML) and its buckets with roles."""
    restrict(restrict_paths)
    from rich.console import Console
    from rich.table import Table

    from harness.spec.buckets import build_buckets

    ref, spec = _one_task(task, include_path)
    typer.echo(f"# {ref.address}: resolved from {ref.where} ({ref.origin})")
    task_file = ref.path if ref.spec is None else None
    typer.echo(spec_yaml(spec, task_file), nl=False)  # never wrapped: a copied spec parses
    if yaml_only:
        return
    table = Table(title=f"buckets over {spec.difficulty_name}")
    for col in ("bucket", "from", "to", "role"):
        table.add_column(col)
    for b in build_buckets(spec.buckets, spec.roles):
        table.add_row(b.label, f"{b.lo:g}", f"{b.top:g}", b.role)
    Console().print(table)


def templates_expanded(spec: TaskSpec, task_file: Path | None) -> bool:
    """Whether ``templates_from`` added rows to the templates of ``spec``, loaded from
    ``task_file`` (False when its table was not found, or for a spec given in code)."""
    from harness.tasks.loader import resolve_includes

    if spec.templates_from is None or task_file is None:
        return False
    raw = resolve_includes(task_file).get("templates")
    return not isinstance(raw, list) or len(raw) != len(spec.templates)


def spec_yaml(spec: TaskSpec, task_file: Path | None = None) -> str:
    """A resolved spec as a task file: every key, includes merged. When ``templates_from``
    rows are already in ``templates``, the key itself is dropped (it would add them twice)."""
    import yaml

    data = _whole_numbers(spec.model_dump(mode="json"))
    if templates_expanded(spec, task_file):
        data["templates_from"] = None
    return yaml.dump(data, Dumper=_dumper(), sort_keys=False, allow_unicode=True,
                     width=2**31 - 1)


def _multiline(v: object) -> bool:
    """A text of several lines with more than whitespace (written as a ``|`` block)."""
    return isinstance(v, str) and "\n" in v and bool(v.strip())


def _dumper() -> type:
    """A safe YAML dumper that writes as a task author would: a text of several lines as a
    literal ``|`` block, a text of only line breaks quoted with escapes (``"\\n"``), and a
    mapping or list of plain scalars on one line."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def text(d: yaml.SafeDumper, v: str) -> yaml.Node:
        style = "|" if _multiline(v) else '"' if v and not v.strip() else None
        return d.represent_scalar("tag:yaml.org,2002:str", v, style=style)

    def flat(values: list[Any]) -> bool:
        return not any(isinstance(v, (dict, list)) or _multiline(v) for v in values)

    def mapping(d: yaml.SafeDumper, v: dict[Any, Any]) -> yaml.Node:
        return d.represent_mapping("tag:yaml.org,2002:map", v.items(),
                                   flow_style=flat(list(v.values())))

    def sequence(d: yaml.SafeDumper, v: list[Any]) -> yaml.Node:
        return d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=flat(v))

    Dumper.add_representer(str, text)
    Dumper.add_representer(dict, mapping)
    Dumper.add_representer(list, sequence)
    return Dumper


def _whole_numbers(node: Any) -> Any:
    """``node`` with whole floats written as integers (a bucket value ``3``, not ``3.0``)."""
    if isinstance(node, float) and node.is_integer():
        return int(node)
    if isinstance(node, dict):
        return {k: _whole_numbers(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_whole_numbers(v) for v in node]
    return node


app.command("sample")(sample)


@app.command("validate")
def validate(
    paths: Annotated[list[Path], typer.Argument(
        help="Task files, folders searched recursively for *.yaml / *.yml, or the names of "
        "built-in or installed tasks (as tasks show takes them).")],
    restrict_paths: RestrictOpt = False,
    no_items: Annotated[bool, typer.Option(
        "--no-items", help="Check the files only: do not make the one item per bucket of each "
        "generator source that validate makes by default (that reads the generators' data "
        "files, and may download what a task's source.url names).")] = False,
    deep: Annotated[bool, typer.Option(
        "--deep", hidden=True, help="Kept for old scripts: items are made by default.")] = False,
) -> None:
    """Validate task files (_ bases as partial tasks) and make one item per bucket of each
    generator source and every record of a local data file; one line per file, every problem
    of a file shown; exits 2 if any is invalid, as eval refuses it."""
    restrict(restrict_paths)
    from harness.tasks.loader import load_checked, validate_base
    from harness.tasks.origins import merge_includers, problem_of
    from harness.tasks.task_checks import check_records, check_task
    from harness.tasks.variants import files_finder, files_hint

    found: list[tuple[str, list[str]]] = []  # each file's "ok" line, or its problems
    for f in _task_files(paths):
        try:
            if not f.exists():
                found.append(("", [f"{f}: file not found (nor the name of a built-in or "
                                   "installed task: harness tasks list)"]))
            elif f.name.startswith("_"):
                n = validate_base(f)
                found.append((f"ok: {f} (base for include:, {n} key(s))", []))
            else:
                spec, lines = load_checked(f)  # every problem of the file in one pass: the
                try:  # spec's, then (as far as it could be read) its records'
                    if spec is not None and not lines:
                        check_task(spec, f, f.parent, items=not no_items,  # as eval checks it
                                   find=files_finder(f), hint=files_hint(f))
                    elif spec is not None and not no_items:
                        check_records(spec, f, f.parent)
                except HarnessError as e:
                    lines += str(e).splitlines() or [type(e).__name__]
                if lines:
                    found.append(("", list(dict.fromkeys(lines))))
                else:
                    assert spec is not None
                    found.append((f"ok: {f} ({spec.name}, {len(spec.templates)} template(s))",
                                  []))
        except HarnessError as e:
            found.append(("", str(e).splitlines() or [type(e).__name__]))
    # a problem of a file that several include: once, where it first shows, naming them all
    merged = {problem_of(line): line for line in merge_includers(
        [line for _, lines in found for line in lines])}
    for ok, lines in found:
        if ok:
            typer.echo(ok)
        for line in lines:
            if problem_of(line) in merged:
                typer.echo(f"error: {merged.pop(problem_of(line))}", err=True)
    if any(lines for _, lines in found):
        raise typer.Exit(2)


def _task_files(paths: list[Path]) -> list[Path]:
    """The files to validate: files as given, folders expanded (sorted, recursively)."""
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.suffix in (".yaml", ".yml")
                           and f.is_file())
            if not found:
                raise HarnessError(f"{p}: no task files (*.yaml, *.yml) in this folder")
            out.extend(found)
        elif not p.exists() and (named := _task_files_of(str(p))):
            out.extend(named)  # a task's or suite's name, as show and sample take it
        else:
            out.append(p)  # a missing file is reported by the loader, with the others
    return out


def _task_files_of(name: str) -> list[Path]:
    """The files of the built-in or installed tasks ``name`` names (a task or a suite)."""
    from harness.tasks.index import TaskIndex

    try:
        refs = TaskIndex.build([]).resolve([name])
    except HarnessError:
        return []
    return [r.path for r in refs if r.spec is None and r.path.is_file()]


@app.command("schema")
def schema(
    output: Annotated[Path | None, typer.Option(  # noqa: UP007
        "--output", "-o", help="Write the schema to this file (default: standard output).")
    ] = None,
    base: Annotated[bool, typer.Option(
        "--base", help="The schema of a _ base file (a partial task: every key optional).")
    ] = False,
) -> None:
    """Print the JSON Schema of a task file (editors validate and complete with it)."""
    from harness.schema import dumps, task_schema

    text = dumps(task_schema(base=base))
    if output is None:
        typer.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as e:
        raise HarnessError(f"--output: cannot write {output}: {e.strerror or e}") from None
    typer.echo(f"wrote {output}")
