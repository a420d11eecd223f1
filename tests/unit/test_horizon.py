"""The adaptive horizon search (issue 34): the QUEST+ bookkeeping agrees with ``questplus``, the
search finds a known break end to end, reports censored and floor models as such, repeats itself
under the same seed, leaves every answer in its samples file, and is refused where it cannot run."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.cli.run_tables import horizon_lines
from harness.config import RunConfig
from harness.models import backends
from harness.run.evaluate import evaluate
from harness.run.horizon import recompute
from harness.run.results import SamplesFile, spec_hash
from harness.scoring.horizon import HorizonSearch, candidate_difficulties, fall_d50
from harness.spec.buckets import build_buckets
from harness.spec.horizon import WIDEN, WIDENINGS, HorizonSpec
from harness.spec.task import TaskSpec
from harness.tasks.index import TaskIndex
from harness.testing import ScriptedLM, scripted_backend

COPY = "lengthgen/copy"
INPUT = re.compile(r"Input: ([a-z ]+)\nOutput:")


def copier(limit: int, seen: list[int] | None = None):  # type: ignore[no-untyped-def]
    """A model that copies up to ``limit`` letters and fails past them."""

    def answer(prompt: str) -> str:
        letters = INPUT.findall(prompt)[-1]
        if seen is not None:
            seen.append(len(letters.split()))
        return " " + letters if len(letters.split()) <= limit else " x"

    return answer


class ShortContext(ScriptedLM):
    """A scripted model with a context window (tokens are words here)."""

    def __init__(self, answer: object, context: int) -> None:
        super().__init__(answer)  # type: ignore[arg-type]
        self._context = context

    def count_tokens(self, text: str) -> int | None:
        return len(text.split())

    def context_length(self) -> int | None:
        return self._context


def run(tmp: Path, model: ScriptedLM, name: str = "run", **kw: object):  # type: ignore[no-untyped-def]
    cfg = RunConfig(model="scripted:x", tasks=[COPY], limit_per_bucket=30, use_cache=False,
                    horizon=True, output_dir=tmp / name, **kw)  # type: ignore[arg-type]
    return evaluate(cfg, model=model)


def test_candidates_are_distinct_log_spaced_and_span_the_range() -> None:
    c = candidate_difficulties(1, 256)
    assert c[0] == 1 and c[-1] == 256 and c == sorted(set(c))
    ratios = [b / a for a, b in zip(c[6:], c[7:], strict=False)]  # past the integer crowding
    assert max(ratios) / min(ratios) < 1.2
    with pytest.raises(ValueError):
        candidate_difficulties(0, 8)


def test_the_normal_shape_is_questplus_own_likelihood() -> None:
    """The grid's symmetric shape is QUEST+'s norm_cdf psychometric function (the questplus
    package, on the same grid), at every grid point."""
    questplus = pytest.importorskip("questplus")
    s = HorizonSearch(1, 256, 0.25)
    g = s.grid
    xs = [-math.log(d) for d in (1, 9, 256)]
    qp = questplus.QuestPlus(
        stim_domain={"intensity": np.array(xs)},
        param_domain={"mean": -g.log_d50, "sd": g.sigma, "lower_asymptote": np.array([0.25]),
                      "lapse_rate": g.lapse},
        outcome_domain={"response": ["Correct", "Incorrect"]}, func="norm_cdf",
        stim_scale="linear")
    for d, x in zip((1, 9, 256), xs, strict=True):
        ours = g.accuracy(d)[..., 0]  # (ln d50, σ, λ) of the normal shape
        theirs = qp.likelihoods.sel(intensity=x, response="Correct").values[:, :, 0, :]
        assert np.allclose(ours, np.clip(theirs, 1e-9, 1 - 1e-9), atol=1e-8)


def test_a_known_break_is_found_and_the_interval_holds_it(tmp_path: Path) -> None:
    res = run(tmp_path, ScriptedLM(copier(20)))
    (h,) = res.tasks[0].horizons
    assert h.status == "measured" and h.lower is not None and h.upper is not None
    assert h.lower <= 20.5 <= h.upper and h.upper / h.lower < 2.0
    assert h.factor == pytest.approx(h.d50 / 8)
    assert h.curve(h.d50) == pytest.approx((h.top + h.baseline) / 2)
    assert h.range_hi == 64 and h.range_end == "spec"
    assert h.top > 0.95 and h.baseline < 0.1
    # every search answer is in the samples file, and the points are recomputable from it
    recs = list(SamplesFile(tmp_path / "run" / h.samples_file))
    assert len(recs) == h.items == sum(n for _, _, n in h.points)
    per: dict[int, list[float]] = {}
    for r in recs:
        per.setdefault(int(r.difficulty), []).append(r.score)
    assert sorted((d, sum(v), len(v)) for d, v in per.items()) == sorted(
        (d, c, n) for d, c, n in h.points)
    fixed = {r.id for r in SamplesFile(tmp_path / "run" / res.tasks[0].samples_file)}
    prompts = {r.prompt for r in SamplesFile(tmp_path / "run" / res.tasks[0].samples_file)}
    assert fixed and not prompts & {r.prompt for r in recs}  # never a fixed item again
    assert fall_d50(h.top, h.baseline, [(16, 1.0), (32, 0.0)]) == pytest.approx(
        math.exp((math.log(16) + math.log(32)) / 2), rel=0.1)


def test_the_same_seed_gives_the_same_search(tmp_path: Path) -> None:
    a = run(tmp_path, ScriptedLM(copier(40)), "a")
    b = run(tmp_path, ScriptedLM(copier(40)), "b")
    dump = [json.dumps([h.model_dump(exclude={"samples_file"}) for h in r.tasks[0].horizons])
            for r in (a, b)]
    assert dump[0] == dump[1]
    other = run(tmp_path, ScriptedLM(copier(40)), "c", seed=1)
    assert other.tasks[0].horizons[0].samples_sha256 != a.tasks[0].horizons[0].samples_sha256


def test_censored_and_floor_models_get_no_number(tmp_path: Path) -> None:
    """A model above its midpoint at the task's range is searched on past it (WIDENINGS
    times, WIDEN× wider each) and is then "≥" at the cap, named as such."""
    (above,) = run(tmp_path, ScriptedLM(copier(10_000)), "above").tasks[0].horizons
    assert above.status == "above" and above.d50 is None
    assert above.range_hi == 64 * WIDEN ** WIDENINGS and above.range_end == "cap"
    assert f"≥ {64 * WIDEN ** WIDENINGS} length" in "\n".join(horizon_lines(
        run(tmp_path, ScriptedLM(copier(10_000)), "again").tasks[0]))
    (floor,) = run(tmp_path, ScriptedLM(" x"), "floor").tasks[0].horizons
    assert floor.status == "floor" and floor.d50 is None and floor.items == 0


def test_the_context_ends_the_range_and_says_so(tmp_path: Path) -> None:
    seen: list[int] = []
    res = run(tmp_path, ShortContext(copier(10_000, seen), 150), "ctx")
    (h,) = res.tasks[0].horizons
    assert h.range_end == "context" and 8 < h.range_hi < 64
    assert h.items and max(seen[-h.items:]) <= h.range_hi  # the search asks last
    assert h.status == "above"


class Recording(ShortContext):
    """A short-context model that keeps every request's prompt and answer budget."""

    def __init__(self, answer: object, context: int) -> None:
        super().__init__(answer, context)
        self.asked: list[tuple[str, int]] = []

    def generate(self, requests, on_done=None):  # type: ignore[no-untyped-def]
        self.asked += [(r.prompt, r.max_tokens) for r in requests]
        return super().generate(requests, on_done)


def test_a_matched_control_searches_only_as_far_as_its_exemplars_fit(tmp_path: Path) -> None:
    """A matched control's exemplars grow with the difficulty: its search ends where they and
    the question no longer fit the context (not at the unnamed condition's end), and no
    request's answer budget reaches past what its own prompt leaves of the context (the
    backend would cut the prompt from the left)."""
    model = Recording(copier(20), 400)  # a fall past the ID range: the control runs
    res = run(tmp_path, model, "matched", matched_control=True)
    by = {h.condition: h for h in res.tasks[0].horizons}
    assert set(by) == {"", "matched"}
    assert (by[""].range_hi, by[""].range_end) == (64, "spec")
    assert by["matched"].range_end == "context" and 20 < by["matched"].range_hi < 64
    assert model.asked and all(len(p.split()) + n + 1 <= 400 for p, n in model.asked)


def test_a_fall_past_the_tasks_range_is_found_by_widening(tmp_path: Path) -> None:
    """A copier that holds to 150 letters, on a task whose range ends at 64: the search goes
    on past 64 and its interval holds the fall; the rounds it recorded recompute it."""
    res = run(tmp_path, ScriptedLM(copier(150)), "wide")
    (h,) = res.tasks[0].horizons
    assert h.status == "measured" and h.lower is not None and h.upper is not None
    assert h.lower <= 150.5 <= h.upper and h.range_hi > 150
    assert sum(h.rounds) == h.items and h.items > 200  # the widened range's own answers
    searched = list(SamplesFile(tmp_path / "wide" / h.samples_file))
    fixed = list(SamplesFile(tmp_path / "wide" / res.tasks[0].samples_file))
    again = recompute(h, fixed, searched)
    assert (again.d50, again.lower, again.upper) == (h.d50, h.lower, h.upper)


def test_a_declared_limit_ends_the_widening(tmp_path: Path) -> None:
    index = TaskIndex.build([])
    spec = index.spec(index.resolve([COPY])[0])
    assert spec.horizon is not None and spec.horizon.limit is None  # copy: open-ended
    with pytest.raises(ValueError, match="horizon.limit"):
        HorizonSpec(max=64, limit=32)
    assert HorizonSpec(max=64, limit=100).limit == 100


def test_the_cli_prints_d50_after_the_gap_lines(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(backends.BACKENDS.items, "scripted", scripted_backend)
    out = CliRunner().invoke(app, ["eval", "--model", "scripted:x", "--tasks", COPY,
                                   "--limit-per-bucket", "5", "--no-cache", "--horizon-items",
                                   "20", "--output-dir", str(tmp_path / "cli")])
    assert out.exit_code == 0, out.output
    text = out.stdout
    assert "horizon d50 (io): none (the ID level is not above the item baseline " in text
    assert text.index("all OOD") < text.index("gaps:") < text.index("horizon d50")


def test_the_search_range_leaves_the_spec_hash_alone() -> None:
    index = TaskIndex.build([])
    spec = index.spec(index.resolve([COPY])[0])
    assert spec.horizon is not None
    bare = TaskSpec.model_validate({**spec.model_dump(mode="json"), "horizon": None})
    assert spec_hash(bare) == spec_hash(spec)


@pytest.mark.parametrize(("change", "message"), [
    ({"source": {"type": "files", "path": "x.jsonl"}}, "needs a generator source"),
    ({"horizon": {"max": 16}}, "must lie past the largest bucket"),
    ({"horizon": {"max": 64, "min": 64}}, "must be below horizon.max"),
])
def test_a_horizon_that_cannot_run_is_refused(change: dict[str, object], message: str) -> None:
    index = TaskIndex.build([])
    data = index.spec(index.resolve([COPY])[0]).model_dump(mode="json")
    with pytest.raises(ValueError, match=message):
        TaskSpec.model_validate({**data, **change})


def test_the_board_shows_d50_with_its_curve_and_copies_the_search_samples(
        tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    from harness.leaderboard.build import build

    res = run(tmp_path, ScriptedLM(copier(20)))
    (h,) = res.tasks[0].horizons
    out = tmp_path / "board"
    build([tmp_path / "run"], out, png=False)
    board = json.loads((out / "leaderboard.json").read_text())
    (entry,) = board["entries"]
    assert entry["n_d50"] == 1 and entry["n_d50_above"] == 0
    assert entry["d50_factor"] == pytest.approx(h.factor)
    (row,) = board["tasks"][0]["rows"]
    assert row["d50"]["d50"] == pytest.approx(h.d50) and row["d50"]["status"] == "measured"
    copied = list((out / "runs").rglob("copy.horizon.jsonl*"))
    assert len(copied) == 1
    assert "| d50 ×ID (median) |" in (out / "leaderboard.md").read_text()
    page = (out / "tasks" / "lengthgen__copy.html")
    text = page.read_text() if page.exists() else next((out / "tasks").glob("*.html")).read_text()
    assert 'class="fitted"' in text and 'class="d50"' in text and ">d50 ↑</th>" in text
    from harness.leaderboard.horizons import agreement_rows
    from harness.leaderboard.inputs import load_leaderboard

    (agree,) = agreement_rows(load_leaderboard(out / "leaderboard.json"))
    # the fixed curve is 100% up to 16 and 0% at 32: its crossing is interpolated between them
    assert agree["fixed"] != "-" and agree["verdict"].startswith(("agrees", "disagrees"))
    # a board built from the board's own copies is the same board
    again = tmp_path / "again"
    build(sorted((out / "runs").rglob("results.json")), again, png=False)
    assert json.loads((again / "leaderboard.json").read_text())["tasks"] == board["tasks"]


def test_a_board_without_searches_keeps_its_columns() -> None:
    from harness.leaderboard.horizons import d50_text, entry_d50_text, entry_horizons

    assert entry_horizons({}) == (None, None, None, None)
    assert d50_text(None) == "-" and entry_d50_text(None, None, None) == "-"


def test_the_estimate_is_recomputable_from_the_samples_files(tmp_path: Path) -> None:
    from harness.run.horizon import recompute

    res = run(tmp_path, ScriptedLM(copier(20)))
    t = res.tasks[0]
    (h,) = t.horizons
    again = recompute(h, SamplesFile(tmp_path / "run" / t.samples_file),
                      SamplesFile(tmp_path / "run" / h.samples_file))
    assert again.status == h.status and again.items == h.items + h.id_items
    for a, b in ((again.d50, h.d50), (again.lower, h.lower), (again.upper, h.upper),
                 (again.top, h.top)):
        assert a == pytest.approx(b, rel=1e-9)


def test_a_fall_inside_the_id_range_is_called_so(tmp_path: Path) -> None:
    from harness.cli.run_tables import horizon_lines

    res = run(tmp_path, ScriptedLM(copier(4)))
    (h,) = res.tasks[0].horizons
    assert h.status == "measured" and h.d50 is not None and h.d50 < 8
    assert h.upper is not None and h.upper < 8
    (line,) = horizon_lines(res.tasks[0])
    assert ("× the ID edge 8, inside the ID range (the whole interval below the edge)  95% "
            "interval [") in line
    # a point estimate below the edge whose interval reaches past it says nothing of the kind
    wide = h.model_copy(update={"upper": 9.5})
    (line,) = horizon_lines(res.tasks[0].model_copy(update={"horizons": [wide]}))
    assert "inside the ID range" not in line and "× the ID edge 8  95% interval [" in line


def test_a_searched_template_prints_one_horizon_the_d50(tmp_path: Path) -> None:
    from rich.console import Console

    from harness.cli.run_tables import print_task

    def printed(task: object) -> str:
        console = Console(record=True, width=200)
        print_task(task, console)  # type: ignore[arg-type]
        return console.export_text()

    task = run(tmp_path, ScriptedLM(copier(20))).tasks[0]
    assert task.horizons and task.templates[0].gaps.horizon is not None
    text = printed(task)
    assert "horizon d50 (" in text and "extrapolation horizon" not in text
    # where no search ran, the fixed buckets' extrapolation horizon is the one shown
    plain = printed(task.model_copy(update={"horizons": []}))
    assert "extrapolation horizon" in plain and "horizon d50" not in plain


def test_rescore_computes_the_horizons_again_from_their_answers(tmp_path: Path) -> None:
    """A results.json whose d50 was edited (or made by an older search model) gets the estimate
    its recorded answers give back from ``harness rescore``, asking no model."""
    from harness.run.rescore import rescore

    res = run(tmp_path, ScriptedLM(copier(20)))
    (h,) = res.tasks[0].horizons
    path = tmp_path / "run" / "results.json"
    data = json.loads(path.read_text())
    data["tasks"][0]["horizons"][0].update(d50=999.0, lower=1.0, upper=None, status="above",
                                          overdispersion=0.9, shapes=[])
    path.write_text(json.dumps(data))
    rescore(tmp_path / "run")
    again = json.loads(path.read_text())["tasks"][0]["horizons"][0]
    assert again["status"] == h.status == "measured"
    assert again["d50"] == pytest.approx(h.d50, rel=1e-9)
    assert again["lower"] == pytest.approx(h.lower, rel=1e-9)
    assert again["overdispersion"] == pytest.approx(h.overdispersion, rel=1e-9)
    assert again["shapes"] == pytest.approx(h.shapes, rel=1e-9)
    assert again["check_items"] == h.check_items == 30


def test_a_misfit_is_said_with_its_accuracies_not_a_d50(tmp_path: Path) -> None:
    from harness.cli.run_tables import horizon_lines
    from harness.leaderboard.horizons import _cell, d50_text, d50_title, d50_value

    res = run(tmp_path, ScriptedLM(copier(20)))
    task = res.tasks[0]
    (h,) = task.horizons
    bad = h.model_copy(update={"status": "misfit", "d50": None, "lower": None, "upper": None,
                               "fit_p": 0.002})
    (line,) = horizon_lines(task.model_copy(update={"horizons": [bad]}))
    assert "none: no single fall (check round p = 0.002); accuracy by difficulty" in line
    first = bad.accuracies()[0]
    assert f"{first[0]:g}: " in line and bad.id_points and h.points
    cell = _cell(bad)
    assert d50_text(cell) == "misfit (no single fall)" and d50_value(cell) == ""
    assert "no single fall: accuracy by difficulty" in d50_title(cell)


def test_another_level_comes_from_the_same_posterior() -> None:
    """``horizon.level``: where a planted normal fall (d50 40, σ 0.3, top 0.95, baseline 0.1)
    is down to 85% of its easy-item level; the 95% interval holds it in most of 20 searches
    at fixed difficulties, and level ½ of the way down to a zero baseline is d50 itself."""
    from scipy.stats import norm

    top, base, d50, sigma = 0.95, 0.1, 40.0, 0.3
    q = (0.85 * top - base) / (top - base)
    truth = d50 * math.exp(sigma * norm.ppf(1 - q))
    held = 0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        s = HorizonSearch(1, 256, base)
        for d in (2, 4, 8, 16, 24, 32, 40, 48, 64, 96, 128):
            p = base + (top - base) * norm.sf((math.log(d) - math.log(d50)) / sigma)
            s.add(d, float(rng.binomial(40, p)), 40)
        mid, lo, hi = s.at_level(0.85)
        assert mid is not None and lo is not None and hi is not None and lo <= mid <= hi
        held += lo <= truth <= hi
    assert held >= 17
    s = HorizonSearch(1, 256, 0.0)
    for d, k in ((4, 40), (16, 40), (32, 30), (64, 10), (128, 0)):
        s.add(d, k, 40)
    mid, _, _ = s.at_level(0.5)
    est = s.verdict()
    assert mid is not None and est.d50 is not None and abs(math.log(mid / est.d50)) < 0.05


def test_the_level_is_reported_and_recomputed(tmp_path: Path) -> None:
    index = TaskIndex.build([])
    ref = index.resolve([COPY])[0]
    text = ref.path.read_text(encoding="utf-8")
    folder = tmp_path / "tasks" / "mine"
    folder.mkdir(parents=True)
    assert "horizon:" in text
    (folder / "_sequence.yaml").write_text(
        (ref.path.parent / "_sequence.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "copy_level.yaml").write_text(
        text.replace("horizon:", "horizon:\n  level: 0.85\n ", 1).replace(
            "name: copy", "name: copy_level", 1), encoding="utf-8")
    cfg = RunConfig(model="scripted:x", tasks=["mine/copy_level"], limit_per_bucket=30,
                    use_cache=False, horizon=True, include_paths=[tmp_path / "tasks"],
                    output_dir=tmp_path / "run")
    res = evaluate(cfg, model=ScriptedLM(copier(20)))
    (h,) = res.tasks[0].horizons
    assert h.level == 0.85 and h.at_level is not None
    mid, lo, hi = h.at_level
    assert mid is not None and lo is not None and hi is not None and lo <= 20.5 <= hi * 1.05
    assert "down to 85% of the easy-item level (io): " in "\n".join(horizon_lines(res.tasks[0]))
    fixed = list(SamplesFile(tmp_path / "run" / res.tasks[0].samples_file))
    searched = list(SamplesFile(tmp_path / "run" / h.samples_file))
    from harness.run.horizon import recomputed

    spec = TaskSpec.model_validate(res.tasks[0].spec)
    assert recomputed(h, fixed, searched, build_buckets(spec.buckets, spec.roles)) == h


def test_a_searched_task_times_each_span_once(tmp_path: Path) -> None:
    """The search is model time: before, it was also taken off the preparation (negative) and
    added to the scoring (a published run said prepare -739 s, score 740 s)."""
    import time

    def slow(prompt: str) -> str:
        time.sleep(0.002)  # the search's calls dominate the task's time
        return copier(4)(prompt)

    res = run(tmp_path, ScriptedLM(slow))
    t = {k.split(".", 1)[1]: v for k, v in res.timings.items() if k.startswith(COPY + ".")}
    assert min(t["prepare_s"], t["model_s"], t["score_write_s"]) >= 0, t
    assert t["prepare_s"] + t["model_s"] + t["score_write_s"] <= res.timings["total_s"] + 0.01
