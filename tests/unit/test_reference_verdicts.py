"""The reference models' verdicts compare like with like (issue 46, item 8): a contrast is
"reproduced" only between families on one task format, a family whose seeds fit the pooled ID
range but not its edge bucket is "not testable", docs/reference-models.md shows no interval or
range that reads as one of zero width, and no published reference run comes from a tree with
uncommitted changes."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

from harness.leaderboard.board_file import BucketInfo
from harness.leaderboard.families import MIN_FITTED, Member, contrast_verdict, seed_success

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "reference-models.md"
RUNS = ROOT / "leaderboards" / "reference"
BOARD = ROOT / "leaderboards" / "reference-board"

# parity's shape: ID buckets 8, 10, 12 (12 is the edge); OOD 13, 16
AXIS = [BucketInfo(label=str(v), index=i, role="ID" if v <= 12 else "OOD", lo=v, hi=v)
        for i, v in enumerate([8, 10, 12, 13, 16])]


def _summarize() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "refmodels_summarize_verdicts", ROOT / "examples" / "reference_models" / "summarize.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def seed(ids: tuple[float, float, float], *ood: float) -> Member:
    """A seed with accuracy ``ids`` in the ID buckets 8, 10, 12 (pooled: their mean, equal n)
    and ``ood`` in 13 and 16."""
    return Member(sum(ids) / 3, sum(ood) / len(ood), [*ids, *ood])


def test_a_family_that_fits_pooled_id_but_not_the_edge_is_not_testable() -> None:
    # the hinted LSTM's shape: 93% pooled ID, under 90% in the 12-bit edge bucket
    edge_unfit = [seed((1.0, 0.92, 0.87), 0.6, 0.6)] * 3 + [seed((0.8, 0.7, 0.6), 0.5, 0.5)] * 2
    s = seed_success(edge_unfit, AXIS, "hinted")
    assert s is not None and (s.id_fitted, s.fitted, s.rate, s.extent) == (3, 0, None, None)
    assert s.verdict is not None and s.verdict.startswith("not testable (ID edge not learned")
    assert "0 of them reach 90% at the edge 12" in s.verdict
    other = seed_success([seed((1.0, 1.0, 1.0), 0.0, 0.0)] * 5, AXIS, "hinted")
    assert other is not None and other.fitted == 5
    assert contrast_verdict(s, other) == ("not testable (ID edge not learned)", None)
    assert contrast_verdict(other, s) == ("not testable (ID edge not learned)", None)
    # a seed under 90% at the edge is not read; the others still are
    mixed = seed_success([seed((1.0, 1.0, 1.0), 1.0, 1.0)] * MIN_FITTED
                         + [seed((1.0, 1.0, 0.85), 1.0, 1.0)], AXIS, "hinted")
    assert mixed is not None and (mixed.id_fitted, mixed.fitted, mixed.succeeded) == (4, 3, 3)
    assert mixed.verdict == "extends past every OOD bucket"


def test_a_contrast_across_formats_is_not_comparable() -> None:
    extends = seed_success([seed((1.0, 1.0, 1.0), 1.0, 1.0)] * 5, AXIS, "plain bits")
    fails = seed_success([seed((1.0, 1.0, 1.0), 0.5, 0.5)] * 5, AXIS, "hinted scratchpad")
    assert extends and fails
    assert contrast_verdict(extends, fails) == (
        "not comparable (format differs: plain bits vs hinted scratchpad)", None)
    # a claim about the format itself (index hints against none) is judged as any contrast
    assert contrast_verdict(extends, fails, format_contrasted=True)[0] == "reproduced"
    same = seed_success([seed((1.0, 1.0, 1.0), 0.5, 0.5)] * 5, AXIS, "plain bits")
    assert same is not None and contrast_verdict(extends, same)[0] == "reproduced"
    assert contrast_verdict(extends, same, format_contrasted=True)[0].startswith(
        "not comparable (the format is the contrast")
    # a family whose format nobody recorded is compared with nothing
    unknown = seed_success([seed((1.0, 1.0, 1.0), 0.5, 0.5)] * 5, AXIS)
    assert unknown is not None
    assert contrast_verdict(extends, unknown) == ("not comparable (format not recorded)", None)


def _spec_format(results: Path) -> tuple[object, ...]:
    """What a run's model read and wrote: generator, prompt, answer and output type."""
    data = json.loads(results.read_text(encoding="utf-8"))
    spec = data["tasks"][0]["spec"]
    [tpl] = [t for t in spec["templates"] if t["id"] == data["run"]["templates"][0]]
    return (spec["source"]["name"], tpl["prompt"], tpl.get("target"), spec["output"]["type"])


def test_every_committed_run_has_a_declared_format_that_matches_its_task() -> None:
    mod = _summarize()
    runs = sorted(RUNS.glob("*/*-s*/results.json"))
    assert runs
    label_of = {r: mod.run_format(r) for r in runs}
    assert [r for r, label in label_of.items() if label is None] == []
    signature: dict[str, set[tuple[object, ...]]] = {}
    for run, label in label_of.items():
        signature.setdefault(label, set()).add(_spec_format(run))
    # one label, one format; two labels, two formats
    assert {k: v for k, v in signature.items() if len(v) != 1} == {}
    formats = [next(iter(v)) for v in signature.values()]
    assert len(set(formats)) == len(formats)


def _doc_rows(name: str) -> list[list[str]]:
    doc = DOC.read_text(encoding="utf-8")
    body = doc.split(f"<!-- {name}:start -->\n", 1)[1].split(f"\n<!-- {name}:end -->", 1)[0]
    return [[c.strip() for c in line.strip("|").split("|")] for line in body.splitlines()[2:]]


def test_the_doc_calls_no_contrast_across_formats_reproduced() -> None:
    """Each contrast row of the doc, against the formats of its two families' committed runs:
    across formats (and not about the format) it says "not comparable", never "reproduced"."""
    mod = _summarize()
    files = mod.runs_of(RUNS)
    rows = {r[0]: r for r in _doc_rows("contrasts")}
    checked = 0
    for c in mod.CONTRASTS:
        row = rows.get(f"{c.claim} ({c.paper})")
        if row is None:
            continue
        a, b = (mod.family_success(files[k]) for k in ((c.task_a, c.fam_a), (c.task_b, c.fam_b)))
        assert a is not None and b is not None and a.format and b.format
        if a.format != b.format and not c.format_contrasted:
            checked += 1
            assert row[-1].startswith("**not comparable (format differs"), row
        if row[-1] == "**reproduced**":
            assert a.format == b.format or c.format_contrasted, row
    assert checked >= 2  # the two parity rows that put the LSTM on plain bits


def test_the_doc_shows_no_interval_or_range_of_zero_width() -> None:
    """No "[100.0, 100.0]" interval, and no "(x–x)" or "x–x" range that reads as one: one
    seed's value or seeds that agree are said in words."""
    doc = DOC.read_text(encoding="utf-8")
    num = r"-?\d+(?:\.\d+)?"
    same_bracket = re.findall(rf"\[({num}), \1\]", doc)
    same_range = re.findall(rf"(?<![\d.])({num}) ?[–-] ?\1(?![\d.])", doc)
    assert "[100.0, 100.0]" not in doc
    assert same_bracket == [] and same_range == []


def _dirty(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(ROOT)) for p in paths
            if '"git_dirty": true' in p.read_text(encoding="utf-8")]


def test_no_published_reference_run_comes_from_a_dirty_tree() -> None:
    runs = sorted(RUNS.glob("*/*/results.json"))
    board = sorted((BOARD / "runs").glob("*/*/results.json")) + [BOARD / "leaderboard.json"]
    assert runs and len(board) > 1
    assert _dirty(runs) == [] and _dirty(board) == []
    # the board carries exactly the committed runs
    assert len(board) - 1 == len(runs)


def test_the_board_reads_the_hinted_lstm_as_not_testable() -> None:
    board = json.loads((BOARD / "leaderboard.json").read_text(encoding="utf-8"))
    [fam] = [f for f in board["families"] if f["family"].endswith("/reference_parity_hints/lstm")]
    s = fam["success"]["reference/parity_hints"]
    assert s["verdict"].startswith("not testable (ID edge not learned"), s
    assert s["fitted"] == 0 and s["id_fitted"] == 3
