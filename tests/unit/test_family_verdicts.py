"""The rule that reads a family's seeds (``harness.leaderboard.families``): only seeds that fit
the ID range count, the extent walks outward from the ID edge, and a contrast's verdict is one of
reproduced / direction only / not reproduced / not testable (or not comparable across formats:
tests/unit/test_reference_verdicts.py), never more than the seeds show."""

from __future__ import annotations

import math

import pytest

from harness.leaderboard.board_file import BucketInfo
from harness.leaderboard.families import (
    MIN_FITTED,
    Member,
    contrast_verdict,
    seed_success,
)
from harness.scoring.stats import wilson_interval

# ID buckets 2, 8; OOD 9, 12, 16 (the copy tasks' shape)
AXIS = [BucketInfo(label=str(v), index=i, role="ID" if v <= 8 else "OOD", lo=v, hi=v)
        for i, v in enumerate([2, 8, 9, 12, 16])]


def seed(id_acc: float, *ood: float) -> Member:
    """A seed at ``id_acc`` in both ID buckets and ``ood`` in the OOD buckets 9, 12, 16."""
    return Member(id_acc, sum(ood) / len(ood), [id_acc, id_acc, *ood])


def test_seeds_that_do_not_fit_are_not_read_for_generalization() -> None:
    s = seed_success([seed(1.0, 1, 1, 1), seed(1.0, 1, 1, 0.95), seed(0.95, 1, 0.9, 0.9),
                      seed(0.5, 1, 1, 1), seed(0.899, 1, 1, 1)], AXIS)
    assert s is not None
    assert (s.members, s.fitted, s.succeeded) == (5, 3, 3)  # 0.5 and 0.899 ID do not fit
    assert s.rate == 1.0 and (s.ci_low, s.ci_high) == pytest.approx(wilson_interval(3, 3))
    assert s.extent == 16 and s.extent_factor == 2.0 and s.verdict is not None
    assert s.verdict.startswith("extends past every OOD bucket")


def test_extent_is_where_the_success_rate_first_falls_below_ninety_percent() -> None:
    # all five fit; every seed at >= 90% at 9 letters, four of five at 12: 80% < 90%
    s = seed_success([seed(1.0, 0.97, 0.95, 0.0)] * 4 + [seed(1.0, 0.96, 0.3, 0.0)], AXIS)
    assert s is not None and (s.extent, s.extent_factor, s.edge_succeeded) == (9, 1.125, 5)
    assert s.verdict == "extends to 9 (1.12× the edge), not beyond"
    assert s.edge_gap == pytest.approx(1.0 - (4 * 0.97 + 0.96) / 5)
    # a fall at the edge: extent is the edge itself
    edge = seed_success([seed(1.0, 0.1, 0.0, 0.0)] * 5, AXIS)
    assert edge is not None and edge.extent == 8 and edge.verdict == "fails at the edge"


def test_too_few_fitted_seeds_make_a_family_not_testable() -> None:
    s = seed_success([seed(1.0, 1, 1, 1)] * (MIN_FITTED - 1) + [seed(0.5, 0, 0, 0)] * 3, AXIS)
    assert s is not None and s.fitted == MIN_FITTED - 1 and s.rate == 1.0
    assert s.verdict is not None and s.verdict.startswith("not testable (ID not learned")
    assert seed_success([Member(1.0, None, [1.0, 1.0, None, None, None])], AXIS) is None


def test_contrast_verdicts() -> None:
    fmt = "letters → letters"  # every family here on one format
    extends = seed_success([seed(1.0, 1, 1, 1)] * 5, AXIS, fmt)
    edge_only = seed_success([seed(1.0, 0.97, 0.2, 0.0)] * 5, AXIS, fmt)
    fails = seed_success([seed(1.0, 0.0, 0.0, 0.0)] * 5, AXIS, fmt)
    unfit = seed_success([seed(0.5, 0.0, 0.0, 0.0)] * 5, AXIS, fmt)
    assert extends and edge_only and fails and unfit
    verdict, ci = contrast_verdict(extends, fails)
    # 5 of 5 against 0 of 5: MOVER on exact limits, lower end 1 - hypot(1 - l, u) with
    # l = 0.025 ** (1 / 5) (the exact lower limit at 5/5) and u = 1 - l
    low = 1 - math.hypot(1 - 0.025 ** 0.2, 1 - 0.025 ** 0.2)
    assert verdict == "reproduced" and ci is not None and ci[0] == pytest.approx(low)
    assert contrast_verdict(edge_only, fails)[0] == "direction only (extent 1.12× the edge)"
    assert contrast_verdict(fails, fails)[0] == "not reproduced"
    assert contrast_verdict(extends, unfit) == ("not testable (ID not learned)", None)
    assert contrast_verdict(unfit, fails) == ("not testable (ID not learned)", None)
    # one seed: too few to read, however well it does
    one = seed_success([seed(1.0, 1, 1, 1)], AXIS, fmt)
    assert one is not None and one.verdict == "not testable (too few seeds: 1, 3 needed)"
    assert contrast_verdict(one, fails) == ("not testable (too few seeds)", None)
