"""From merged runs to the ranked :class:`Leaderboard`: entry scores with score intervals
(stratified by bucket), rank ranges within groups of entries that ran the same tasks, gap means
over the tasks where a gap is measured (floor and ceiling counted, never averaged), Holm-corrected
significance marks, pairwise tests per task, model families, staleness and precision."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import __version__
from harness.analyses.registry import board_info as analysis_info
from harness.gaps.registry import board_info as gap_info
from harness.gaps.shift import has_exemplars
from harness.leaderboard.board_file import (
    LEADERBOARD_KIND,
    LEADERBOARD_SCHEMA_VERSION,
    BucketInfo,
    Entry,
    Leaderboard,
    ModelCard,
    PairTest,
    Score,
    TaskBoard,
    TaskRow,
    TemplateInfo,
)
from harness.leaderboard.claims import edge_p
from harness.leaderboard.claims import off_floor as off_floor_row
from harness.leaderboard.collect import (
    VIEWER_PER_BUCKET,
    Collected,
    config_of,
    display_name,
    gather,
    rows_of,
    sources,
    suite_of,
    suite_sort_key,
    task_sort_key,
)
from harness.leaderboard.families import families
from harness.leaderboard.horizons import entry_horizons
from harness.leaderboard.plan import MIN_PER_BUCKET, TARGET
from harness.leaderboard.precision import precision
from harness.leaderboard.provenance import card_provenance, family_of
from harness.leaderboard.registered import board_value, macro_mean, values_by_name
from harness.leaderboard.rows import ItemData
from harness.leaderboard.scores import (
    holm,
    macro_intervals,
    macro_scores,
    mean_interval,
    pair_test,
    rank_ranges,
)
from harness.leaderboard.stale import drifted, searched_otherwise, stale_tasks
from harness.scoring.intervals import (
    Limits,
    Proportion,
    Term,
    diff_interval,
    p_value,
    sum_interval,
)
from harness.scoring.records import SampleRecord
from harness.scoring.stats import r10

CORRECTION = "Holm–Bonferroni"


def _r(x: float | None) -> float | None:
    return None if x is None else r10(x)


def _role_props(row: TaskRow, data: ItemData | None) -> tuple[Proportion, Proportion] | None:
    """The primary report's pooled ID and OOD scores as proportions (from its samples; without
    them, from results.json's role counts, exact for binary scores)."""
    if data is not None and data.primary:
        i, o = data.primary_scores("ID"), data.primary_scores("OOD")
        return None if i is None or o is None else (i.proportion(), o.proportion())
    if row.id_accuracy is None or row.ood_accuracy is None:
        return None
    return (Proportion(row.id_accuracy, row.n_id, float(row.n_id)),
            Proportion(row.ood_accuracy, row.n_ood, float(row.n_ood)))


def task_gap_p(props: tuple[Proportion, Proportion]) -> float:
    """p-value of a task's gap = 0, inverting the gap's own (Newcombe) interval."""
    return p_value(lambda lv: diff_interval(*props, lv))


class _EntryStats:
    """Point scores and score intervals of one entry."""

    def __init__(self, rows: Mapping[str, TaskRow], items: Mapping[str, ItemData | None],
                 common: set[str] | None = None, scored: set[str] | None = None,
                 searched: set[str] | None = None) -> None:
        self.rows = rows
        self.searched = searched  # tasks with a d50 search for every entry of the group
        # the headline scores: over the tasks off the floor for every entry of the group
        # (``scored``), so tasks where no entry can be told from a constant answerer do not
        # dilute them; the all-task mean beside them
        self.scored = sorted(rows if scored is None else scored & set(rows))
        self.suites, self.overall, self.suite_ci, self.overall_ci = self._macro(
            {n: rows[n] for n in self.scored}, items)
        _, self.overall_all, _, self.overall_all_ci = self._macro(rows, items)
        self.own = sorted(n for n, r in rows.items() if r.gap is not None)
        # the headline gap covers the tasks measured for every entry it is compared with
        self.measured = [n for n in self.own if common is None or n in common]
        # the mean gap's interval: MOVER over the tasks' own intervals (one task: its interval)
        parts = [(r.gap, r.gap_ci_low, r.gap_ci_high) for n in self.measured
                 if (r := rows[n]).gap is not None]
        full = [(v, lo, hi) for v, lo, hi in parts if lo is not None and hi is not None]
        whole = bool(full) and len(full) == len(parts)
        self.gap_ci: Limits | None = mean_interval(full) if whole else None
        props = [_role_props(rows[n], items.get(n)) for n in self.measured]
        self.gap_p: float | None = None
        if self.measured and all(p is not None for p in props):
            k = len(props)
            self.gap_p = p_value(lambda lv: sum_interval(
                [Term(1.0 / k, q[0].mean - q[1].mean, *diff_interval(*q, lv))
                 for q in props if q is not None]))

    @staticmethod
    def _macro(rows: Mapping[str, TaskRow], items: Mapping[str, ItemData | None]
               ) -> tuple[dict[str, float], float | None, dict[str, Limits], Limits | None]:
        """Suite and overall means of ``rows``' accuracies with their intervals (none without
        every task's samples)."""
        acc = {n: r.accuracy for n, r in rows.items() if r.accuracy is not None}
        suite = {n: suite_of(n) for n in rows}
        suites, overall = macro_scores(acc, suite)
        have = all((x := items.get(n)) is not None and x.everything for n in rows)
        if not (have and acc):
            return suites, overall, {}, None
        scores = {n: x.scores() for n in sorted(rows) if (x := items[n]) is not None}
        suite_ci, overall_ci = macro_intervals(scores, suite)
        return suites, overall, suite_ci, overall_ci

    def score(self, value: float | None, ci: Limits | None, n_tasks: int) -> Score:
        lo, hi = ci if ci is not None else (None, None)
        return Score(value=_r(value), ci_low=_r(lo), ci_high=_r(hi), n_tasks=n_tasks)


def _entry(eid: str, label: str, st: _EntryStats, c: Collected, key: str, group: int,
           rank: tuple[int, int, int], gap_p_holm: float | None) -> Entry:
    rows = st.rows
    runs = [r for r in c.runs if r.entry_key == key]
    res = runs[-1].res
    m = [rows[n] for n in st.measured]
    hz = [r.horizon_factor for r in m if r.horizon_factor is not None]
    d50f, d50h, n_d50, n_above = entry_horizons(rows, st.searched)
    # a task at the floor has nothing to analyse: its values would describe a constant answerer
    off = [r for r in rows.values() if r.status != "floor"]
    analyses = values_by_name((a.name, r, a.value) for r in off for a in r.analyses)
    floor_only = sorted({a.name for r in rows.values() for a in r.analyses if a.value is not None}
                        - {n for n, (_, vs) in analyses.items() if vs})
    gaps = values_by_name((n, r, g.value) for r in rows.values() for n, g in r.gaps.items())
    gap_lo, gap_hi = st.gap_ci if st.gap_ci is not None else (None, None)
    by_suite: dict[str, int] = {}
    for n in st.scored:
        by_suite[suite_of(n)] = by_suite.get(suite_of(n), 0) + 1
    limits = sorted({r.res.run.limit_per_bucket for r in runs}, key=lambda x: (x is None, x or 0))
    return Entry(
        id=eid, label=label, family=family_of(display_name(res.model.name)), group=group,
        rank=rank[0],
        rank_low=rank[1], rank_high=rank[2],
        overall=st.score(st.overall, st.overall_ci, len(st.scored)),
        overall_all=st.score(st.overall_all, st.overall_all_ci, len(rows)),
        suite_scores={s: st.score(v, st.suite_ci.get(s), by_suite[s])
                      for s, v in sorted(st.suites.items(), key=lambda kv: suite_sort_key(kv[0]))},
        id_accuracy=macro_mean([r.id_accuracy for r in rows.values()]),
        ood_accuracy=macro_mean([r.ood_accuracy for r in rows.values()]),
        gap=board_value(gap_info("id_ood"), m, [r.gap for r in m]), gap_ci_low=_r(gap_lo),
        gap_ci_high=_r(gap_hi), gap_p_holm=_r(gap_p_holm),
        n_gap_tasks=len(m), n_measured=len(st.own),
        n_floor=sum(r.status == "floor" for r in rows.values()),
        n_constant=sum(r.constant for r in rows.values()),
        n_ceiling=sum(r.status == "ceiling" for r in rows.values()),
        retention=board_value(gap_info("retention"), m, [r.retention for r in m]),
        horizon_factor=board_value(gap_info("horizon"), m, hz), n_horizon=len(hz),
        d50_factor=d50f, d50_factor_high=d50h, n_d50=n_d50, n_d50_above=n_above,
        gaps={n: board_value(gap_info(n), *v) for n, v in gaps.items()},
        gaps_n={n: len(v[1]) for n, v in gaps.items()},
        analyses={n: board_value(analysis_info(n), *v) for n, v in analyses.items()},
        analyses_n={n: len(v[1]) for n, v in analyses.items()}, analyses_floor_only=floor_only,
        n_tasks=len(rows),
        card=ModelCard(
            backend=res.model.backend, name=display_name(res.model.name),
            weights_sha256=res.model.weights_sha256,
            dtype=res.model.dtype, device=res.model.device, seed=res.run.seed,
            limits_per_bucket=limits,
            config={**config_of(res),
                    "model": f"{res.model.backend}:{display_name(res.model.name)}"},
            harness_versions=sorted({r.res.harness.version for r in runs}),
            git_commits=sorted({x for r in runs if (x := r.res.harness.git_commit)}),
            **card_provenance(res)),  # public id, revision, alias upstream and weights source
    )


def _ranks(group: Sequence[str], stats: Mapping[str, _EntryStats]
           ) -> dict[str, tuple[int, int, int]]:
    # ranked by the off-floor score; a group with no task off the floor for all: the all-task one
    off = any(stats[e].overall is not None for e in group)
    point = {e: stats[e].overall if off else stats[e].overall_all for e in group}
    ranks = {}
    for e in group:
        v = point[e]
        better = sum(1 for o in group if v is not None and (w := point[o]) is not None and w > v)
        ranks[e] = better + 1 if v is not None else len(group)
    cis = {e: ci for e in group
           if (ci := stats[e].overall_ci if off else stats[e].overall_all_ci) is not None}
    ranged = rank_ranges(cis) if len(cis) == len(group) and len(group) > 1 else {}
    return {e: (ranks[e], *ranged.get(e, (ranks[e], ranks[e]))) for e in group}


def _pairs(rows: Sequence[TaskRow], items: Mapping[str, ItemData | None]) -> list[PairTest]:
    out = []
    for i, a in enumerate(rows):
        for b in rows[i + 1:]:
            xa, xb = items.get(a.entry), items.get(b.entry)
            if xa is None or xb is None or not xa.everything or not xb.everything:
                continue
            out.append(pair_test(a.entry, b.entry, xa.scores(), xb.scores()))
    return out


def _describe(spec: Mapping[str, Any], ran: set[str], shots: set[int | None]
              ) -> tuple[list[TemplateInfo], str, str]:
    """Templates, few-shot setting and metric as the board's runs used them: the templates they
    scored, and ``--num-fewshot`` where the runs overrode the task's k."""
    tpls = [TemplateInfo(id=str(t.get("id", "")), prompt=str(t.get("prompt", "")))
            for t in spec.get("templates", []) or [] if isinstance(t, dict)
            and str(t.get("id", "")) in ran]
    fs = spec.get("fewshot") or {}
    k = fs.get("k", 0) if shots == {None} else None
    if k is None:  # the runs overrode k (--num-fewshot): say what they ran
        ks = sorted(fs.get("k", 0) if x is None else x for x in shots)
        words = "k = " + " / ".join(str(x) for x in ks) + " (--num-fewshot)"
        words = "zero-shot (--num-fewshot 0)" if ks == [0] else words
    else:
        words = f"k = {k}" + (", one shared exemplar set" if fs.get("shared") else
                              ", drawn per item") if k else "zero-shot"
    if fs.get("conditions"):
        words += "; conditions: " + ", ".join(
            f"{x.get('id')} (k = {x.get('k', 0)})" for x in fs["conditions"] if isinstance(x, dict))
    sc, out = spec.get("scoring") or {}, spec.get("output") or {}
    others = ", ".join(map(str, (sc.get("metrics") or [])[1:]))
    also = f" (primary; also {others})" if others else ""
    metric = f"{sc.get('metric', '?')}{also} on {out.get('type', '?')} output"
    return tpls, words, metric


def _viewer(items: Any) -> list[SampleRecord]:
    if items is None:
        return []
    seen: dict[str, int] = {}
    out = []
    for r in items.primary:
        if seen.get(r.bucket, 0) < VIEWER_PER_BUCKET:
            seen[r.bucket] = seen.get(r.bucket, 0) + 1
            out.append(r)
    return out


def assemble(c: Collected, title: str, target: float, min_per_bucket: int,
             stale: Sequence[str]) -> tuple[Leaderboard, dict[tuple[str, str], list[SampleRecord]]]:
    """The leaderboard, and the samples each (entry, task) viewer page shows."""
    rows = rows_of(c)
    key_of = {c.ids[k]: k for k in c.cells}
    items = {(c.ids[k], n): cell.items for k, by in c.cells.items() for n, cell in by.items()}
    groups: dict[tuple[str, ...], list[str]] = {}
    for e in sorted(rows):
        groups.setdefault(tuple(sorted(rows[e])), []).append(e)
    common = {e: set.intersection(*({n for n, r in rows[o].items() if r.gap is not None}
                                    for o in g_)) for g_ in groups.values() for e in g_}
    off_floor = {e: set.intersection(*({n for n, r in rows[o].items() if off_floor_row(r)}
                                       for o in g_)) for g_ in groups.values() for e in g_}
    searched = {e: set.intersection(*({n for n, r in rows[o].items() if r.d50 is not None
                                       and r.d50.status != "misfit"} for o in g_))
                for g_ in groups.values() for e in g_}
    stats = {e: _EntryStats(rows[e], {n: items[(e, n)] for n in rows[e]}, common[e],
                            off_floor[e], searched[e]) for e in rows}
    ordered = sorted(groups, key=lambda g: (-len(g), g))
    gp = holm([stats[e].gap_p for e in sorted(rows)])
    gap_p = dict(zip(sorted(rows), gp, strict=True))
    entries = []
    for gi, g in enumerate(ordered):
        ranks = _ranks(groups[g], stats)
        for e in groups[g]:
            entries.append(_entry(e, c.labels[key_of[e]], stats[e], c, key_of[e], gi, ranks[e],
                                  gap_p[e]))
    entries.sort(key=lambda e: (e.group, e.rank, e.label))
    order = [e.id for e in entries]
    # board-wide Holm over every measured task gap
    flat = [(e, n) for e in order for n in sorted(rows[e], key=task_sort_key)]
    props = {(e, n): _role_props(rows[e][n], items[(e, n)]) for e, n in flat}
    ps = holm([task_gap_p(q) if rows[e][n].gap is not None and (q := props[(e, n)]) is not None
               else None for e, n in flat])
    eps = holm([edge_p(rows[e][n], x.primary if (x := items[(e, n)]) is not None else None)
                for e, n in flat])
    viewer: dict[tuple[str, str], list[SampleRecord]] = {}
    for (e, n), p, ep in zip(flat, ps, eps, strict=True):
        upd: dict[str, Any] = {"gap_p_holm": _r(p), "edge_p_holm": _r(ep)}
        if items[(e, n)] is not None:
            from harness.leaderboard.plots import task_file_stem

            upd["viewer"] = f"viewer/{e}/{task_file_stem(n)}.html"
            viewer[(e, n)] = _viewer(items[(e, n)])
        rows[e][n] = rows[e][n].model_copy(update=upd)
    all_tasks = sorted({n for e in rows for n in rows[e]}, key=task_sort_key)
    boards, all_pairs = [], []
    for n in all_tasks:
        here = [rows[e][n] for e in order if n in rows[e]]
        pairs = _pairs(here, {r.entry: items[(r.entry, n)] for r in here})
        all_pairs.append(pairs)
        boards.append((n, here))
    adj = iter(holm([p.p for ps_ in all_pairs for p in ps_]))
    tasks = [_task_board(n, here, [p.model_copy(update={"p_holm": _r(next(adj))}) for p in pairs],
                         c, n in stale, items)
             for (n, here), pairs in zip(boards, all_pairs, strict=True)]
    cells = {(e, n): c.cells[key_of[e]][n] for e in order for n in rows[e]}
    board = Leaderboard(
        schema_version=LEADERBOARD_SCHEMA_VERSION, kind=LEADERBOARD_KIND, title=title,
        harness_version=__version__, correction=CORRECTION,
        precision=precision(
            [(e, n, rows[e][n], cells[(e, n)].task, cells[(e, n)].run.target_ci)
             for e in order for n in sorted(rows[e], key=task_sort_key)],
            target, min_per_bucket),
        stale_tasks=[n for n in all_tasks if n in stale],
        suites=sorted({suite_of(n) for n in all_tasks}, key=suite_sort_key),
        entries=entries, families=families(entries, rows, {t.task: t.buckets for t in tasks}),
        tasks=tasks, sources=sources(c),
        conflicts=c.conflicts)
    return board, viewer


def _task_board(name: str, rows: list[TaskRow], pairs: list[PairTest], c: Collected,
                stale: bool, items: Mapping[tuple[str, str], Any]) -> TaskBoard:
    cells = [cell for by in c.cells.values() for n, cell in by.items() if n == name]
    first = cells[0].task
    spec = first.spec
    buckets: dict[tuple[int, str], BucketInfo] = {}
    for cell in cells:
        for b in cell.task.templates[0].buckets:
            buckets.setdefault((b.index, b.bucket), BucketInfo(
                label=b.bucket, index=b.index, role=b.role, lo=b.lo, hi=b.hi))
    ran = {t.template for cell in cells for t in cell.task.templates}
    shots = {cell.run.res.run.num_fewshot for cell in cells}
    tpls, fewshot, metric = _describe(spec, ran, shots)
    example = next((x.primary[0].prompt for r in rows
                    if (x := items[(r.entry, name)]) is not None and x.primary), None)
    card = spec.get("card")
    return TaskBoard(
        task=name, suite=suite_of(name), description=str(spec.get("description", "")),
        citations=[str(x) for x in spec.get("citations", []) or []],
        card=card if isinstance(card, dict) else None, difficulty_name=first.difficulty_name,
        templates=tpls, fewshot=fewshot, metric=metric, example_prompt=example,
        shift_in=("the exemplars (ID only) and the input" if has_exemplars(spec) else
                  "the input only: zero-shot, so for a pretrained model the ID/OOD split is one "
                  "of difficulty (a shift only for a model trained on the ID range)"),
        buckets=[buckets[k] for k in sorted(buckets)], rows=rows, pairs=pairs, stale=stale)


@dataclass
class Merged:
    """A leaderboard with what building it needs besides: inputs and viewer samples."""

    board: Leaderboard  # the leaderboard
    collected: Collected  # the merged inputs (copies to make, tasks skipped)
    viewer: dict[tuple[str, str], list[SampleRecord]]  # samples per viewer page


def board_from_runs(paths: Sequence[Path], title: str = "Leaderboard", samples: str = "copy",
            gzip_samples: bool = False, skip_invalid: bool = False,
            target: float = TARGET, min_per_bucket: int = MIN_PER_BUCKET) -> Merged:
    """Read, merge and rank runs (see :func:`harness.leaderboard.collect.gather`), marking
    as stale the tasks whose spec differs from this checkout's, whose items this checkout
    makes differently (``stale.drifted``), or whose horizon search it runs otherwise
    (``stale.searched_otherwise``)."""
    c = gather(paths, samples=samples, gzip_samples=gzip_samples, skip_invalid=skip_invalid)
    specs: dict[str, set[str]] = {}
    read: dict[Path, list[str]] = {}  # run folder → the builtin tasks the board takes from it
    for by_task in c.cells.values():
        for n, cell in by_task.items():
            if cell.task.origin == "builtin":
                specs.setdefault(n, set()).add(cell.task.spec_sha256)
                read.setdefault(cell.run.given.parent, []).append(n)
    stale = sorted({*stale_tasks(specs), *drifted(read.items()),
                    *searched_otherwise(read.items())})
    board, viewer = assemble(c, title, target, min_per_bucket, stale)
    return Merged(board, c, viewer)
