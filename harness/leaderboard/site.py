"""The static site: ``index.html``, ``tasks/*.html``, ``models/*.html`` and ``assets/``.

Pages open from ``file://`` (relative links only, no server, no network, no CDN). Templates are
package data under ``templates/`` rendered by a sandboxed Jinja2 environment with autoescaping:
every string from a results file reaches the HTML escaped; the only markup inserted unescaped is
the SVG from :mod:`harness.leaderboard.charts`, which escapes its own text. Pages carry a
Content-Security-Policy that allows only the site's own script and stylesheet.
"""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from harness.leaderboard.board_file import Leaderboard, TaskBoard, TaskRow
from harness.leaderboard.charts import Bar, color, curve_svg, gap_bars_svg
from harness.leaderboard.claims import baseline_shift
from harness.leaderboard.collect import VIEWER_PER_BUCKET, display_name
from harness.leaderboard.compare_pages import ComparePage
from harness.leaderboard.families import MIN_FITTED, SUCCESS, seed_words
from harness.leaderboard.horizons import d50_text, d50_title, d50_value, entry_d50_text
from harness.leaderboard.paths import SafeWriter
from harness.leaderboard.plots import task_file_stem
from harness.leaderboard.precision import entry_mark, precision_words, target_words
from harness.leaderboard.registered import (
    analysis_columns,
    analysis_title,
    arrow,
    better,
    gap_arrow,
    gap_better,
    gap_columns,
    gap_title,
    task_gap_columns,
)
from harness.leaderboard.scores import ALPHA
from harness.scoring.floors import FLOOR_RULE
from harness.scoring.records import SampleRecord

_TEMPLATES = "templates"


def _pct(x: float | None) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}"


def _num(x: float | None) -> str:
    """3 significant digits; whole numbers from 100 on without exponent (1024, not 1.02e+03)."""
    if x is None or math.isnan(x):
        return "-"
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.3g}"


def _pval(x: float | None) -> str:
    """A p-value: 2 significant digits below 0.001, else 3 decimals; missing as ``-``."""
    if x is None:
        return "-"
    return f"{x:.2g}" if x < 0.001 else f"{x:.3f}"


def _public(model: str) -> str:
    """``backend:name`` with a local absolute path reduced to its last part."""
    backend, sep, name = model.partition(":")
    return f"{backend}{sep}{display_name(name)}" if sep else display_name(model)


def _stars(p: float | None) -> str:
    """``*`` when a corrected p-value is below 0.05 (the site's significance mark)."""
    return "*" if p is not None and p < ALPHA else ""


def _dv(x: float | None) -> str:
    """A sortable data-value: the number, or empty for missing."""
    return "" if x is None else repr(float(x))


def environment() -> SandboxedEnvironment:
    """The sandboxed, autoescaping Jinja2 environment over the packaged templates."""
    env = SandboxedEnvironment(
        loader=jinja2.PackageLoader("harness.leaderboard", _TEMPLATES),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
    )
    env.filters.update(pct=_pct, num=_num, dv=_dv, stem=task_file_stem, atitle=analysis_title,
                       better=better, arrow=arrow, gtitle=gap_title, gbetter=gap_better,
                       garrow=gap_arrow, pval=_pval, stars=_stars, public=_public,
                       cellmap=lambda cells: {c.label: c for c in cells},
                       acell=lambda cells, name: next((c for c in cells if c.name == name), None))
    env.filters.update(d50=d50_text, d50value=d50_value, d50title=d50_title,
                       target_words=target_words,
                       against=lambda r: baseline_shift(r) is not None,
                       entry_d50=lambda e: entry_d50_text(e.d50_factor, e.n_d50, e.n_d50_above,
                                                          e.d50_factor_high))
    env.globals["seed_words"] = seed_words
    env.globals["floor_rule"] = FLOOR_RULE
    env.globals["seed_rule"] = {"success_pct": f"{100 * SUCCESS:g}", "min_fitted": MIN_FITTED}
    return env


def _copy_assets(w: SafeWriter) -> None:
    folder = resources.files("harness.leaderboard").joinpath(_TEMPLATES).joinpath("assets")
    for item in folder.iterdir():
        if item.is_file():
            w.write_bytes(f"assets/{item.name}", item.read_bytes())


@dataclass(frozen=True)
class Viewer:
    """What the site shows beyond leaderboard.json: samples per (entry, task) viewer page, and
    the published comparisons."""

    samples: dict[tuple[str, str], list[SampleRecord]]  # (Entry.id, task) → samples shown
    comparisons: list[ComparePage] = field(default_factory=list)  # compare --json pages


def _task_gap_bars(board: Leaderboard, task: TaskBoard) -> list[Bar]:
    order = {e.id: n for n, e in enumerate(board.entries)}
    label = {e.id: e.label for e in board.entries}
    return [Bar(label[r.entry], r.gap, r.gap_ci_low, r.gap_ci_high, color(order[r.entry]),
                None if r.status == "measured" else r.status) for r in task.rows]


def write_site(board: Leaderboard, out: Path, viewer: Viewer | None = None,
               png: bool = True) -> list[Path]:
    """Render every page into *out* (existing site pages there are replaced; every path is
    checked to stay inside *out* and no link is written through)."""
    viewer = viewer or Viewer({})
    env = environment()
    for sub in ("tasks", "models", "viewer"):
        shutil.rmtree(out / sub, ignore_errors=True)
    w = SafeWriter(out)
    _copy_assets(w)
    analyses = analysis_columns(board)
    rows: dict[tuple[str, str], TaskRow] = {(t.task, r.entry): r for t in board.tasks
                                            for r in t.rows}
    labels = {e.id: e.label for e in board.entries}
    env.filters["precision_mark"] = lambda entry: entry_mark(board.precision, entry)
    common: dict[str, Any] = {"board": board, "png": png, "analyses": analyses,
                              "gaps": gap_columns(board), "labels": labels,
                              "comparisons": viewer.comparisons}
    entry_bars = [Bar(e.label, e.gap, e.gap_ci_low, e.gap_ci_high, color(n))
                  for n, e in enumerate(board.entries)]
    files = [w.write_text("index.html", env.get_template("index.html").render(
        root="", rows=rows, gap_chart=gap_bars_svg(entry_bars, "mean ID − OOD gap"),
        searched=any(e.n_d50 for e in board.entries),
        precision_text=precision_words(board.precision, labels), **common))]
    task_tpl = env.get_template("task.html")
    for t in board.tasks:
        task_analyses = sorted({a.name for r in t.rows for a in r.analyses})
        files.append(w.write_text(f"tasks/{task_file_stem(t.task)}.html", task_tpl.render(
            root="../", task=t, curve=curve_svg(t, board.entries),
            gap_chart=gap_bars_svg(_task_gap_bars(board, t), f"{t.task}: ID − OOD gap"),
            id_labels=[b.label for b in t.buckets if b.role == "ID"],
            ood_labels=[b.label for b in t.buckets if b.role == "OOD"],
            searched=any(r.d50 for r in t.rows),
            other_metrics=list(dict.fromkeys(m for r in t.rows for m in r.metrics)),
            **{**common, "analyses": task_analyses, "gaps": task_gap_columns(t)})))
    model_tpl = env.get_template("model.html")
    for e in board.entries:
        mine = [(t, rows[(t.task, e.id)]) for t in board.tasks if (t.task, e.id) in rows]
        files.append(w.write_text(f"models/{e.id}.html", model_tpl.render(
            root="../", entry=e, rows=mine,
            sources=[s for s in board.sources if s.entry == e.id],
            config=json.dumps(e.card.config, sort_keys=True, ensure_ascii=False), **common)))
    view_tpl = env.get_template("viewer.html")
    for t in board.tasks:
        for r in t.rows:
            if r.viewer is None:
                continue
            shown = viewer.samples.get((r.entry, t.task), [])
            files.append(w.write_text(r.viewer, view_tpl.render(
                root="../../", task=t, row=r, samples=shown, per_bucket=VIEWER_PER_BUCKET,
                **common)))
    cmp_tpl = env.get_template("compare.html")
    for page in viewer.comparisons:
        files.append(w.write_text(page.page, cmp_tpl.render(
            root="../", page=page, c=page.comparison, **common)))
    return files
