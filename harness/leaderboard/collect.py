"""Load results.json files and merge them into one :class:`Leaderboard`.

Runs are grouped into *entries*: one per model (``backend:name``) and configuration (the run
options that change results: model spec and args other than ``device``, seed, templates, few-shot
k, chat template, strategy; not ``--limit-per-bucket``: a smaller limit runs a prefix of the same
items, and every cell shows its n). For each entry and task the run given last wins (argument
order, which ``leaderboard.json`` ``sources`` records, so a rebuild from the board's copies gives
the same board); never file modification times or a clock time, which results files do not
carry. An earlier duplicate whose spec or numbers differ is reported as a :class:`Conflict`;
identical duplicates merge silently.

Every input results.json is copied verbatim into the board, with the per-sample files it names,
under ``runs/<entry>/<sha256[:12]>/``: the board carries its own inputs, and building from those
copies gives the same bytes. Names from results files are checked before they name files (see
:mod:`.paths`); an invalid task fails the build with one line (``skip_invalid``: left out).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.config import ITEM_SELECTION, RUN_SPECIFIC, RunConfig
from harness.errors import HarnessError
from harness.gaps.shift import MATCHED
from harness.leaderboard.board_file import Conflict, SourceRun
from harness.leaderboard.inputs import (
    ROUNDS_FILE,
    Copy,
    check_run,
    horizon_files,
    load_leaderboard,
    load_results,
    open_samples,
    sized_target,
)
from harness.leaderboard.provenance import public_id, reproduce
from harness.leaderboard.rows import ItemData, sample_digest, task_row
from harness.leaderboard.scores import Sample
from harness.run.results import Results, TaskResult
from harness.scoring.records import SampleRecord

__all__ = ["Collected", "gather", "config_of", "load_leaderboard", "load_results", "slug"]

SUITE_ORDER = ("lengthgen", "compgen", "easy2hard", "instructdiv")
# the run options that tell two entries of one model apart, in RunConfig's order
ENTRY_OPTIONS = tuple(k for k in RunConfig.model_fields if k not in RUN_SPECIFIC + ITEM_SELECTION)
PLANTED = "planted"  # the planted-truth backend (models/planted): its runs are on no board
VIEWER_PER_BUCKET = 20  # samples per bucket shown by the sample viewer (the file has all)


def config_of(res: Results) -> dict[str, Any]:
    """The run options that define an entry's configuration: every option that changes the
    numbers (``RunConfig`` less ``RUN_SPECIFIC``) but those that only choose the items."""
    run = res.run.model_dump(mode="json")  # an option left out at its default stays out
    cfg = {k: run.get(k) for k in ENTRY_OPTIONS if k in run}
    cfg["model_args"] = {k: v for k, v in sorted((run.get("model_args") or {}).items())
                         if k != "device"}
    return cfg


def slug(text: str) -> str:
    """A file-name-safe rendering of *text* (letters, digits, ``.``, ``_``, ``-``)."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    return s[:60] or "model"


def display_name(name: str) -> str:
    """A model name to show: a local absolute path (or one leaving the checkout) is reduced to
    its last part, so no local path reaches a page."""
    if name.startswith(("/", "~")) or ".." in name.split("/"):
        return name.rstrip("/").rsplit("/", 1)[-1] or "model"
    return name


def suite_of(task: str) -> str:
    """The suite a task address counts under: its first part."""
    return task.split("/", 1)[0] if "/" in task else "other"


def suite_sort_key(suite: str) -> tuple[int, str]:
    """Canonical suites first, in their order; others after, by name."""
    return (SUITE_ORDER.index(suite), "") if suite in SUITE_ORDER else (len(SUITE_ORDER), suite)


def task_sort_key(task: str) -> tuple[tuple[int, str], str]:
    """Tasks by suite (canonical order), then name."""
    return (suite_sort_key(suite_of(task)), task)


@dataclass
class Run:
    """One input results.json."""

    given: Path  # as given on the command line
    sha256: str  # of its bytes
    res: Results  # its content (invalid tasks removed)
    entry_key: str  # model + configuration
    samples: dict[str, tuple[Path, str | None]]  # task → checked samples file, recorded sha256
    target_ci: float | None = None  # the --target-ci it was sized with (None: a fixed limit)
    folder: str = ""  # its copy in the board: runs/<entry>/<sha[:12]>


@dataclass
class Cell:
    """The chosen run of one entry on one task."""

    run: Run  # the run it comes from
    task: TaskResult  # its result
    source: str = ""  # the board's copy of the run's results.json
    samples_rel: str | None = None  # the board's copy of its samples file
    items: ItemData | None = None  # its samples (None: not copied)


@dataclass
class Collected:
    """The merged inputs: runs, the chosen cell per entry and task, the files to copy, and the
    one-line reasons of the tasks left out (``skip_invalid``)."""

    runs: list[Run]
    cells: dict[str, dict[str, Cell]]  # entry key → task → chosen cell
    ids: dict[str, str]  # entry key → Entry.id
    labels: dict[str, str]  # entry key → display label
    conflicts: list[Conflict]
    copies: list[Copy] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _entry_key(res: Results) -> str:
    ident = f"{res.model.backend}:{res.model.name}"
    return json.dumps({"model": ident, "config": config_of(res)}, sort_keys=True)


def _differs(a: TaskResult, b: TaskResult) -> str | None:
    if a.spec_sha256 != b.spec_sha256:
        return f"task spec differs (sha256 {a.spec_sha256[:12]} vs {b.spec_sha256[:12]})"
    if [t.model_dump() for t in a.templates] != [t.model_dump() for t in b.templates]:
        acc = [_pooled(t) for t in (a, b)]
        return f"numbers differ (accuracy {acc[0]} vs {acc[1]})"
    if [x.model_dump() for x in a.analyses] != [x.model_dump() for x in b.analyses]:
        return "analyses differ"
    return None


def _pooled(t: TaskResult) -> str:
    if not t.templates:
        return "-"
    bs = t.templates[0].buckets
    n = sum(b.n for b in bs)
    return f"{sum(b.correct for b in bs) / n:.4f}" if n else "-"


def _labels(keys: list[str], name_of: dict[str, str]) -> dict[str, str]:
    """Display label per entry key: the model, plus the differing options when it has several."""
    by_model: dict[str, list[str]] = {}
    for k in keys:
        by_model.setdefault(json.loads(k)["model"], []).append(k)
    out = {}
    for model, ks in by_model.items():
        name = name_of[ks[0]]
        if len(ks) == 1:
            out[ks[0]] = name
            continue
        cfgs = [json.loads(k)["config"] for k in ks]
        diff = [c for c in ENTRY_OPTIONS if len({json.dumps(x.get(c), sort_keys=True)
                                                 for x in cfgs}) > 1]
        for k, cfg in zip(ks, cfgs, strict=True):
            opts = ", ".join(f"{c}={json.dumps(cfg.get(c), sort_keys=True)}" for c in diff)
            out[k] = f"{name} [{opts}]" if opts else f"{name} [{model}]"
    return out


def _read(paths: Sequence[Path], samples: str, skip_invalid: bool,
          invalid: list[str]) -> list[Run]:
    seen: set[str] = set()
    runs: list[Run] = []
    for p in paths:
        if p.is_dir():
            p = p / "results.json"
        res = load_results(p)
        if res.model.backend == PLANTED:
            raise HarnessError(f"{p}: a run of the planted-truth model (planted:, answers drawn "
                               f"from the curve {res.model.name}) checks the harness, it is no "
                               "model's result: leaderboards refuse it")
        sha = hashlib.sha256(p.read_bytes()).hexdigest()
        if sha in seen:  # the same file twice (or a copy of it)
            continue
        seen.add(sha)
        res, files = check_run(p, res, samples, invalid)
        if invalid and not skip_invalid:
            raise HarnessError(invalid[0] + " (--skip-invalid leaves such tasks out)")
        runs.append(Run(p, sha, res, _entry_key(res), files, sized_target(p, res)))
    return runs


def _items(path: Path, rep: tuple[str, str]) -> ItemData:
    """Every sample's item, score, role, bucket and digest, and the primary report's samples
    of a samples file."""
    everything: list[Sample] = []
    primary: list[SampleRecord] = []
    try:
        with open_samples(path) as f:
            for line in f:
                if not line.strip():
                    continue
                r = SampleRecord.model_validate_json(line)
                if r.condition != MATCHED:  # the control is not the task's answer
                    everything.append(Sample(r.id, r.score, r.role == "ID", r.bucket,
                                             sample_digest(r)))
                if (r.template, r.condition) == rep:
                    primary.append(r)
    except (OSError, ValueError) as e:
        raise HarnessError(f"{path}: cannot read samples: {str(e).splitlines()[0]}") from None
    return ItemData(everything, primary)


def gather(paths: Sequence[Path], samples: str = "copy", gzip_samples: bool = False,
           skip_invalid: bool = False) -> Collected:
    """Read and merge runs; plan the copies of their results and samples into the board."""
    if not paths:
        raise HarnessError("leaderboard build: give at least one results.json")
    if samples not in ("copy", "none"):
        raise HarnessError(f"--samples: expected 'copy' or 'none', got {samples!r}")
    invalid: list[str] = []
    runs = _read(paths, samples, skip_invalid, invalid)
    cells: dict[str, dict[str, Cell]] = {}
    conflicts: list[tuple[str, str, Run, Run, str]] = []
    for run in reversed(runs):  # the last given first: it wins
        for t in run.res.tasks:
            if not t.templates:
                continue
            have = cells.setdefault(run.entry_key, {})
            if t.task not in have:
                have[t.task] = Cell(run, t)
                continue
            why = _differs(have[t.task].task, t)
            if why is not None:
                conflicts.append((run.entry_key, t.task, have[t.task].run, run, why))
    if not cells:
        why = f" ({len(invalid)} left out as invalid)" if invalid else ""
        raise HarnessError(f"leaderboard build: no task results to show{why}")
    keys = sorted(cells)
    labels = _labels(keys, {r.entry_key: display_name(r.res.model.name) for r in runs})
    ids: dict[str, str] = {}
    for k in sorted(keys, key=lambda k: labels[k]):
        base = slug(labels[k])
        if base in ids.values():
            base = f"{base}-{hashlib.sha256(k.encode()).hexdigest()[:8]}"
        ids[k] = base
    copies: list[Copy] = []
    for run in runs:
        run.folder = f"runs/{ids.get(run.entry_key, 'unused')}/{run.sha256[:12]}"
        copies.append(Copy(run.given, f"{run.folder}/results.json", None, str(run.given)))
        if run.target_ci is not None:
            copies.append(Copy(run.given.parent / ROUNDS_FILE, f"{run.folder}/{ROUNDS_FILE}",
                               None, str(run.given)))
        for task, (src, sha) in sorted(run.samples.items()):
            t = next(x for x in run.res.tasks if x.task == task)
            rel = f"{run.folder}/{t.samples_file}" + (".gz" if gzip_samples else "")
            copies.append(Copy(src, rel, sha, str(run.given)))
            for h_src, name, h_sha in horizon_files(run.given, t):
                copies.append(Copy(h_src, f"{run.folder}/{name}" + (".gz" if gzip_samples
                                                                     else ""),
                                   h_sha, str(run.given)))
    for by_task in cells.values():
        for name, cell in by_task.items():
            run = cell.run
            cell.source = f"{run.folder}/results.json"
            found = run.samples.get(name)
            if found is not None:
                rep = cell.task.templates[0]
                cell.samples_rel = f"{run.folder}/{cell.task.samples_file}" + (
                    ".gz" if gzip_samples else "")
                cell.items = _items(found[0], (rep.template, rep.condition))
    return Collected(runs, cells, ids, labels,
                     [Conflict(entry=ids[k], task=t, kept=f"{kept.folder}/results.json",
                               dropped=f"{dropped.folder}/results.json", reason=why)
                      for k, t, kept, dropped, why in conflicts], copies, invalid)


def sources(c: Collected) -> list[SourceRun]:
    """One line of provenance per input run, in the order they were given."""
    used = {(cell.source, n) for by_task in c.cells.values() for n, cell in by_task.items()}
    out = []
    for r in c.runs:
        path = f"{r.folder}/results.json"
        cache = r.res.cache
        out.append(SourceRun(
            path=path, sha256=r.sha256, model=f"{r.res.model.backend}:{r.res.model.name}",
            public_id=public_id(r.res), entry=c.ids.get(r.entry_key, ""),
            tasks=[t.task for t in r.res.tasks],
            used_tasks=[t.task for t in r.res.tasks if (path, t.task) in used],
            spec_sha256={t.task: t.spec_sha256 for t in r.res.tasks},
            harness_version=r.res.harness.version, git_commit=r.res.harness.git_commit,
            git_dirty=r.res.harness.git_dirty, cache_hits=cache.hits if cache else None,
            cache_misses=cache.misses if cache else None, target_ci=r.target_ci,
            reproduce=reproduce(r.res)))
    return out


def rows_of(c: Collected) -> dict[str, dict[str, Any]]:
    """Entry id → task → its TaskRow (before board-wide corrections)."""
    return {c.ids[k]: {n: task_row(c.ids[k], cell.task, cell.source, cell.samples_rel,
                                   cell.items) for n, cell in by_task.items()}
            for k, by_task in c.cells.items()}
