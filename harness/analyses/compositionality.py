"""Compositionality gap (Press et al. 2023): among 2-hop items whose two 1-hop sub-questions are
both answered correctly, the fraction whose 2-hop question is answered wrongly.

A task asks each item under three templates (the 2-hop question and its two sub-questions);
samples of one item are linked by item id and few-shot condition. Params: ``two_hop`` (template
id of the 2-hop question), ``sub_questions`` (the two sub-question template ids), ``resamples``
(bootstrap resamples for the 95% CI). ``n`` is the number of eligible items (both sub-questions
correct); details break the gap down by role and by the ``group_by`` meta field.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import Field, StrictInt

from harness.analyses.registry import AnalysisParams, AnalysisResult, analysis
from harness.scoring.intervals import proportion
from harness.scoring.records import SampleRecord
from harness.scoring.stats import r10
from harness.spec.buckets import Bucket


def gap_counts(samples: Sequence[SampleRecord], two_hop: str, subs: Sequence[str],
               ) -> list[tuple[SampleRecord, float]]:
    """(2-hop sample, 1.0 if it is wrong else 0.0) for every item whose sub-questions are all
    correct (score 1.0); items missing a sub-question sample are left out."""
    by_key: dict[tuple[str, str], dict[str, SampleRecord]] = {}
    for s in samples:
        by_key.setdefault((s.id, s.condition), {})[s.template] = s
    out = []
    for group in by_key.values():
        if two_hop not in group or any(t not in group for t in subs):
            continue
        if all(group[t].score >= 1.0 for t in subs):
            out.append((group[two_hop], 0.0 if group[two_hop].score >= 1.0 else 1.0))
    return out


def _gap(values: Sequence[float]) -> float | None:
    return r10(sum(values) / len(values)) if values else None


class CompositionalityParams(AnalysisParams):
    """Parameters of ``compositionality_gap``."""

    two_hop: str = Field("two_hop", description="template id of the 2-hop question")
    sub_questions: list[str] = Field(["hop1", "hop2"], description="the sub-question templates")
    resamples: StrictInt = Field(1000, ge=1, description="unused: the interval is exact (kept so "
                                 "task files that set it still load)")
    group_by: str | None = Field(None, description="meta field to break the gap down by")


@analysis("compositionality_gap", CompositionalityParams, title="compositionality gap",
          headline=1, better="low")
def compositionality_gap(samples: Sequence[SampleRecord], buckets: Sequence[Bucket],
                         params: dict[str, Any], seed: int) -> AnalysisResult:
    """The compositionality gap (a proportion of the eligible items) with its exact 95%
    interval (Clopper–Pearson: it holds at 0/n and n/n)."""
    p = CompositionalityParams.model_validate(params)
    two_hop, subs, resamples, group_by = p.two_hop, p.sub_questions, p.resamples, p.group_by
    templates = {s.template for s in samples}
    if two_hop not in templates or any(t not in templates for t in subs):
        note = f"needs templates {[two_hop, *subs]} (e.g. --templates all); ran {sorted(templates)}"
        return AnalysisResult(name="compositionality_gap", value=None, n=0,
                              details={"skipped": note})
    pairs = gap_counts(samples, two_hop, subs)
    wrong = [w for _, w in pairs]
    details: dict[str, Any] = {
        "two_hop_correct_given_subs": sum(1 for w in wrong if w == 0.0),
        "items": len({(s.id, s.condition) for s in samples if s.template == two_hop}),
        "by_role": {}, "by_group": {},
    }
    for role in ("ID", "OOD"):
        vals = [w for s, w in pairs if s.role == role]
        details["by_role"][role] = {"value": _gap(vals), "n": len(vals)}
    if group_by:
        groups: dict[str, list[float]] = {}
        for s, w in pairs:
            groups.setdefault(str(s.meta.get(group_by)), []).append(w)
        details["by_group"] = {k: {"value": _gap(v), "n": len(v)}
                               for k, v in sorted(groups.items())}
    if not wrong:
        return AnalysisResult(name="compositionality_gap", value=None, n=0, details=details)
    del seed, resamples  # the interval is exact: a proportion of eligible items
    lo, hi = proportion(wrong).limits()
    return AnalysisResult(name="compositionality_gap", value=_gap(wrong), ci_low=r10(lo),
                          ci_high=r10(hi), n=len(wrong), details=details)
