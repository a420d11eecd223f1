"""lengthgen metrics (string_match_all, last_number_match) and the effective_length analysis
against hand-computed cases."""

from __future__ import annotations

from typing import Any

import pytest

from harness.analyses.registry import get_analysis
from harness.answers.metrics import get_metric
from harness.scoring.records import SampleRecord
from harness.spec.buckets import build_buckets
from harness.spec.task import BucketsSpec, RolesSpec


@pytest.mark.parametrize("pred,target,score", [
    ("71432", "71432", 1.0),
    (" 71432. Remember it.", "71432", 1.0),
    ("The Pass Key is ABC", "abc", 1.0),
    ("7143", "71432", 0.0),
    ("", "71432", 0.0),
    ("alpha and gamma", "alpha\nbeta\ngamma\ndelta", 0.5),  # 2 of 4 references
    ("BETA", "alpha\nbeta\n\n", 0.5),  # blank lines are no references
    ("anything", "", 0.0),
])
def test_string_match_all(pred: str, target: str, score: float) -> None:
    assert get_metric("string_match_all")(pred, target) == score


@pytest.mark.parametrize("pred,target,score", [
    ("625", "7+8+0=15, 5+6+1=12, 4+1+1=6. Answer: 625", 1.0),
    ("the answer is 1,234.", "... Answer: 1234", 1.0),
    ("624", "7+8+0=15. Answer: 625", 0.0),
    ("7+8+0=15, 5+6+1=12", "7+8+0=15, 5+6+1=12, 4+1+1=6. Answer: 625", 0.0),  # cut short
    ("1 1 0 1. Answer: 1", "1 1 0 1. Answer: 1", 1.0),
    ("no number", "Answer: 3", 0.0),
    ("5", "c=b, b=a, a=5. So c is 5", 1.0),
])
def test_last_number_match(pred: str, target: str, score: float) -> None:
    assert get_metric("last_number_match")(pred, target) == score


BUCKETS = build_buckets(BucketsSpec(values=[128, 256, 512, 1024]), RolesSpec(id_max=256))


def samples(scores: dict[int, list[float]], template: str = "t", depths: list[float] | None = None,
            ) -> list[SampleRecord]:
    """Samples with the given scores per bucket length; depths cycle over each bucket's items."""
    out = []
    for b in BUCKETS:
        for i, sc in enumerate(scores.get(int(b.top), [])):
            meta: dict[str, Any] = {} if depths is None else {"depth": depths[i % len(depths)]}
            out.append(SampleRecord(
                task="lengthgen/passkey", id=f"{b.label}/{i}", template=template, fewshot_ids=[],
                difficulty=b.top, bucket=b.label, bucket_index=b.index, role=b.role, prompt="p",
                target="1", output="", extracted="", score=sc, meta=meta))
    return out


def run(recs: list[SampleRecord], **params: Any) -> Any:
    return get_analysis("effective_length")(recs, BUCKETS, params, 0)


def test_effective_length_hand_cases() -> None:
    # accuracies 1.0, 0.9, 0.8, 0.9: 0.9 > 0.856 but 0.8 is not, so the run stops at 256
    recs = samples({128: [1] * 10, 256: [1] * 9 + [0], 512: [1] * 8 + [0] * 2,
                    1024: [1] * 9 + [0]})
    res = run(recs, window=256)
    assert res.value == 256 and res.n == 40
    assert res.details["largest_passing"] == 1024  # passes again, but not "stays above"
    assert [r["accuracy"] for r in res.details["per_length"]] == [1.0, 0.9, 0.8, 0.9]
    assert res.details["window_multiple"] == 1.0
    # a lower threshold (0.75) lets every length pass; exactly at the threshold does not pass
    assert run(recs, threshold=0.75).value == 1024
    assert run(recs, threshold=0.8).value == 256
    # the shortest length failing gives None
    assert run(samples({128: [0, 1], 256: [1, 1]})).value is None
    # an empty bucket ends the run
    assert run(samples({128: [1], 256: [1], 1024: [1]})).value == 256


def test_effective_length_by_depth_and_template() -> None:
    # depth 0.0 items always right; depth 1.0 items right only at 128 tokens
    scores = {128: [1, 1, 1, 1], 256: [1, 0, 1, 0], 512: [1, 0, 1, 0], 1024: [1, 0, 1, 0]}
    recs = samples(scores, depths=[0.0, 1.0]) + samples({128: [0]}, template="u")
    res = run(recs, threshold=0.856)
    assert res.value == 128 and res.details["template"] == "t" and res.n == 16
    by_depth = res.details["by_depth"]
    assert list(by_depth) == ["0", "1"]
    assert by_depth["0"]["effective_length"] == 1024 and by_depth["1"]["effective_length"] == 128
    assert [r["accuracy"] for r in by_depth["1"]["per_length"]] == [1.0, 0.0, 0.0, 0.0]
    assert res.details["by_template"]["u"]["effective_length"] is None
    assert run(recs, template="u").value is None


@pytest.mark.parametrize("params,needle", [({"threshold": 1.5}, "threshold"),
                                           ({"tresh": 0.5}, "params.tresh: Extra inputs"),
                                           ({"template": "zz"}, "template"),
                                           ({"window": -1}, "window")])
def test_effective_length_bad_params(params: dict[str, Any], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        run(samples({128: [1]}), **params)
