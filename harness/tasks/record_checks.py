"""Every record of a task's data files, checked before any model loads.

``harness tasks validate``, ``plugins list --check``, ``check_task_package`` and eval's
preflight read each local data file of a ``files`` source whole (within the size bound every
read has) and check what a run would otherwise find one drawn item at a time: every field the
task reads is in every record, the difficulty parses and falls in a bucket, ids are unique,
targets are not empty, and every bucket holds records. A problem is one line at the data
file's line that first shows it, naming the task-file key that reads the field (with "did you
mean" for a field name), and how many records share it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.errors import HarnessError, did_you_mean
from harness.items import Instance
from harness.outputs import output_type
from harness.outputs.prompts import build_prompt, target_text
from harness.sources.files import exists, read_numbered, resolve_path
from harness.spec.buckets import Bucket, assign, build_buckets, format_value
from harness.spec.difficulty import parse_difficulty
from harness.spec.sources import FilesSource
from harness.spec.task import TaskSpec
from harness.templates import template_variables

Rows = Sequence[tuple[int, Mapping[str, Any]]]


def record_problems(spec: TaskSpec, path: Path | str, base_dir: Path
                    ) -> list[tuple[str, Exception]]:
    """The problems of every local data file ``spec`` reads (``source``, ``fewshot.source``);
    a file still to download is not fetched here (the run checks it), a missing one is the
    source check's to report."""
    out: list[tuple[str, Exception]] = []
    for key, src in (("source", spec.source), ("fewshot.source", spec.fewshot.source)):
        if not isinstance(src, FilesSource) or not exists(resolve_path(src.path, base_dir)):
            continue
        try:
            file, rows = read_numbered(src, base_dir)
        except HarnessError as e:  # invalid JSON at a line, not UTF-8, …: already located
            out.append((str(e), e))
            continue
        found = _problems(spec, path, file, rows, key == "source")
        out += [(line, HarnessError(line)) for line in found]
    return out


def _rid(spec: TaskSpec, rec: Mapping[str, Any]) -> str:
    """How a record is named: its id (``fields.id``); its line is given beside it."""
    if spec.fields.id and spec.fields.id in rec:
        return f"record {str(rec[spec.fields.id])!r}"
    return "the record"


def _share(k: int, n: int) -> str:
    return f" ({k} of {n} records)" if k > 1 or n > 1 else ""


def fields_read(spec: TaskSpec) -> list[tuple[str, str]]:
    """Every record field the task reads, each with the task-file key that reads it."""
    out = [(spec.fields.difficulty, "fields.difficulty")]
    if spec.fields.id:
        out.append((spec.fields.id, "fields.id"))
    fixed = output_type(spec).fields_read(spec)
    out += [(field, key) for key, field in fixed.items()]
    for i, t in enumerate(spec.templates):
        for part, src in (("prompt", t.prompt), ("target", t.target)):
            if src is not None:
                out += [(v, f"templates[{i}].{part} ({t.id})")
                        for v in sorted(template_variables(src))]
        if t.target is None and "fields.target" not in fixed:
            out.append((spec.fields.target, "fields.target"))
    return list(dict.fromkeys(out))


def _problems(spec: TaskSpec, task_file: Path | str, file: Path, rows: Rows,
              main: bool) -> list[str]:
    names = {k for _, rec in rows for k in rec}
    problems: list[str] = []
    missing_any: set[int] = set()  # rows missing a field: their targets are not rendered
    seen: dict[str, list[str]] = {}
    for field, key in fields_read(spec):
        if key in seen.setdefault(field, []):
            continue
        seen[field].append(key)
        lacking = [(i, n, rec) for i, (n, rec) in enumerate(rows) if field not in rec]
        if lacking:
            i, n, rec = lacking[0]
            missing_any.update(j for j, _, _ in lacking)
            hint = did_you_mean(field, names - {field})
            problems.append(f"{file}:{n}: {_rid(spec, rec)} has no field {field!r} ({key})"
                            f"{hint}{_share(len(lacking), len(rows))}")
    problems += _ids(spec, file, rows)
    values = _difficulties(spec, file, rows, problems)
    try:
        buckets = build_buckets(spec.buckets, spec.roles,
                                [d for d in values.values() if d is not None])
    except ValueError:
        return problems  # the spec check reports the buckets themselves
    placed: dict[int, Bucket] = {}
    outside: list[int] = []
    for i, d in values.items():
        b = assign(buckets, d) if d is not None else None
        if b is None:
            outside.append(i)
        else:
            placed[i] = b
    if main:
        problems += _coverage(spec, task_file, file, rows, buckets, placed, outside)
    problems += _targets(spec, file, rows, placed, missing_any)
    return problems


def _ids(spec: TaskSpec, file: Path, rows: Rows) -> list[str]:
    if not spec.fields.id:
        return []
    first: dict[str, int] = {}
    dups: list[tuple[int, str, int]] = []
    for n, rec in rows:
        if spec.fields.id not in rec:
            continue
        rid = str(rec[spec.fields.id])
        if rid in first:
            dups.append((n, rid, first[rid]))
        else:
            first[rid] = n
    if not dups:
        return []
    n, rid, m = dups[0]
    more = f" ({len(dups)} duplicates in all)" if len(dups) > 1 else ""
    return [f"{file}:{n}: duplicate id {rid!r} (fields.id; first at line {m}){more}"]


def _difficulties(spec: TaskSpec, file: Path, rows: Rows, problems: list[str]
                  ) -> dict[int, float | None]:
    """Each row's difficulty (None: a pattern that does not match); rows without the field or
    with a value that is no number are left out, the first reported."""
    field, pattern = spec.fields.difficulty, spec.fields.difficulty_pattern
    out: dict[int, float | None] = {}
    bad: list[tuple[int, Any]] = []
    for i, (n, rec) in enumerate(rows):
        if field not in rec:
            continue
        if pattern is not None:
            out[i] = parse_difficulty(rec[field], pattern)
            continue
        try:
            out[i] = float(rec[field])
        except (TypeError, ValueError):
            bad.append((n, rec[field]))
    if bad:
        n, value = bad[0]
        problems.append(f"{file}:{n}: difficulty field {field!r} is not a number: {value!r} "
                        f"(fields.difficulty; set fields.difficulty_pattern to read a number "
                        f"out of a text){_share(len(bad), len(rows))}")
    return out


def _coverage(spec: TaskSpec, task_file: Path | str, file: Path, rows: Rows,
              buckets: list[Bucket], placed: dict[int, Bucket], outside: list[int]
              ) -> list[str]:
    """Records outside every bucket, and buckets without records (unless the task file says
    it means them: ``buckets.allow_outside``, ``buckets.allow_empty``)."""
    problems = []
    name = spec.difficulty_name
    if outside and not spec.buckets.allow_outside:
        n, rec = rows[outside[0]]
        d = rec.get(spec.fields.difficulty)
        problems.append(
            f"{file}:{n}: {_rid(spec, rec)} ({name} {d!r}) falls in no bucket (buckets: "
            f"{', '.join(b.label for b in buckets)}); {len(outside)} of {len(rows)} records "
            "would be left out (widen the buckets, or set buckets.allow_outside: true)")
    if spec.buckets.allow_empty:
        return problems
    held = {b.index for b in placed.values()}
    empty = [b for b in buckets if b.index not in held]
    if empty and placed:  # with no record placed, the difficulty field is the problem
        found = sorted({v for v in (rows[i][1].get(spec.fields.difficulty) for i in outside)
                        if isinstance(v, (int, float))})
        extra = (f"; {name} values outside every bucket: "
                 f"{', '.join(format_value(v) for v in found[:8])}" if found else "")
        which = ", ".join(f"{b.label} ({b.role})" for b in empty)
        problems.append(f"{task_file}: buckets: {'bucket' if len(empty) == 1 else 'buckets'} "
                        f"{which} {'holds' if len(empty) == 1 else 'hold'} no record of "
                        f"{file.name}{extra} (or set buckets.allow_empty: true)")
    return problems


def _targets(spec: TaskSpec, file: Path, rows: Rows, placed: dict[int, Bucket],
             skip: set[int]) -> list[str]:
    """Each template's prompt and target, and the output type's choices and gold, of every
    bucketed record with the fields it needs: one line per template and kind of failure."""
    out_type = output_type(spec)
    first: dict[str, tuple[str, int]] = {}
    for i, b in sorted(placed.items()):
        if i in skip:
            continue
        n, rec = rows[i]
        item = Instance(str(rec.get(spec.fields.id or "", f"at line {n}")), rec, 0.0, b)
        for tpl in spec.templates:
            try:
                build_prompt(spec, tpl, item, [])
                if not target_text(spec, tpl, item).strip():
                    msg = f"{_rid(spec, rec)} has an empty target (template {tpl.id})"
                    _count(first, f"empty:{tpl.id}", f"{file}:{n}: {msg}")
                out_type.choices(spec, item)
                out_type.gold(spec, item)
            except HarnessError as e:
                _count(first, f"error:{tpl.id}:{type(e).__name__}",
                       f"{file}:{n}: {_rid(spec, rec)}: {_after_item(str(e))}")
    total = len(rows)
    return [line + _share(k, total) for line, k in first.values()]


def _count(first: dict[str, tuple[str, int]], kind: str, line: str) -> None:
    line0, k = first.get(kind, (line, 0))
    first[kind] = (line0, k + 1)


def _after_item(text: str) -> str:
    """An item error's message without the item id the generic message starts with."""
    head, sep, rest = text.partition(": ")
    return rest if sep and head.startswith(("item ", "task ")) else text
