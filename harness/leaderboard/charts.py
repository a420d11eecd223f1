"""Inline SVG charts for the static site, built as strings in Python (no JS, no CDN).

Every piece of text that enters the markup passes through ``markupsafe.escape``; numbers are
formatted by this module. Styling uses SVG presentation attributes only (no ``style=``), so the
pages work under a strict Content-Security-Policy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from harness.leaderboard.board_file import Entry, TaskBoard, TaskRow
from harness.scoring.horizon_model import fitted_accuracy

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")


def color(i: int) -> str:
    """The colour of the i-th entry (rank order), cycling through a 10-colour palette."""
    return PALETTE[i % len(PALETTE)]


def _f(x: float) -> str:
    return f"{x:.1f}"


def _legend_positions(labels: Sequence[str], x0: int, y0: int, width: int) -> list[tuple[int, int]]:
    """Legend items laid out left to right, wrapping (text width estimated at 6.5 px/char)."""
    out, x, y = [], x0, y0
    for lab in labels:
        w = 16 + int(6.5 * len(lab)) + 18
        if x > x0 and x + w > width:
            x, y = x0, y + 16
        out.append((x, y))
        x += w
    return out


def baseline_points(task: TaskBoard) -> list[tuple[int, float]]:
    """(bucket position, baseline) of every evaluated bucket, from the first row that has
    baselines: the best constant answer depends on the items, the same for every entry."""
    pos = {b.label: i for i, b in enumerate(task.buckets)}
    for row in task.rows:
        if any(c.baseline is not None for c in row.buckets):
            return [(pos[c.label], c.baseline) for c in row.buckets
                    if c.label in pos and c.baseline is not None and c.n]
    return []


def curve_svg(task: TaskBoard, entries: Sequence[Entry], width: int = 720,
              plot_height: int = 260) -> Markup:
    """Per-bucket accuracy: one line per entry with its Wilson 95% band; the ID/OOD boundary
    is a dashed vertical line."""
    left, right, top = 48, 16, 24
    pw, ph = width - left - right, plot_height
    legend = _legend_positions([_label(entries, r.entry) for r in task.rows], left,
                               top + ph + 56, width - right)
    height = (legend[-1][1] if legend else top + ph + 40) + 26
    labels = [b.label for b in task.buckets]
    k = max(len(labels), 1)

    def x(i: int) -> float:
        return left + (pw * (i + 0.5) / k)

    def y(v: float) -> float:
        return top + ph * (1.0 - v)

    parts = [f'<svg class="chart curve" xmlns="http://www.w3.org/2000/svg" role="img" '
             f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
             f'data-series="{len(task.rows)}">',
             f"<title>{escape(task.task)}: accuracy per {escape(task.difficulty_name)}</title>"]
    for v in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{_f(y(v))}" y2="{_f(y(v))}" '
                     f'stroke="#ddd" stroke-width="1"/>')
        parts.append(f'<text x="{left - 6}" y="{_f(y(v) + 4)}" text-anchor="end" '
                     f'font-size="11">{int(v * 100)}%</text>')
    for i, b in enumerate(task.buckets):
        parts.append(f'<text x="{_f(x(i))}" y="{top + ph + 16}" text-anchor="middle" '
                     f'font-size="11">{escape(b.label)}</text>')
        if i and b.role != task.buckets[i - 1].role:
            bx = _f((x(i - 1) + x(i)) / 2)
            parts.append(f'<line class="boundary" x1="{bx}" x2="{bx}" y1="{top}" '
                         f'y2="{top + ph}" stroke="#444" stroke-dasharray="5,4"/>')
            parts.append(f'<text x="{bx}" y="{top - 8}" text-anchor="middle" font-size="11">'
                         f'{escape(task.buckets[i - 1].role)} | {escape(b.role)}</text>')
    parts.append(f'<text x="{left + pw / 2}" y="{top + ph + 34}" text-anchor="middle" '
                 f'font-size="12">{escape(task.difficulty_name)}</text>')
    pos = {lab: i for i, lab in enumerate(labels)}
    base = baseline_points(task)
    if base:  # the items' own floor: the best constant answer (the same items for every entry)
        d = " ".join(f"{'M' if n == 0 else 'L'}{_f(x(i) - pw / k / 2.5)},{_f(y(v))} "
                     f"L{_f(x(i) + pw / k / 2.5)},{_f(y(v))}"
                     for n, (i, v) in enumerate(base))
        parts.append(f'<path class="baseline" d="{d}" fill="none" stroke="#888" '
                     f'stroke-width="1.5" stroke-dasharray="6,3"><title>baseline: the best '
                     f'constant answer on each bucket\'s items</title></path>')
    order = {e.id: n for n, e in enumerate(entries)}
    m = len(task.rows)
    step = min(6.0, pw / k / (2 * max(m, 1)))  # identical lines are offset, never hidden
    for n_row, row in enumerate(task.rows):
        c = color(order.get(row.entry, 0))
        dx = (n_row - (m - 1) / 2) * step
        pts = [(pos[cell.label], cell) for cell in row.buckets
               if cell.label in pos and cell.accuracy is not None]
        band = [(i, cl) for i, cl in pts if cl.ci_low is not None and cl.ci_high is not None]
        if len(band) > 1:
            upper = " ".join(f"{_f(x(i) + dx)},{_f(y(cl.ci_high or 0.0))}" for i, cl in band)
            lower = " ".join(f"{_f(x(i) + dx)},{_f(y(cl.ci_low or 0.0))}"
                             for i, cl in reversed(band))
            parts.append(f'<polygon class="band" points="{upper} {lower}" fill="{c}" '
                         f'fill-opacity="0.12" stroke="{c}" stroke-opacity="0.5" '
                         f'stroke-dasharray="2,3"/>')
        if len(pts) > 1:
            d = " ".join(f"{'M' if n == 0 else 'L'}{_f(x(i) + dx)},{_f(y(cl.accuracy or 0.0))}"
                         for n, (i, cl) in enumerate(pts))
            parts.append(f'<path class="series" d="{d}" fill="none" stroke="{c}" '
                         f'stroke-width="2"/>')
        for i, cl in band:
            parts.append(f'<line class="whisker" x1="{_f(x(i) + dx)}" x2="{_f(x(i) + dx)}" '
                         f'y1="{_f(y(cl.ci_low or 0.0))}" y2="{_f(y(cl.ci_high or 0.0))}" '
                         f'stroke="{c}" stroke-width="1.5"/>')
        parts += _fitted(task, row, x, dx, y, c)
        for i, cl in pts:
            parts.append(f'<circle cx="{_f(x(i) + dx)}" cy="{_f(y(cl.accuracy or 0.0))}" r="3" '
                         f'fill="{c}"><title>{escape(_label(entries, row.entry))} '
                         f'{escape(cl.label)}: {100 * (cl.accuracy or 0.0):.1f}% '
                         f'(n={cl.n})</title></circle>')
    for (lx, ly), row in zip(legend, task.rows, strict=True):
        c = color(order.get(row.entry, 0))
        parts.append(f'<rect x="{lx}" y="{ly - 9}" width="12" height="10" fill="{c}"/>')
        parts.append(f'<text class="legend" x="{lx + 16}" y="{ly}" font-size="11">'
                     f'{escape(_label(entries, row.entry))}</text>')
    ly = (legend[-1][1] if legend else top + ph + 40) + 16
    parts.append(f'<rect x="{left}" y="{ly - 9}" width="12" height="10" fill="#888" '
                 f'fill-opacity="0.12" stroke="#888" stroke-dasharray="2,3"/>')
    parts.append(f'<text class="legend band-legend" x="{left + 16}" y="{ly}" font-size="11">'
                 "shaded band and whisker: Wilson 95% CI of the model in its colour "
                 "(overlapping bands mix); lines are offset sideways so equal ones stay "
                 "visible; grey dashes: the baseline (best constant answer)"
                 + ("; dotted: the curve the adaptive horizon search fitted, | at its d50"
                    if any(r.d50 and r.d50.d50 for r in task.rows) else "") + "</text>")
    parts.append("</svg>")
    return Markup("".join(parts))


def _fitted(task: TaskBoard, row: TaskRow, bx: Callable[[int], float], dx: float,
            y: Callable[[float], float], c: str, steps: int = 8) -> list[str]:
    """The adaptive search's fitted curve over the bucket axis (each bucket at its geometric
    middle difficulty, log-interpolated between buckets) and a tick at d50."""
    h = row.d50
    if h is None or h.d50 is None or len(task.buckets) < 2:
        return []

    def x(i: int) -> float:
        return bx(i) + dx

    mids = [math.log(max(b.lo, 1.0) * max(b.hi if b.hi == b.lo else b.hi - 1, 1.0)) / 2
            for b in task.buckets]
    d50 = math.log(h.d50)

    def acc(ln_d: float) -> float:
        assert h is not None and h.d50 is not None
        return fitted_accuracy(math.exp(ln_d), h.d50, h.spread, h.top, h.baseline, h.shapes)

    pts = []
    for i in range(len(mids) - 1):
        for j in range(steps + (i == len(mids) - 2)):
            t = j / steps
            pts.append((x(i) + t * (x(i + 1) - x(i)), acc(mids[i] + t * (mids[i + 1] - mids[i]))))
    d = " ".join(f"{'M' if n == 0 else 'L'}{_f(px)},{_f(y(v))}" for n, (px, v) in enumerate(pts))
    out = [f'<path class="fitted" d="{d}" fill="none" stroke="{c}" stroke-width="1.5" '
           f'stroke-dasharray="1,3"><title>fitted by the horizon search: d50 = {h.d50:.3g}'
           f'</title></path>']
    for i in range(len(mids) - 1):
        if mids[i] <= d50 <= mids[i + 1] and mids[i + 1] > mids[i]:
            t = (d50 - mids[i]) / (mids[i + 1] - mids[i])
            px, py = _f(x(i) + t * (x(i + 1) - x(i))), y((h.top + h.baseline) / 2)
            out.append(f'<line class="d50" x1="{px}" x2="{px}" y1="{_f(py - 7)}" '
                       f'y2="{_f(py + 7)}" stroke="{c}" stroke-width="2"/>')
    return out


def _label(entries: Sequence[Entry], entry_id: str) -> str:
    return next((e.label for e in entries if e.id == entry_id), entry_id)


@dataclass(frozen=True)
class Bar:
    """One bar of a gap chart (fractions; the chart shows points)."""

    label: str  # the entry's label
    value: float | None  # the gap (None: not measured)
    lo: float | None  # CI lower bound
    hi: float | None  # CI upper bound
    color: str  # bar colour
    note: str | None = None  # shown instead of a bar when there is no value ("floor", ...)


def gap_bars_svg(bars: Sequence[Bar], title: str, width: int = 720) -> Markup:
    """Horizontal bars of ID − OOD gaps in points with 95% CI whiskers; zero is marked."""
    left, right, row_h, top = 220, 24, 26, 22
    height = top + row_h * max(len(bars), 1) + 24
    vals = [v for b in bars for v in (b.value, b.lo, b.hi) if v is not None]
    lo_v, hi_v = min([0.0, *vals]), max([0.0, *vals])
    if hi_v - lo_v < 1e-9:
        hi_v = lo_v + 1.0
    pw = width - left - right

    def x(v: float) -> float:
        return left + pw * (v - lo_v) / (hi_v - lo_v)

    parts = [f'<svg class="chart gaps" xmlns="http://www.w3.org/2000/svg" role="img" '
             f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">',
             f"<title>{escape(title)}</title>",
             f'<line x1="{_f(x(0))}" x2="{_f(x(0))}" y1="{top - 6}" y2="{height - 20}" '
             f'stroke="#444" stroke-width="1"/>',
             f'<text x="{_f(x(lo_v))}" y="{height - 6}" font-size="11">{100 * lo_v:.0f}</text>',
             f'<text x="{_f(x(hi_v))}" y="{height - 6}" font-size="11" text-anchor="end">'
             f'{100 * hi_v:.0f} pts</text>']
    for n, b in enumerate(bars):
        yc = top + row_h * n + row_h / 2
        parts.append(f'<text x="{left - 8}" y="{_f(yc + 4)}" text-anchor="end" font-size="12">'
                     f'{escape(b.label)}</text>')
        if b.value is None:
            parts.append(f'<text class="nogap" x="{_f(x(0) + 4)}" y="{_f(yc + 4)}" '
                         f'font-size="11">{escape(b.note or "n/a")}: no gap</text>')
            continue
        x0, x1 = sorted((x(0), x(b.value)))
        parts.append(f'<rect class="bar" x="{_f(x0)}" y="{_f(yc - 8)}" width="{_f(x1 - x0)}" '
                     f'height="16" fill="{b.color}" fill-opacity="0.75"><title>'
                     f'{escape(b.label)}: {100 * b.value:.1f} pts</title></rect>')
        if b.lo is not None and b.hi is not None:
            parts.append(f'<line class="ci" x1="{_f(x(b.lo))}" x2="{_f(x(b.hi))}" y1="{_f(yc)}" '
                         f'y2="{_f(yc)}" stroke="#000" stroke-width="1.5"/>')
            for e in (b.lo, b.hi):
                parts.append(f'<line x1="{_f(x(e))}" x2="{_f(x(e))}" y1="{_f(yc - 5)}" '
                             f'y2="{_f(yc + 5)}" stroke="#000" stroke-width="1.5"/>')
    parts.append("</svg>")
    return Markup("".join(parts))
