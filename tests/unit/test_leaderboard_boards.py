"""Boards that carry their inputs: a rebuild from runs/ gives the same bytes, a changed task spec
is named, floors and ceilings never show a gap, and committed boards marked current pass both
checks (leaderboards/manifest.json)."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

from harness.gaps.report import GapReport  # noqa: E402
from harness.leaderboard.build import build  # noqa: E402
from harness.leaderboard.check import (  # noqa: E402
    board_include_paths,
    board_specs,
    manifest,
    rebuild_diff,
)
from harness.leaderboard.scores import holm, items_for, worst_half_width  # noqa: E402
from harness.leaderboard.stale import stale_tasks  # noqa: E402
from harness.scoring.stats import wilson_interval  # noqa: E402
from tests.unit.test_leaderboard_fixtures import (  # noqa: E402
    TaskSpecLite,
    make_results,
    record,
    write_run,
)

ROOT = Path(__file__).resolve().parents[2]
TASK = "lengthgen/addition"


def _run(tmp: Path, name: str, scores: list[float], floor: bool = False) -> Path:
    spec = TaskSpecLite(TASK, [("1", "ID", 10, 5), ("2", "OOD", 10, 2)], gap=(0.3, 0.1, 0.5))
    res = make_results(name, [spec])
    if floor:  # what harness eval writes when pooled ID is not above chance
        t = res.tasks[0]
        rep = t.templates[0].model_copy(update={"gaps": GapReport(
            status="floor", reason="pooled ID accuracy is not above chance")})
        res = res.model_copy(update={"tasks": [t.model_copy(update={"templates": [rep]})]})
    recs = [record(TASK, f"i{i:02d}", s, bucket="1" if i < 10 else "2", index=i // 10,
                   role="ID" if i < 10 else "OOD") for i, s in enumerate(scores)]
    return write_run(tmp / name, res, {TASK: recs})


def _board(tmp: Path) -> Path:
    a = _run(tmp, "alpha", [1.0] * 5 + [0.0] * 5 + [1.0] * 2 + [0.0] * 8)
    b = _run(tmp, "beta", [0.0] * 20, floor=True)
    out = tmp / "board"
    build([a, b], out, gzip_samples=True)
    return out


def test_rebuild_from_the_board_is_byte_identical_and_detects_edits(tmp_path: Path) -> None:
    out = _board(tmp_path)
    runs = sorted(p.relative_to(out).as_posix() for p in out.glob("runs/*/*/results.json"))
    assert len(runs) == 2 and all(p.startswith(("runs/alpha/", "runs/beta/")) for p in runs)
    assert rebuild_diff(out, tmp_path / "again") == []
    # the copies are the inputs: gz samples are checked on their uncompressed bytes
    gz = next(out.glob("runs/alpha/*/samples/lengthgen/addition.jsonl.gz"))
    assert gzip.decompress(gz.read_bytes()).count(b"\n") == 20
    (out / "index.html").write_text((out / "index.html").read_text() + " ")
    assert rebuild_diff(out, tmp_path / "third") == ["index.html"]


def test_rebuild_keeps_the_given_order_of_conflicting_runs(tmp_path: Path) -> None:
    """The last given duplicate wins; a rebuild passes the copies in that order, not by name
    (one of the two orders below is against the name order of the copies' folders)."""
    def run(folder: str, id_correct: int) -> Path:
        spec = TaskSpecLite(TASK, [("1", "ID", 10, id_correct), ("2", "OOD", 10, 2)],
                            gap=(0.3, 0.1, 0.5))
        return write_run(tmp_path / folder, make_results("alpha", [spec]))

    first, second = run("x", 5), run("y", 9)
    for n, order in enumerate(([first, second], [second, first])):
        out = tmp_path / f"board{n}"
        build(order, out)
        data = json.loads((out / "leaderboard.json").read_text())
        assert len(data["conflicts"]) == 1
        shown = data["tasks"][0]["rows"][0]["source"]
        assert shown == data["sources"][-1]["path"]  # the last given
        assert rebuild_diff(out, tmp_path / f"again{n}") == []


def test_floor_shows_no_gap_and_is_counted(tmp_path: Path) -> None:
    out = _board(tmp_path)
    data = json.loads((out / "leaderboard.json").read_text())
    beta = next(e for e in data["entries"] if e["label"] == "beta")
    assert (beta["gap"], beta["n_floor"], beta["n_measured"]) == (None, 1, 0)
    row = next(r for r in data["tasks"][0]["rows"] if r["entry"] == "beta")
    assert row["status"] == "floor" and row["gap"] is None and row["retention"] is None
    page = (out / "tasks/lengthgen__addition.html").read_text()
    assert '<span class="status" title="pooled ID accuracy is not above chance">floor</span>' \
        in page
    assert "floor" in (out / "leaderboard.md").read_text()
    alpha = next(e for e in data["entries"] if e["label"] == "alpha")
    # the one task is at the floor for beta: no task is off the floor for both entries, so the
    # headline score has none (issue 46) and the group is ranked by the all-task score, whose
    # interval is the item-level one around it (20 items: 7 right)
    assert alpha["overall"]["value"] is None and alpha["overall"]["n_tasks"] == 0
    assert alpha["overall_all"]["value"] == pytest.approx(0.35)
    assert alpha["overall_all"]["ci_low"] < 0.35 < alpha["overall_all"]["ci_high"]
    assert alpha["rank_low"] == 1 and beta["rank_high"] == 2
    [pair] = data["tasks"][0]["pairs"]  # same items: a sign test over items, Holm-adjusted
    assert (pair["a_better"], pair["b_better"], pair["n_items"]) == (7, 0, 20)
    assert pair["p"] == pytest.approx(2 / 2**7)


def test_a_changed_spec_is_named(tmp_path: Path) -> None:
    out = _board(tmp_path)
    specs = board_specs(out)
    assert set(specs) == {TASK}
    assert stale_tasks(specs) == [TASK]  # the fixtures record a made-up spec hash
    assert json.loads((out / "leaderboard.json").read_text())["stale_tasks"] == [TASK]
    assert 'id="stale"' in (out / "index.html").read_text()


def test_precision_rule_and_holm() -> None:
    # the farther end of the Wilson interval at the worst attainable accuracy (docs/statistics.md):
    # 93 items, enough for a symmetric half-width of 10 points at p = 0.5, reach 10.16
    assert items_for(0.10) == 97 and worst_half_width(97) <= 0.10 < worst_half_width(96)
    assert round(100 * worst_half_width(93), 2) == 10.16
    from harness.scoring.stats import wilson_interval

    far = max(max(k / 93 - wilson_interval(k, 93)[0], wilson_interval(k, 93)[1] - k / 93)
              for k in range(94))
    assert abs(far - worst_half_width(93)) < 1e-12
    assert holm([0.01, 0.04, None, 0.03]) == [0.03, 0.06, None, 0.06]


def _published() -> list[str]:
    return sorted(n for n, b in manifest(ROOT / "leaderboards").items()
                  if b["status"] == "current")


def test_manifest_lists_every_published_board() -> None:
    boards = manifest(ROOT / "leaderboards")
    folders = {p.parent.name for p in (ROOT / "leaderboards").glob("*/leaderboard.json")}
    assert folders <= set(boards), f"boards missing from manifest.json: {folders - set(boards)}"
    for name, b in boards.items():
        if b["status"] == "stale":  # never hidden: its page says so
            page = (ROOT / "leaderboards" / name / "index.html").read_text()
            assert "Stale against" in page, f"{name}: a stale board must say so on its page"


def _with_mirror(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spec hashes of data tasks name the data mirror: check and rebuild with the one the
    published boards were built with (``../shared/data``) unless GENHARNESS_DATA names one."""
    data = ROOT.parent / "shared" / "data"
    if "GENHARNESS_DATA" not in os.environ and data.is_dir():
        monkeypatch.setenv("GENHARNESS_DATA", str(data))


@pytest.mark.parametrize("name", _published())
def test_current_board_specs_match_todays_tasks(name: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    _with_mirror(monkeypatch)
    monkeypatch.chdir(ROOT)  # include paths are recorded relative to the repository
    board = ROOT / "leaderboards" / name
    stale = stale_tasks(board_specs(board), board_include_paths(board))
    assert stale == [], (f"leaderboards/{name} is stale: rerun {', '.join(stale)} "
                         "(bash scripts/build_leaderboard.sh), or mark it stale in "
                         "leaderboards/manifest.json")


@pytest.mark.parametrize("name", _published())
def test_current_board_rebuilds_byte_for_byte(name: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    _with_mirror(monkeypatch)  # a board marks tasks stale against the specs it resolves
    diff = rebuild_diff(ROOT / "leaderboards" / name, tmp_path / name)
    assert diff == [], f"leaderboards/{name}: a rebuild from its runs/ differs: {diff[:10]}"


def test_task_page_describes_what_the_runs_ran() -> None:
    from harness.leaderboard.aggregate import _describe

    spec = {"templates": [{"id": "long", "prompt": "Add: {{ a }}"}, {"id": "plain", "prompt": "x"}],
            "fewshot": {"k": 3}, "scoring": {"metric": "exact_match"},
            "output": {"type": "generate"}}
    tpls, words, _ = _describe(spec, {"plain"}, {0})  # eval --templates plain --num-fewshot 0
    assert [t.id for t in tpls] == ["plain"] and words == "zero-shot (--num-fewshot 0)"
    tpls, words, _ = _describe(spec, {"long", "plain"}, {None})  # the task's own k
    assert [t.id for t in tpls] == ["long", "plain"] and words == "k = 3, drawn per item"
    assert _describe(spec, {"long"}, {None, 1})[1] == "k = 1 / 3 (--num-fewshot)"


def test_a_family_of_seeds_shows_its_success_rate(tmp_path: Path) -> None:
    # seeds of one model: OOD 10/10, 9/10 (exactly 90%: a success), 8/10, 0/10, all fitting
    # the ID range; a fifth with OOD 10/10 but ID 8/10 does not fit and is not counted
    fit = [(10, ood) for ood in (10, 9, 8, 0)] + [(8, 10)]
    runs = [write_run(tmp_path / f"m-s{i}", make_results(f"m-s{i}", [TaskSpecLite(
                TASK, [("1", "ID", 10, id_ok), ("2", "OOD", 10, ood)])], seed=i))
            for i, (id_ok, ood) in enumerate(fit)]
    out = tmp_path / "board"
    build(runs, out)
    [fam] = json.loads((out / "leaderboard.json").read_text())["families"]
    s = fam["success"][TASK]
    lo, hi = wilson_interval(2, 4)
    assert (s["succeeded"], s["fitted"], s["members"], s["rate"], s["threshold"]) == (
        2, 4, 5, 0.5, 0.9)
    assert (s["ci_low"], s["ci_high"]) == (pytest.approx(lo), pytest.approx(hi))
    # 2 of the 4 fitted seeds reach 90% in the OOD bucket: 50% < 90%, so the extent is the edge
    assert (s["extent"], s["edge_succeeded"], s["verdict"]) == (1, 2, "fails at the edge")
    assert s["edge_gap"] == pytest.approx((0 + 0.1 + 0.2 + 1.0) / 4)
    assert fam["task_stats"][TASK][0] == pytest.approx((20 + 19 + 18 + 10 + 18) / 100)
    shown = (f"{TASK}: fails at the edge; 4 of 5 seeds fit ID ≥ 90%; 2 of 4 with OOD ≥ 90% "
             f"(50.0 [{100 * lo:.1f}, {100 * hi:.1f}]); extent 1 (1.00× the edge), "
             "edge gap 32.5")
    assert shown in (out / "index.html").read_text()
    assert shown in (out / "leaderboard.md").read_text()


def test_a_task_from_an_include_path_is_checked_against_that_folder() -> None:
    from harness.run.results import spec_hash
    from harness.tasks.index import TaskIndex

    folder = ROOT / "examples" / "reference_models" / "tasks"
    index = TaskIndex.build([folder])
    [ref] = index.resolve(["reference/parity"])
    today = spec_hash(index.spec(ref))
    assert stale_tasks({"reference/parity": {today}}, [folder]) == []
    assert stale_tasks({"reference/parity": {"0" * 64}}, [folder]) == ["reference/parity"]
    assert stale_tasks({"reference/parity": {today}}) == ["reference/parity"]  # found nowhere


def test_items_a_generator_now_makes_differently_are_named(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A generator change keeps the spec's hash: the board's items are made again and compared
    with the samples' targets (``drifted_tasks``)."""
    from dataclasses import replace

    from typer.testing import CliRunner

    from harness.cli.main import app
    from harness.config import RunConfig
    from harness.generators.registry import GENERATORS, get_generator
    from harness.leaderboard.stale import drifted_tasks
    from harness.run.evaluate import evaluate
    from harness.testing import ScriptedLM

    task = "lengthgen/copy"
    cfg = RunConfig(model="scripted:s", tasks=[task], seed=4, limit_per_bucket=3,
                    use_cache=False, output_dir=tmp_path / "run")
    evaluate(cfg, model=ScriptedLM("a b"))
    out = tmp_path / "board"
    build([tmp_path / "run"], out, gzip_samples=True)
    assert drifted_tasks(out) == []
    info = get_generator("copy")

    def upper(*args: object, **kw: object) -> dict[str, object]:
        rec = info.fn(*args, **kw)
        return {k: v.upper() if isinstance(v, str) else v for k, v in rec.items()}

    monkeypatch.setitem(GENERATORS.items, "copy", replace(info, fn=upper))
    assert drifted_tasks(out) == [task]
    r = CliRunner().invoke(app, ["leaderboard", "check", str(out), "--no-rebuild"])
    assert r.exit_code == 1 and f"makes other items for {task}: rerun" in r.output
    build([tmp_path / "run"], tmp_path / "again", gzip_samples=True)  # built today: says so
    assert json.loads((tmp_path / "again" / "leaderboard.json").read_text())[
        "stale_tasks"] == [task]
    assert "on items or with a horizon search that differ" in (
        tmp_path / "again" / "index.html").read_text()


def test_a_search_the_answer_budget_ended_is_stale(tmp_path: Path) -> None:
    """A horizon search whose range the answer budget ended (before searches raised their
    budgets up to the context) is named stale by the build and by `leaderboard check`."""
    from typer.testing import CliRunner

    from harness.cli.main import app
    from harness.config import RunConfig
    from harness.leaderboard.stale import board_runs, searched_otherwise
    from harness.run.evaluate import evaluate
    from harness.testing import ScriptedLM

    task = "lengthgen/copy"
    cfg = RunConfig(model="scripted:s", tasks=[task], seed=4, limit_per_bucket=3,
                    use_cache=False, horizon=True, horizon_items=20,
                    output_dir=tmp_path / "run")
    evaluate(cfg, model=ScriptedLM("a b"))
    build([tmp_path / "run"], tmp_path / "board", gzip_samples=True)
    assert searched_otherwise(board_runs(tmp_path / "board")) == []
    res = tmp_path / "run" / "results.json"
    data = json.loads(res.read_text())
    assert data["tasks"][0]["horizons"]
    for h in data["tasks"][0]["horizons"]:
        h["range_end"] = "output"
    res.write_text(json.dumps(data))
    build([tmp_path / "run"], tmp_path / "again", gzip_samples=True)
    assert json.loads((tmp_path / "again" / "leaderboard.json").read_text())[
        "stale_tasks"] == [task]
    r = CliRunner().invoke(app, ["leaderboard", "check", str(tmp_path / "again"),
                                 "--no-rebuild"])
    assert r.exit_code == 1 and f"a horizon search of {task} ended its range" in r.output


@pytest.mark.parametrize("name", _published())
def test_current_board_items_are_the_ones_todays_code_makes(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.leaderboard.stale import drifted_tasks

    _with_mirror(monkeypatch)
    monkeypatch.chdir(ROOT)
    board = ROOT / "leaderboards" / name
    drifted = drifted_tasks(board, board_include_paths(board))
    assert drifted == [], (f"leaderboards/{name}: today's code makes other items for "
                           f"{', '.join(drifted)}: rerun them")
    from harness.leaderboard.stale import board_runs, searched_otherwise

    searched = searched_otherwise(board_runs(board))
    assert searched == [], (f"leaderboards/{name}: a horizon search of {', '.join(searched)} "
                            "ended where today's goes on: rerun them")
