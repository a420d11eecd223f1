"""The planted-truth backend (``planted:``, issue 45): its arguments, its answers (seeded, right
ones scored 1 by the task's own metric, wrong ones below it, cut by the budget in its own
tokens), the harness recovering the planted curve, and its runs refused by leaderboards."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from harness.answers.extract import answer_end, last_boxed
from harness.errors import HarnessError
from harness.models.backends import load_model, split_spec
from harness.models.planted import answers
from harness.models.planted.backend import PlantedLM
from harness.models.planted.curve import Curve, parse_curve
from harness.requests import AskedItem, GenerateRequest, LoglikelihoodRequest, RollingRequest
from harness.run.results import Results

NORMAL = {"d50": "20", "sigma": "0.3", "top": "0.95"}


def _item(target: str, answer: str | None = None, **kw: object) -> AskedItem:
    fields: dict[str, object] = dict(
        prompt=f"Q{target}?", target=target, answer=target if answer is None else answer,
        task="t/x", item="0", template="io", condition="", matched=False, shots=0,
        difficulty=2.0, bucket="2", bucket_index=0, role="ID", searched=False, seed=0,
        buckets=((2.0, 2.0), (8.0, 8.0)), metric="exact_match", extract="first_line")
    fields.update(kw)
    return AskedItem(**fields)  # type: ignore[arg-type]


def _run(tmp_path: Path, args: dict[str, str], tasks: list[str], **cfg: object) -> Results:
    from harness.config import RunConfig
    from harness.run.evaluate import evaluate

    return evaluate(RunConfig(model="planted:", model_args=args, tasks=tasks,
                              output_dir=tmp_path, use_cache=False, **cfg))  # type: ignore[arg-type]


# --- arguments ------------------------------------------------------------------------------


def test_arguments_declare_a_curve_or_bucket_accuracies() -> None:
    c = parse_curve({**NORMAL, "shift": "0.1", "seed": "3", "context": "4096"})
    assert (c.d50, c.sigma, c.top, c.shift, c.seed, c.context) == (20, 0.3, 0.95, 0.1, 3, 4096)
    assert c.describe() == "d50=20,sigma=0.3,top=0.95,shift=0.1"
    assert parse_curve({"acc": "0.9/0.5/0.1"}).acc == (0.9, 0.5, 0.1)
    assert split_spec("planted:") == ("planted", "") and split_spec("planted:x") == ("planted", "x")
    model = load_model("planted:", NORMAL, 1)
    assert (model.identity.backend, model.identity.name) == ("planted", "d50=20,sigma=0.3,top=0.95")
    assert model.identity.args == NORMAL and model.context_length() == 32768
    assert load_model("planted:mine", NORMAL, 1).identity.name == "mine"


@pytest.mark.parametrize(("args", "needle"), [
    ({"d50": "20", "colour": "red"}, "unknown key 'colour'"),
    ({}, "give d50=D"),
    ({"d50": "20", "acc": "1/0"}, "one of the two"),
    ({"acc": "1/0", "sigma": "1"}, "sigma and top belong to the d50 curve"),
    ({"d50": "-3"}, "d50 must be a positive number"),
    ({"d50": "x"}, "d50 must be a positive number"),
    ({"d50": "20", "sigma": "0"}, "sigma must be a positive number"),
    ({"d50": "20", "top": "1.5"}, "top must be a number from 0 to 1"),
    ({"acc": "0.9/lots"}, "acc must be accuracies from 0 to 1 separated by /"),
    ({"d50": "20", "shift": "-1"}, "shift must be a number from 0 to 1"),
    ({"d50": "20", "context": "0"}, "context must be a positive integer"),
    ({"d50": "20", "seed": "1.5"}, "seed must be a non-negative integer"),
    ({"d50": "20", "tokenizer": "no-such-tokenizer"}, "tokenizer must be one of qwen"),
])
def test_a_bad_argument_is_one_line_naming_the_key(args: dict[str, str], needle: str) -> None:
    with pytest.raises(HarnessError) as e:
        load_model("planted:", args, 1)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_the_curve_is_the_horizon_models_normal_one() -> None:
    c = Curve(d50=20, sigma=0.3, top=0.95)
    for d in (2.0, 20.0, 32.0):
        want = 0.95 * 0.5 * math.erfc((math.log(d) - math.log(20)) / 0.3 / math.sqrt(2))
        assert c.accuracy(_item("ab", difficulty=d)) == pytest.approx(want)
    mc = _item("b", choices=("a", "b", "c", "d"), gold=1, difficulty=1e6)
    assert c.accuracy(mc) == pytest.approx(0.25, abs=1e-6)  # the low end: a uniform guess
    shifted = Curve(d50=20, top=1.0, shift=0.3)
    ood = _item("ab", difficulty=2.0, role="OOD", shots=3)
    assert shifted.accuracy(ood) == pytest.approx(0.7, abs=1e-6)
    assert shifted.accuracy(_item("ab", difficulty=2.0, role="OOD", shots=3, matched=True)) \
        == pytest.approx(1.0, abs=1e-6)
    per = Curve(acc=(0.9, 0.2))
    assert per.accuracy(_item("ab", searched=True, difficulty=7.0)) == 0.2  # nearest bucket: 8
    with pytest.raises(HarnessError, match="acc gives 3 accuracies but task t/x has 2 buckets"):
        Curve(acc=(1, 1, 1)).accuracy(_item("ab"))


# --- answers --------------------------------------------------------------------------------


def test_unknown_prompts_are_refused_in_one_line() -> None:
    m = PlantedLM("", NORMAL)
    with pytest.raises(HarnessError, match="answers only the items the runner announced"):
        m.generate([GenerateRequest("never announced", 8)])


def test_wrong_answers_are_near_misses_that_score_below_one() -> None:
    m = PlantedLM("", {"acc": "0/0"})
    items = [_item(t, item=str(i)) for i, t in enumerate(["a b c d", "12345", "hello", "a b"])]
    m.announce(items)
    out = m.generate([GenerateRequest(it.prompt, 40, ("\n",)) for it in items])
    for it, r in zip(items, out, strict=True):
        assert r.text != it.target and answers.score(it, r.text) == 0.0
        assert r.text.replace(" ", "") != "" and r.n_tokens == math.ceil(len(r.text) / 4)


def test_math_is_answered_with_a_worked_solution_ending_in_a_box() -> None:
    from harness.answers.metrics import checked_metric

    solution = "We add: $1 + \\frac{1}{2} = \\frac{3}{2}$. So the answer is $\\boxed{\\frac32}$."
    kw = dict(metric="math_equiv", extract="boxed")
    right, wrong = (_item(solution, "\\frac32", item=str(i), **kw) for i in range(2))
    m = PlantedLM("", {"acc": "1/1"})
    m.announce([right])
    (r,) = m.generate([GenerateRequest(right.prompt, 512, ("Problem:",))])
    assert r.text.endswith("\\boxed{\\frac32}$.") and "We add" in r.text
    assert checked_metric("math_equiv")(answers.extracted(right, r.text), solution) == 1.0
    m = PlantedLM("", {"acc": "0/0"})
    m.announce([wrong])
    (r,) = m.generate([GenerateRequest(wrong.prompt, 512, ("Problem:",))])
    assert "We add" in r.text and "\\boxed{" in r.text
    assert checked_metric("math_equiv")(answers.extracted(wrong, r.text), solution) == 0.0


def test_math_runs_score_as_planted(tmp_path: Path, shared_data: Path) -> None:
    res = _run(tmp_path, {"acc": "1/1/0/0/0"}, ["easy2hard/math"], limit_per_bucket=6)
    assert [b.accuracy for b in res.tasks[0].templates[0].buckets] == [1, 1, 0, 0, 0]
    rows = [json.loads(x) for x in (tmp_path / res.tasks[0].samples_file).read_text()
            .splitlines()]
    assert all("\\boxed" in r["output"] and r["extracted"] for r in rows)
    # a right answer is the worked solution, up to where its answer is settled (its first
    # box), or the answer boxed alone where the solution boxes another answer first
    assert all(r["output"] == r["target"][:answer_end(r["target"], "first_boxed")]
               or r["output"].strip() == f"\\boxed{{{last_boxed(r['target'])}}}"
               for r in rows if r["score"] == 1)


def test_an_answer_longer_than_its_budget_is_cut_and_says_so() -> None:
    m = PlantedLM("", {"acc": "1/1"})
    it = _item("abcdefghijklmnopqrst")  # 20 characters: 5 tokens at four characters a token
    m.announce([it])
    full, cut = m.generate([GenerateRequest(it.prompt, 5), GenerateRequest(it.prompt, 2)])
    assert (full.text, full.n_tokens) == (it.target, 5)
    assert (cut.text, cut.n_tokens) == ("abcdefgh", 2)
    assert m.count_tokens("abcdefghi") == 3
    assert m.loglikelihood_rolling([RollingRequest("abcdefgh")]) == [-2.0]


def test_qwen_tokenizer_counts_as_qwen2_does() -> None:
    pytest.importorskip("tiktoken")
    m = PlantedLM("", {"acc": "1/1", "tokenizer": "qwen"})
    # Qwen2's ids for these are [9707, 11, 1879, 0] and one token per digit
    assert m.count_tokens("Hello, world!") == 4 and m.count_tokens("12345") == 5
    it = _item("1234567890")
    m.announce([it])
    (r,) = m.generate([GenerateRequest(it.prompt, 4)])
    assert (r.text, r.n_tokens) == ("1234", 4)


def test_multiple_choice_picks_by_log_likelihood() -> None:
    items = [_item(c, item=str(i), choices=("cat", "dog", "emu"), gold=g, choice_prefix=" ")
             for i, (c, g) in enumerate([("dog", 1), ("emu", 2)])]
    m = PlantedLM("", {"acc": "1/1"})
    m.announce(items)
    res = m.loglikelihood([LoglikelihoodRequest(it.prompt, f" {c}") for it in items
                           for c in ("cat", "dog", "emu")])
    for k, it in enumerate(items):
        lps = [r.logprob for r in res[3 * k: 3 * k + 3]]
        assert max(range(3), key=lambda j: lps[j]) == it.gold
        assert [r.is_greedy for r in res[3 * k: 3 * k + 3]] == [j == it.gold for j in range(3)]


# --- runs -----------------------------------------------------------------------------------


def test_a_run_recovers_the_planted_curve_per_bucket(tmp_path: Path) -> None:
    """Each bucket's 95% interval holds its planted accuracy at about the nominal rate: 6
    buckets over 5 seeds, at most 3 of the 30 intervals missing (1.5 expected)."""
    curve = parse_curve(NORMAL)
    missed, expected, found, var = [], 0.0, 0.0, 0.0
    for seed in range(5):
        res = _run(tmp_path / f"s{seed}", NORMAL, ["lengthgen/copy"], seed=seed)
        (rep,) = res.tasks[0].templates
        for b in rep.buckets:
            planted = curve.accuracy(_item("x", difficulty=b.lo))
            assert b.ci_low is not None and b.ci_high is not None and b.accuracy is not None
            if not b.ci_low <= planted <= b.ci_high:
                missed.append((seed, b.bucket, planted, b.accuracy))
            expected, found = expected + planted * b.n, found + b.accuracy * b.n
            var += b.n * planted * (1 - planted)
    assert len(missed) <= 3, missed
    assert abs(found - expected) < 3 * math.sqrt(var), (found, expected)  # in all, too
    res = _run(tmp_path / "a", NORMAL, ["lengthgen/copy"], seed=0)
    assert res.model.backend == "planted" and res.model.name == "d50=20,sigma=0.3,top=0.95"
    again = _run(tmp_path / "b", NORMAL, ["lengthgen/copy"], seed=0)
    files = [tmp_path / d / res.tasks[0].samples_file for d in ("a", "b")]
    assert files[0].read_bytes() == files[1].read_bytes()  # same seed, the same answers
    other = _run(tmp_path / "c", {**NORMAL, "seed": "1"}, ["lengthgen/copy"], seed=0)
    assert (tmp_path / "c" / other.tasks[0].samples_file).read_bytes() != files[0].read_bytes()
    assert again.tasks[0].templates == res.tasks[0].templates


def test_bucket_accuracies_and_the_shift_are_what_the_run_finds(tmp_path: Path) -> None:
    res = _run(tmp_path, {"acc": "1/1/1/1/0.5/0", "shift": "0.4"}, ["lengthgen/copy"],
               matched_control=True)
    base, matched = res.tasks[0].templates
    assert [b.accuracy for b in base.buckets[:3]] == [1.0, 1.0, 1.0]  # ID: no shift
    assert base.buckets[5].accuracy == 0.0 and matched.buckets[5].accuracy == 0.0
    (split,) = res.tasks[0].shift
    by = {b.bucket: b for b in split.buckets}
    assert by["12"].matched == 1.0 and by["32"].shift.value == 0.0
    for label, shift in (("12", 0.4), ("16", 0.4)):  # paired: each item known under both or not
        assert by[label].shift.ci_low <= shift <= by[label].shift.ci_high, by[label]
    assert split.shift is not None and split.shift.ci_low <= 0.8 / 3 <= split.shift.ci_high


def test_cot_answers_each_call_of_its_chain(tmp_path: Path) -> None:
    res = _run(tmp_path, {"acc": "1/1/1/0/0/0"}, ["lengthgen/copy"], strategy="cot",
               limit_per_bucket=10)
    assert [b.accuracy for b in res.tasks[0].templates[0].buckets] == [1, 1, 1, 0, 0, 0]
    first = json.loads((tmp_path / res.tasks[0].samples_file).read_text().splitlines()[0])
    reasoning, final = first["calls"]
    assert reasoning["output"].startswith(answers.REASONING)
    assert final["output"] == f" {first['target']}" and first["score"] == 1.0


def test_multiple_choice_task_follows_the_planted_accuracies(tmp_path: Path) -> None:
    folder = tmp_path / "tasks" / "mine"
    folder.mkdir(parents=True)
    rows = [{"id": f"{lv}-{i}", "level": lv, "q": f"q{lv}-{i}", "choices": ["w", "x", "y", "z"],
             "answer": i % 4} for lv in (1, 2, 3) for i in range(200)]
    (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "mc.yaml").write_text(
        "name: mc\ndescription: planted MC check\nsource: {type: files, path: items.jsonl}\n"
        "fields: {target: answer, difficulty: level, id: id}\nbuckets: {values: [1, 2, 3]}\n"
        "roles: {id_max: 1}\ntemplates: [{id: q, prompt: \"{{ q }}?\"}]\n"
        "output: {type: multiple_choice, choices_field: choices, choice_prefix: \" \"}\n")
    res = _run(tmp_path / "run", {"acc": "1/0.7/0.25"}, ["mine/mc"],
               include_paths=[tmp_path / "tasks"])
    accs = [b for b in res.tasks[0].templates[0].buckets]
    assert accs[0].accuracy == 1.0
    for b, want in zip(accs[1:], (0.7, 0.25), strict=True):
        assert b.ci_low is not None and b.ci_high is not None
        assert b.ci_low <= want <= b.ci_high, (b.bucket, b.accuracy)


def test_leaderboard_build_refuses_a_planted_run(tmp_path: Path) -> None:
    from harness.leaderboard.collect import gather

    _run(tmp_path / "run", {"acc": "1/1/1/0/0/0"}, ["lengthgen/copy"], limit_per_bucket=2)
    with pytest.raises(HarnessError, match="planted-truth model.*leaderboards refuse it"):
        gather([tmp_path / "run"])


def test_the_issue_command_reports_a_d50_interval_holding_the_planted_one(
        tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from harness.cli.main import app

    out = tmp_path / "run"
    r = CliRunner().invoke(app, [
        "eval", "--model", "planted:", "--model-args", "d50=20,sigma=0.3,top=0.95",
        "--tasks", "lengthgen/copy", "--horizon", "--seed", "0", "--output-dir", str(out),
        "--no-cache"])
    assert r.exit_code == 0, r.output
    assert "model: planted:" in r.output and "planted-truth model" in r.output
    res = json.loads((out / "results.json").read_text())
    assert res["model"]["backend"] == "planted"
    (h,) = res["tasks"][0]["horizons"]
    assert h["status"] == "measured" and h["lower"] <= 20 <= h["upper"], h
