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
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from harness.leaderboard.charts import Bar, color, curve_svg, gap_bars_svg
from harness.leaderboard.paths import SafeWriter
from harness.leaderboard.plots import task_file_stem
from harness.leaderboard.schema import Leaderboard, TaskBoard, TaskRow
from harness.leaderboard.tables import analysis_columns, analysis_title

_TEMPLATES = "templates"


def _pct(x: float | None) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}"


def _num(x: float | None) -> str:
    """3 significant digits; whole numbers from 100 on without exponent (1024, not 1.02e+03)."""
    if x is None or math.isnan(x):
        return "-"
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.3g}"


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
                       cellmap=lambda cells: {c.label: c for c in cells},
                       acell=lambda cells, name: next((c for c in cells if c.name == name), None))
    return env


def _copy_assets(w: SafeWriter) -> None:
    folder = resources.files("harness.leaderboard").joinpath(_TEMPLATES).joinpath("assets")
    for item in folder.iterdir():
        if item.is_file():
            w.write_bytes(f"assets/{item.name}", item.read_bytes())


def _task_gap_bars(board: Leaderboard, task: TaskBoard) -> list[Bar]:
    order = {e.id: n for n, e in enumerate(board.entries)}
    label = {e.id: e.label for e in board.entries}
    return [Bar(label[r.entry], r.gap, r.gap_ci_low, r.gap_ci_high, color(order[r.entry]))
            for r in task.rows]


def write_site(board: Leaderboard, out: Path, png: bool = True) -> list[Path]:
    """Render every page into *out* (existing site pages there are replaced; every path is
    checked to stay inside *out* and no link is written through)."""
    env = environment()
    for sub in ("tasks", "models"):
        shutil.rmtree(out / sub, ignore_errors=True)
    w = SafeWriter(out)
    _copy_assets(w)
    analyses = analysis_columns(board)
    rows: dict[tuple[str, str], TaskRow] = {(t.task, r.entry): r for t in board.tasks
                                            for r in t.rows}
    common: dict[str, Any] = {"board": board, "png": png, "analyses": analyses}
    entry_bars = [Bar(e.label, e.gap, e.gap_ci_low, e.gap_ci_high, color(n))
                  for n, e in enumerate(board.entries)]
    files = [w.write_text("index.html", env.get_template("index.html").render(
        root="", rows=rows, gap_chart=gap_bars_svg(entry_bars, "mean ID − OOD gap"), **common))]
    labels = {e.id: e.label for e in board.entries}
    task_tpl = env.get_template("task.html")
    for t in board.tasks:
        task_analyses = sorted({a.name for r in t.rows for a in r.analyses})
        files.append(w.write_text(f"tasks/{task_file_stem(t.task)}.html", task_tpl.render(
            root="../", task=t, labels=labels, curve=curve_svg(t, board.entries),
            gap_chart=gap_bars_svg(_task_gap_bars(board, t), f"{t.task}: ID − OOD gap"),
            id_labels=[b.label for b in t.buckets if b.role == "ID"],
            ood_labels=[b.label for b in t.buckets if b.role == "OOD"],
            **{**common, "analyses": task_analyses})))
    model_tpl = env.get_template("model.html")
    for e in board.entries:
        mine = [(t, rows[(t.task, e.id)]) for t in board.tasks if (t.task, e.id) in rows]
        files.append(w.write_text(f"models/{e.id}.html", model_tpl.render(
            root="../", entry=e, rows=mine,
            config=json.dumps(e.card.config, sort_keys=True, ensure_ascii=False), **common)))
    return files
