"""What the board may say about a model's fall, one rule per claim, used by every surface.

A board's prose (``leaderboard/summary``), its pages and the docs that quote it say three kinds
of things about where a model loses accuracy. Each is decided here, once:

- **significant**: a test survives the board's own correction (Holm–Bonferroni over every test
  of its kind on the board: every task's ID − OOD gap, every task's edge gap), never an
  unadjusted 95% interval (``significant``);
- **at the ID edge**: the edge gap (last ID bucket − first OOD bucket) is significant, the
  baselines of the two roles agree (see below), and the matched-exemplar control, where the
  task has one, does not put the fall in the exemplars (``fall_kind`` "edge");
- **exemplar shift**: the control's shift term is above 0 and its difficulty term is not: the
  model answers the OOD items when its exemplars come from their own bucket, so the fall is in
  the exemplars, not the difficulty ("shift");
- **inside the ID range**: a significant pooled gap whose adaptive search puts the whole d50
  interval below the last ID value ("inside"). An edge test with 8 items per bucket that fails
  to reject says nothing, so without a search nothing is said;
- **against the baselines**: the OOD items' constant-answer baseline differs from the ID items'
  by more than the gap's interval reaches from its estimate, so a gap or difficulty term can come
  from what the items allow rather than from the model ("baseline"): shown beside the two
  baselines, never listed as a finding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from harness.leaderboard.board_file import BucketCell, Split, TaskRow
from harness.leaderboard.scores import ALPHA
from harness.scoring.aggregates import not_above
from harness.scoring.intervals import Proportion, diff_interval, p_value, proportion
from harness.scoring.records import SampleRecord

FallKind = Literal["edge", "shift", "inside", "baseline"]


def significant(p_holm: float | None) -> bool:
    """A Holm-adjusted p-value below the board's α."""
    return p_holm is not None and p_holm < ALPHA


def _bucket_prop(label: str, cells: Sequence[BucketCell],
                 primary: Sequence[SampleRecord] | None) -> Proportion | None:
    """A bucket's scores as a proportion: from its samples (one per item in the primary
    report), else from its cell (exact for binary scores)."""
    if primary:
        got = [r.score for r in primary if r.bucket == label]
        return proportion(got) if got else None
    cell = next((c for c in cells if c.label == label), None)
    if cell is None or cell.accuracy is None or not cell.n:
        return None
    return Proportion(cell.accuracy, cell.n, float(cell.n))


def edge_p(row: TaskRow, primary: Sequence[SampleRecord] | None) -> float | None:
    """p-value of edge gap = 0, inverting the same Newcombe interval the edge cell shows."""
    if row.edge is None or row.edge_buckets is None:
        return None
    a, _, b = row.edge_buckets.partition(" → ")
    pa, pb = _bucket_prop(a, row.buckets, primary), _bucket_prop(b, row.buckets, primary)
    if pa is None or pb is None:
        return None
    return p_value(lambda lv: diff_interval(pa, pb, lv))


def baseline_shift(row: TaskRow, split: Split | None = None) -> float | None:
    """OOD baseline − ID baseline where it exceeds how far the interval of ``split`` (default:
    the row's gap) reaches from its estimate: the gap may come from the items (None: it does
    not, or a baseline is unknown)."""
    if row.baseline is None or row.ood_baseline is None:
        return None
    if split is not None:
        value, lo, hi = split.value, split.ci_low, split.ci_high
    elif row.gap is not None and row.gap_ci_low is not None and row.gap_ci_high is not None:
        value, lo, hi = row.gap, row.gap_ci_low, row.gap_ci_high
    else:
        return None
    shift = row.ood_baseline - row.baseline
    return shift if abs(shift) > max(value - lo, hi - value) else None


def against_baselines(row: TaskRow, split: Split | None = None) -> str:
    """`` (against the baselines: ID b, OOD b')`` after a gap (or split part) the items'
    baselines explain as well (``baseline_shift``), in points; empty where they do not."""
    if baseline_shift(row, split) is None:
        return ""
    assert row.baseline is not None and row.ood_baseline is not None
    return (f" (against the baselines: ID {100 * row.baseline:.1f}, "
            f"OOD {100 * row.ood_baseline:.1f})")


def off_floor(row: TaskRow) -> bool:
    """Whether a row's task counts towards the headline scores: not at the floor, and where its
    primary report evaluates no ID items (a task whose conditions ask only OOD buckets, such
    as SGR's), its pooled OOD accuracy credibly above the OOD items' baseline by the same test
    (the floor rule has no ID accuracy to judge there)."""
    if row.status == "floor":
        return False
    if row.n_id or row.ood_accuracy is None or row.ood_baseline is None or not row.n_ood:
        return True
    return not not_above(row.ood_accuracy * row.n_ood, row.n_ood, row.ood_baseline)


def _in_exemplars(row: TaskRow) -> bool:
    return (row.shift is not None and row.shift.ci_low > 0
            and (row.difficulty is None or row.difficulty.ci_low <= 0))


def _inside(row: TaskRow) -> bool:
    c = row.d50
    return (c is not None and c.status == "measured" and c.ci_high is not None
            and c.ci_high < c.edge)


def fall_kind(row: TaskRow) -> FallKind | None:
    """What the board says of a row's fall (see module); None: nothing."""
    if row.status != "measured":
        return None
    edge = significant(row.edge_p_holm)
    gap = significant(row.gap_p_holm)
    if not edge and not gap:
        return None
    if baseline_shift(row) is not None:
        return "baseline"
    if _in_exemplars(row):
        return "shift"
    if edge:
        return "edge"
    return "inside" if _inside(row) else None


WORDS: dict[FallKind, str] = {
    "edge": "a significant fall at the ID edge (last ID bucket − first OOD bucket)",
    "shift": "a significant fall that the matched-exemplar control puts in the exemplars "
             "(shift above 0, difficulty not)",
    "inside": "a fall that begins inside the ID range (a significant pooled gap, and the d50 "
              "interval wholly below the last ID value)",
    "baseline": "a significant gap that the items' own baselines explain as well (OOD baseline "
                "differs from the ID one by more than the gap's interval): not a finding",
}
