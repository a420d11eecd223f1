"""Load results.json files and merge them into one ranked :class:`Leaderboard`.

Runs are grouped into *entries*: one per model (``backend:name``) and configuration (the run
options that change results: model spec and args other than ``device``, seed, limit per bucket,
templates, few-shot k, chat template, strategy). For each entry and task the newest run (file
modification time, then the later path on the command line) wins; an older duplicate whose spec or
numbers differ is reported as a :class:`Conflict`. Identical duplicates are merged silently.

Names from results files are checked before they name files (see :mod:`.paths`): a task whose
address is not a plain ``suite/name`` or whose ``samples_file`` leaves its run folder, or whose
samples do not match the ``samples_sha256`` recorded, fails the build with one line naming the
results file and key (``skip_invalid``: the task is left out with a warning line instead).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.leaderboard.inputs import Copy, check_run, load_leaderboard, load_results
from harness.leaderboard.plots import task_file_stem
from harness.leaderboard.schema import (
    LEADERBOARD_KIND,
    LEADERBOARD_SCHEMA_VERSION,
    AnalysisCell,
    BucketCell,
    BucketInfo,
    Conflict,
    Entry,
    Leaderboard,
    ModelCard,
    SourceRun,
    TaskBoard,
    TaskRow,
)
from harness.results import Results, TaskResult
from harness.scoring.stats import Z95, r10

__all__ = ["Collected", "collect", "config_of", "load_leaderboard", "load_results", "rank", "slug"]

SUITE_ORDER = ("lengthgen", "compgen", "easy2hard", "instructdiv")
#: analyses shown as their own leaderboard columns, in this order, with their display names
HEADLINE_ANALYSES = {"compositionality_gap": "compositionality gap", "sgr": "SGR",
                     "multi_prompt": "CPS", "effective_length": "effective length"}
_CONFIG_KEYS = ("model", "model_args", "seed", "limit_per_bucket", "templates", "num_fewshot",
                "fewshot_shared",
                "apply_chat_template", "strategy")


def config_of(res: Results) -> dict[str, Any]:
    """The run options that define an entry's configuration."""
    run = res.run.model_dump(mode="json")
    cfg = {k: run.get(k) for k in _CONFIG_KEYS}
    cfg["model_args"] = {k: v for k, v in sorted((run.get("model_args") or {}).items())
                         if k != "device"}
    return cfg


def slug(text: str) -> str:
    """A file-name-safe rendering of *text* (letters, digits, ``.``, ``_``, ``-``)."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    return s[:60] or "model"


def mean(xs: Sequence[float | None]) -> float | None:
    """Mean of the non-None values (None when there are none), rounded with r10."""
    vals = [x for x in xs if x is not None]
    return r10(math.fsum(vals) / len(vals)) if vals else None


def suite_of(task: str) -> str:
    """The suite a task address counts under: its first part."""
    return task.split("/", 1)[0] if "/" in task else "other"


def suite_sort_key(suite: str) -> tuple[int, str]:
    """Canonical suites first, in their order; others after, by name."""
    return (SUITE_ORDER.index(suite), "") if suite in SUITE_ORDER else (len(SUITE_ORDER), suite)


@dataclass
class _Run:
    path: str
    mtime: float
    order: int
    res: Results
    entry_key: str


@dataclass
class _Cell:
    """The chosen run of one entry on one task."""

    run: _Run
    task: TaskResult


@dataclass
class Collected:
    """The merged leaderboard, the per-sample files to copy next to it, and the one-line
    reasons of the tasks left out (``skip_invalid``)."""

    board: Leaderboard
    copies: list[Copy] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _entry_key(res: Results) -> str:
    ident = f"{res.model.backend}:{res.model.name}"
    return json.dumps({"model": ident, "config": config_of(res)}, sort_keys=True)


def _differs(a: TaskResult, b: TaskResult) -> str | None:
    if a.spec_sha256 != b.spec_sha256:
        return f"task spec differs (sha256 {a.spec_sha256[:12]} vs {b.spec_sha256[:12]})"
    if [t.model_dump() for t in a.templates] != [t.model_dump() for t in b.templates]:
        acc = [_pooled(t.templates[0]) if t.templates else None for t in (a, b)]
        return f"numbers differ (accuracy {_fmt(acc[0])} vs {_fmt(acc[1])})"
    if [x.model_dump() for x in a.analyses] != [x.model_dump() for x in b.analyses]:
        return "analyses differ"
    return None


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


def _pooled(report: Any) -> float | None:
    n = sum(b.n for b in report.buckets)
    return r10(math.fsum(b.correct for b in report.buckets) / n) if n else None


def _labels(keys: list[str], runs: dict[str, _Run]) -> dict[str, str]:
    """Display label per entry key: the model, plus the differing options when it has several."""
    by_model: dict[str, list[str]] = {}
    for k in keys:
        by_model.setdefault(json.loads(k)["model"], []).append(k)
    out = {}
    for model, ks in by_model.items():
        name = runs[ks[0]].res.model.name
        if len(ks) == 1:
            out[ks[0]] = name
            continue
        cfgs = [json.loads(k)["config"] for k in ks]
        diff = [c for c in _CONFIG_KEYS if len({json.dumps(x.get(c), sort_keys=True)
                                                  for x in cfgs}) > 1]
        for k, cfg in zip(ks, cfgs, strict=True):
            opts = ", ".join(f"{c}={json.dumps(cfg.get(c), sort_keys=True)}" for c in diff)
            out[k] = f"{name} [{opts}]" if opts else f"{name} [{model}]"
    return out


def _row(entry_id: str, cell: _Cell, samples_rel: str | None) -> TaskRow:
    t = cell.task
    rep = t.templates[0]
    roles = {r.role: r for r in rep.roles}
    g = rep.gaps
    return TaskRow(
        entry=entry_id, template=rep.template, condition=rep.condition,
        n_reports=len(t.templates), accuracy=_pooled(rep),
        id_accuracy=roles["ID"].accuracy if "ID" in roles else None,
        ood_accuracy=roles["OOD"].accuracy if "OOD" in roles else None,
        gap=g.id_ood.value if g.id_ood else None,
        gap_ci_low=g.id_ood.ci_low if g.id_ood else None,
        gap_ci_high=g.id_ood.ci_high if g.id_ood else None,
        retention=g.retention.value if g.retention else None,
        retention_ci_low=g.retention.ci_low if g.retention else None,
        retention_ci_high=g.retention.ci_high if g.retention else None,
        horizon=g.horizon.value if g.horizon else None,
        horizon_factor=g.horizon.factor if g.horizon else None,
        buckets=[BucketCell(label=b.bucket, n=b.n, accuracy=b.accuracy, ci_low=b.ci_low,
                            ci_high=b.ci_high) for b in rep.buckets],
        analyses=[AnalysisCell(name=a.name, value=a.value, ci_low=a.ci_low, ci_high=a.ci_high,
                               n=a.n) for a in t.analyses],
        spec_sha256=t.spec_sha256, source=cell.run.path, samples=samples_rel,
    )


def _mean_gap_ci(rows: Sequence[TaskRow]) -> tuple[float | None, float | None, float | None]:
    """Mean gap over tasks and its 95% CI: each task's bootstrap CI read as a normal interval
    (se = width / 2z), tasks independent: se(mean) = sqrt(sum se²) / k."""
    gaps = [r for r in rows if r.gap is not None]
    if not gaps:
        return None, None, None
    k = len(gaps)
    m = math.fsum(r.gap for r in gaps if r.gap is not None) / k
    var = math.fsum(((r.gap_ci_high or 0.0) - (r.gap_ci_low or 0.0)) ** 2 / (2 * Z95) ** 2
                    for r in gaps)
    half = Z95 * math.sqrt(var) / k
    return r10(m), r10(m - half), r10(m + half)


def _entry(entry_id: str, label: str, rows: list[TaskRow], task_names: list[str],
           runs: list[_Run]) -> Entry:
    by_suite: dict[str, list[float | None]] = {}
    for name, r in zip(task_names, rows, strict=True):
        by_suite.setdefault(suite_of(name), []).append(r.accuracy)
    suites = {s: mean(v) for s, v in sorted(by_suite.items(), key=lambda kv: suite_sort_key(kv[0]))}
    gap, lo, hi = _mean_gap_ci(rows)
    both = [r for r in rows if r.id_accuracy is not None and r.ood_accuracy is not None]
    id_both = mean([r.id_accuracy for r in both])
    ood_both = mean([r.ood_accuracy for r in both])
    retention = r10(ood_both / id_both) if id_both and ood_both is not None else None
    names = sorted({a.name for r in rows for a in r.analyses})
    analyses = {n: mean([a.value for r in rows for a in r.analyses if a.name == n]) for n in names}
    res = runs[0].res
    return Entry(
        id=entry_id, label=label, rank=0, overall=mean(list(suites.values())),
        suite_scores=suites, id_accuracy=mean([r.id_accuracy for r in rows]),
        ood_accuracy=mean([r.ood_accuracy for r in rows]), gap=gap, gap_ci_low=lo,
        gap_ci_high=hi, retention=retention,
        horizon_factor=mean([r.horizon_factor for r in rows]), analyses=analyses,
        n_tasks=len(rows),
        card=ModelCard(
            backend=res.model.backend, name=res.model.name, path=res.model.path,
            revision=res.model.revision, weights_sha256=res.model.weights_sha256,
            dtype=res.model.dtype, device=res.model.device, seed=res.run.seed,
            limit_per_bucket=res.run.limit_per_bucket, config=config_of(res),
            harness_versions=sorted({r.res.harness.version for r in runs}),
            git_commits=sorted({c for r in runs if (c := r.res.harness.git_commit)}),
        ),
    )


def rank(entries: list[Entry]) -> list[Entry]:
    """Sort by overall score (best first, missing last); ties share the smallest rank."""
    ordered = sorted(entries, key=lambda e: (e.overall is None, -(e.overall or 0.0), e.label))
    out = []
    for e in ordered:
        better = sum(1 for o in ordered if e.overall is not None and o.overall is not None
                     and o.overall > e.overall)
        out.append(e.model_copy(update={"rank": better + 1 if e.overall is not None
                                        else len(ordered)}))
    return out


def _task_board(name: str, cells: list[tuple[Entry, _Cell, TaskRow]]) -> TaskBoard:
    first = cells[0][1].task
    spec = first.spec
    buckets: dict[tuple[int, str], BucketInfo] = {}
    for _, cell, _ in cells:
        for b in cell.task.templates[0].buckets:
            buckets.setdefault((b.index, b.bucket), BucketInfo(
                label=b.bucket, index=b.index, role=b.role, lo=b.lo, hi=b.hi))
    card = spec.get("card")
    return TaskBoard(
        task=name, suite=suite_of(name), description=str(spec.get("description", "")),
        citations=[str(c) for c in spec.get("citations", []) or []],
        card=card if isinstance(card, dict) else None, difficulty_name=first.difficulty_name,
        buckets=[buckets[k] for k in sorted(buckets)], rows=[r for _, _, r in cells],
    )


def collect(paths: Sequence[Path], title: str = "Leaderboard", samples: str = "copy",
            gzip_samples: bool = False, skip_invalid: bool = False) -> Collected:
    """Merge runs into a leaderboard. ``samples``: ``copy`` plans copying each used per-sample
    file to ``per-sample/<entry>/<task>.jsonl`` (``.gz`` when ``gzip_samples``), ``none`` skips.
    An invalid task (unsafe address or samples file, samples sha256 mismatch) raises one
    ``HarnessError`` line, or with ``skip_invalid`` is left out and listed in ``skipped``."""
    from harness import __version__

    if not paths:
        raise HarnessError("leaderboard build: give at least one results.json")
    if samples not in ("copy", "none"):
        raise HarnessError(f"--samples: expected 'copy' or 'none', got {samples!r}")
    seen: set[Path] = set()
    runs: list[_Run] = []
    invalid: list[str] = []
    sample_files: dict[tuple[str, str], tuple[Path, str | None]] = {}
    for i, p in enumerate(paths):
        if p.is_dir():
            p = p / "results.json"
        if p.resolve() in seen:
            continue
        seen.add(p.resolve())
        res, files = check_run(p, load_results(p), samples, invalid)
        if invalid and not skip_invalid:
            raise HarnessError(invalid[0] + " (--skip-invalid leaves such tasks out)")
        sample_files.update({(str(p), task): f for task, f in files.items()})
        runs.append(_Run(str(p), p.stat().st_mtime, i, res, _entry_key(res)))
    cells: dict[str, dict[str, _Cell]] = {}
    conflicts: list[tuple[str, str, str, str, str]] = []
    for run in sorted(runs, key=lambda r: (r.mtime, r.order), reverse=True):  # newest first
        for t in run.res.tasks:
            if not t.templates:
                continue
            have = cells.setdefault(run.entry_key, {})
            if t.task not in have:
                have[t.task] = _Cell(run, t)
                continue
            why = _differs(have[t.task].task, t)
            if why is not None:
                conflicts.append((run.entry_key, t.task, have[t.task].run.path, run.path, why))
    if not cells:
        why = f" ({len(invalid)} left out as invalid)" if invalid else ""
        raise HarnessError(f"leaderboard build: no task results to show{why}")
    first_run = {r.entry_key: r for r in sorted(runs, key=lambda r: r.order, reverse=True)}
    keys = sorted(cells, key=lambda k: min(r.order for r in runs if r.entry_key == k))
    labels = _labels(keys, first_run)
    ids: dict[str, str] = {}
    for k in keys:
        base = slug(labels[k])
        if base in ids.values():
            base = f"{base}-{hashlib.sha256(k.encode()).hexdigest()[:8]}"
        ids[k] = base
    copies: list[Copy] = []
    entries: list[Entry] = []
    rows_of: dict[str, dict[str, TaskRow]] = {}
    for k in keys:
        names = sorted(cells[k], key=lambda n: (suite_sort_key(suite_of(n)), n))
        rows = []
        for n in names:
            cell = cells[k][n]
            found = sample_files.get((cell.run.path, n))
            rel = None
            if found is not None:
                rel = f"per-sample/{ids[k]}/{n}.jsonl" + (".gz" if gzip_samples else "")
                copies.append(Copy(found[0], rel, found[1], cell.run.path))
            rows.append(_row(ids[k], cell, rel))
        rows_of[k] = dict(zip(names, rows, strict=True))
        entries.append(_entry(ids[k], labels[k], rows, names,
                              [r for r in runs if r.entry_key == k]))
    entries = rank(entries)
    key_of = {ids[k]: k for k in keys}
    all_tasks = sorted({n for k in keys for n in cells[k]},
                       key=lambda n: (suite_sort_key(suite_of(n)), n))
    stems: dict[str, str] = {}
    for n in all_tasks:
        if (other := stems.setdefault(task_file_stem(n), n)) != n:
            raise HarnessError(f"leaderboard build: tasks {other!r} and {n!r} would share the "
                               f"page name {task_file_stem(n)}.html; rename one of them")
    boards = []
    for n in all_tasks:
        here = [(e, cells[key_of[e.id]][n], rows_of[key_of[e.id]][n]) for e in entries
                if n in cells[key_of[e.id]]]
        boards.append(_task_board(n, here))
    used = {(c.run.path, n) for k in keys for n, c in cells[k].items()}
    sources = [SourceRun(path=r.path, model=f"{r.res.model.backend}:{r.res.model.name}",
                         entry=ids.get(r.entry_key, ""), tasks=[t.task for t in r.res.tasks],
                         used_tasks=[t.task for t in r.res.tasks if (r.path, t.task) in used],
                         harness_version=r.res.harness.version, mtime=r.mtime) for r in runs]
    board = Leaderboard(
        schema_version=LEADERBOARD_SCHEMA_VERSION, kind=LEADERBOARD_KIND, title=title,
        harness_version=__version__,
        suites=sorted({suite_of(n) for n in all_tasks}, key=suite_sort_key),
        entries=entries, tasks=boards, sources=sources,
        conflicts=[Conflict(entry=ids[k], task=t, kept=kept, dropped=dropped, reason=why)
                   for k, t, kept, dropped, why in conflicts],
    )
    return Collected(board, copies, invalid)
