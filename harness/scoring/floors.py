"""A task's floor when it has several prompt templates: each template's shown, the task's pooled.

Every report (one per template and condition) judges its own pooled ID accuracy against its own
baseline (``gaps/report``: ``status`` "floor" where the Wilson 95% lower bound is not above the
larger of the baseline and the chance level), and results.json and the eval table show that
status for each template. A task's status (its row on a board, the floor count) is not its
first template's alone. The task is at the **floor** when

- its ID accuracy **pooled over its templates** is not above the baseline: every report with ID
  samples counts (the matched-exemplar control answers OOD items only); the pooled accuracy is
  their correct answers over their samples, and its Wilson interval is taken over the ID items,
  not the samples (each template answers the same items: a repeat of an item under another
  prompt is not counted as more evidence; the item count is the largest template's); the level
  is the largest of the templates' floor levels (one level where they answer the same items);
- or the template whose gap the row shows is at the floor on its own (it has no gap to show).

Otherwise the task's status is that template's. With one template both tests are its own test.
Pooled, the decision rests on all the answers at once; "floor only where every template is"
would call a task measured as soon as one of several templates clears its baseline by chance
(seven templates are seven tries), and "floor where any template is" would read a model's
sensitivity to the prompt as the floor.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.gaps.builtin import GapStatus
from harness.scoring.aggregates import RoleAggregate, not_above
from harness.scoring.report import TemplateReport
from harness.scoring.stats import wilson_interval

# the floor rule in words: every surface that states it (board prose, pages) says this
FLOOR_RULE = ("floor: the Wilson 95% lower bound of the pooled ID accuracy (over every template) "
              "is not above the item baseline, the larger of the leave-one-out constant "
              "answer's score and the guessing level on the same items")


def _id(r: TemplateReport) -> RoleAggregate | None:
    return next((x for x in r.roles if x.role == "ID" and x.n > 0), None)


def _level(r: TemplateReport) -> float:
    """The level a report's ID accuracy is judged against (the larger of baseline and chance:
    what ``gaps/report`` shows as its baseline, else its chance level)."""
    return r.gaps.baseline if r.gaps.baseline is not None else r.gaps.chance


def _label(r: TemplateReport) -> str:
    return f"{r.template}/{r.condition}" if r.condition else r.template


def pooled_floor(reports: Sequence[TemplateReport]) -> str | None:
    """Why the ID accuracy pooled over ``reports`` is not above its baseline (see module); None
    where it is above, or where fewer than two reports have ID samples (one report's own
    status says it)."""
    judged = [(r, role) for r in reports if (role := _id(r)) is not None]
    if len(judged) < 2:
        return None
    correct = sum(role.correct for _, role in judged)
    samples = sum(role.n for _, role in judged)
    items = max(role.n for _, role in judged)
    share = correct / samples
    level = max(_level(r) for r, _ in judged)
    if not not_above(share * items, items, level):
        return None
    lo, _ = wilson_interval(share * items, items)
    alone = [_label(r) for r, _ in judged if r.gaps.status == "floor"]
    return (f"ID accuracy over {len(judged)} templates {100 * share:.1f}% ({items} items, 95% "
            f"CI from {100 * lo:.1f}%) is not above the baseline ({100 * level:.1f}%); at the "
            f"floor on their own: {len(alone)} of {len(judged)}"
            + (f" ({', '.join(alone)})" if alone else ""))


def task_status(reports: Sequence[TemplateReport], primary: TemplateReport | None = None
                ) -> tuple[GapStatus, str | None]:
    """A task's status and its reason from its reports (``primary``: the report whose gap is
    shown, by default the first): "floor" where the primary report is at the floor or the ID
    accuracy pooled over the reports is not (see module), else the primary report's."""
    if not reports:
        raise ValueError("task_status: no reports")
    g = (primary or reports[0]).gaps
    if g.status == "floor":
        return "floor", g.reason
    pooled = pooled_floor(reports)
    return ("floor", pooled) if pooled is not None else (g.status, g.reason)
