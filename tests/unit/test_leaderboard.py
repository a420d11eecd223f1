"""Leaderboard merging, ranking and CI columns against hand-built results files."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

from harness.errors import HarnessError  # noqa: E402
from harness.leaderboard import board_file as schema  # noqa: E402
from harness.leaderboard.aggregate import board_from_runs  # noqa: E402
from harness.leaderboard.build import build  # noqa: E402
from harness.leaderboard.collect import load_leaderboard, load_results  # noqa: E402
from tests.unit.test_leaderboard_fixtures import TaskSpecLite, make_results, write_run  # noqa: E402

ADD_A = TaskSpecLite("lengthgen/addition",
                     [("1", "ID", 10, 8), ("2", "ID", 10, 6), ("3", "OOD", 10, 2),
                      ("4", "OOD", 10, 0)], gap=(0.6, 0.4, 0.8), horizon_factor=1.0)
SCAN_A = TaskSpecLite("compgen/scan_length", [("a", "ID", 10, 10), ("b", "OOD", 10, 5)],
                      gap=(0.5, 0.3, 0.7), analyses=[("compositionality_gap", 0.2)])
ADD_B = TaskSpecLite("lengthgen/addition",
                     [("1", "ID", 10, 10), ("2", "ID", 10, 10), ("3", "OOD", 10, 9),
                      ("4", "OOD", 10, 7)], gap=(0.2, 0.05, 0.35))


def _runs(tmp_path: Path) -> list[Path]:
    a = write_run(tmp_path / "alpha", make_results("alpha", [ADD_A, SCAN_A]))
    b = write_run(tmp_path / "beta", make_results("beta", [ADD_B]))
    return [a, b]


def test_entries_ranked_with_hand_computed_columns(tmp_path: Path) -> None:
    board = board_from_runs(_runs(tmp_path)).board
    # alpha ran 2 tasks, beta 1: different task sets are ranked in separate groups
    assert [(e.label, e.group, e.rank) for e in board.entries] == [("alpha", 0, 1),
                                                                    ("beta", 1, 1)]
    alpha, beta = board.entries
    assert beta.overall.value == pytest.approx(0.9)
    assert beta.suite_scores["lengthgen"].value == pytest.approx(0.9)
    assert alpha.suite_scores["lengthgen"].value == pytest.approx(0.4)
    assert alpha.suite_scores["compgen"].value == pytest.approx(0.75)
    assert alpha.overall.value == pytest.approx(0.575)
    assert alpha.overall.ci_low is None  # no per-sample files: no interval, never a made-up one
    assert alpha.id_accuracy == pytest.approx(0.85)
    assert alpha.ood_accuracy == pytest.approx(0.3)
    assert alpha.retention == pytest.approx(0.3 / 0.85)
    assert alpha.gap == pytest.approx(0.55) and alpha.n_measured == 2 and alpha.n_floor == 0
    assert alpha.horizon_factor == 1.0 and alpha.analyses == {"compositionality_gap": 0.2}
    assert alpha.n_tasks == 2 and board.suites == ["lengthgen", "compgen"]
    assert alpha.card.seed == 0 and alpha.card.dtype == "float32"
    assert alpha.card.harness_versions == ["0.1.0"] and alpha.card.backend == "hf"
    assert alpha.card.public_id.startswith("local:alpha")  # never the path /models/alpha


def test_ties_share_rank(tmp_path: Path) -> None:
    paths = _runs(tmp_path)
    paths.append(write_run(tmp_path / "gamma", make_results("gamma", [ADD_A, SCAN_A])))
    paths.append(write_run(tmp_path / "delta", make_results("delta", [ADD_B])))
    ranks = {e.label: (e.group, e.rank) for e in board_from_runs(paths).board.entries}
    assert ranks == {"alpha": (0, 1), "gamma": (0, 1), "beta": (1, 1), "delta": (1, 1)}


def test_task_boards_have_one_cell_per_bucket(tmp_path: Path) -> None:
    board = board_from_runs(_runs(tmp_path)).board
    add = next(t for t in board.tasks if t.task == "lengthgen/addition")
    assert [b.label for b in add.buckets] == ["1", "2", "3", "4"]
    assert [b.role for b in add.buckets] == ["ID", "ID", "OOD", "OOD"]
    assert [r.entry for r in add.rows] == ["alpha", "beta"]  # group, then rank order
    alpha_row = add.rows[0]
    assert [c.accuracy for c in alpha_row.buckets] == [0.8, 0.6, 0.2, 0.0]
    assert (alpha_row.gap, alpha_row.gap_ci_low, alpha_row.gap_ci_high) == (0.6, 0.4, 0.8)
    assert alpha_row.id_accuracy == pytest.approx(0.7)
    scan = next(t for t in board.tasks if t.task == "compgen/scan_length")
    assert [r.entry for r in scan.rows] == ["alpha"]
    assert scan.description == "A test task." and scan.card == {
        "axis": "length", "shift": "longer", "locus": ["input"]}


def test_last_given_duplicate_wins_and_conflicts_are_reported(tmp_path: Path) -> None:
    changed = TaskSpecLite(ADD_A.task, [("1", "ID", 10, 10), ("2", "ID", 10, 10),
                                        ("3", "OOD", 10, 10), ("4", "OOD", 10, 10)],
                           gap=(0.0, -0.1, 0.1))
    old = write_run(tmp_path / "old", make_results("alpha", [ADD_A, SCAN_A]))
    same = write_run(tmp_path / "same", make_results("alpha", [SCAN_A]))
    new = write_run(tmp_path / "new", make_results("alpha", [changed]))
    os.utime(new, (1, 1))  # an old mtime on the last given run changes nothing
    board = board_from_runs([old, same, new]).board
    assert len(board.entries) == 1
    paths = [s.path for s in board.sources]  # in the order given
    assert [s.sha256 for s in board.sources] == [
        hashlib.sha256(p.read_bytes()).hexdigest() for p in (old, same, new)]
    [row] = [t.rows[0] for t in board.tasks if t.task == ADD_A.task]
    assert row.accuracy == 1.0 and row.source == paths[2]
    [conflict] = board.conflicts  # SCAN_A duplicates are identical: no conflict
    assert (conflict.task, conflict.kept, conflict.dropped) == (ADD_A.task, paths[2], paths[0])
    assert "numbers differ" in conflict.reason
    flipped = board_from_runs([new, same, old]).board  # now the original run is given last
    [row] = [t.rows[0] for t in flipped.tasks if t.task == ADD_A.task]
    assert row.accuracy != 1.0 and flipped.conflicts[0].kept == paths[0]


def test_different_configurations_are_separate_entries(tmp_path: Path) -> None:
    a0 = write_run(tmp_path / "s0", make_results("alpha", [ADD_A], seed=0))
    a1 = write_run(tmp_path / "s1", make_results("alpha", [ADD_B], seed=1))
    dev = write_run(tmp_path / "dev", make_results("alpha", [ADD_A], seed=0,
                                                   model_args={"device": "cuda:0"}))
    board = board_from_runs([a0, a1, dev]).board  # device is not part of the configuration
    assert sorted(e.label for e in board.entries) == ["alpha [seed=0]", "alpha [seed=1]"]
    assert len({e.id for e in board.entries}) == 2 and not board.conflicts


def test_written_files(tmp_path: Path) -> None:
    out = tmp_path / "lb"
    report = build(_runs(tmp_path), out, title="Test board")
    df = pd.read_csv(out / "leaderboard.csv")
    assert list(df["model"]) == ["alpha", "beta"] and list(df["rank"]) == [1, 1]
    assert {"overall", "lengthgen", "compgen", "id_accuracy", "ood_accuracy", "gap",
            "gap_ci_low", "gap_ci_high", "retention", "horizon_factor",
            "compositionality_gap", "n_tasks"} <= set(df.columns)
    assert df.loc[0, "gap"] == pytest.approx(0.55) and math.isnan(df.loc[1, "compgen"])
    long = pd.read_csv(out / "buckets.csv")
    assert len(long) == 4 + 4 + 2
    md = (out / "leaderboard.md").read_text()
    # overall over the tasks off the floor for both (beta ran one), then the all-task mean
    assert "| 2 | 1 | beta | hf float32 | 90.0 (1) | 90.0 (1) | 90.0 (1) | - |" in md
    # alpha's gap: the mean of its two tasks' gaps, (60 [40, 80] + 50 [30, 70]) / 2, with the
    # MOVER interval of that mean from results.json's own intervals (no samples needed)
    half = 100 * math.hypot(0.1, 0.1)
    assert f"| 55.0 [{55 - half:.1f}, {55 + half:.1f}]* | 2 | 2/0/0 |" in md
    assert "| model | template | 1 (ID) | 2 (ID) | 3 (OOD) | 4 (OOD) | all |" in md
    assert "| 80.0 (n=10) |" in md  # n in every cell
    back = load_leaderboard(out / "leaderboard.json")
    assert back == report.board and back.schema_version == schema.LEADERBOARD_SCHEMA_VERSION
    for f in ("index.html", "assets/sort.js", "assets/style.css", "plots/gaps.png",
              "plots/lengthgen__addition.png", "tasks/lengthgen__addition.html",
              "models/alpha.html"):
        assert (out / f).is_file(), f
    assert (out / "plots/gaps.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_every_entry_names_its_engine_and_weight_type(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", make_results("alpha", [ADD_A]))
    b = write_run(tmp_path / "b", make_results("beta", [ADD_B], backend="llamacpp"))
    out = tmp_path / "lb"
    build([a, b], out, title="Engines")
    df = pd.read_csv(out / "leaderboard.csv")
    assert dict(zip(df["model"], df["engine"], strict=True)) == {"alpha": "hf float32",
                                                                  "beta": "llamacpp float32"}
    assert "| beta | llamacpp float32 |" in (out / "leaderboard.md").read_text()
    assert '<td data-value="llamacpp float32">llamacpp float32</td>' in (
        out / "index.html").read_text()


def test_samples_are_copied_and_linked(tmp_path: Path) -> None:
    from tests.unit.test_leaderboard_fixtures import record

    recs = [record(ADD_B.task, str(i), 1.0) for i in range(3)]
    b = write_run(tmp_path / "beta", make_results("beta", [ADD_B]), {ADD_B.task: recs})
    out = tmp_path / "lb"
    build([b], out, gzip_samples=True)
    board = load_leaderboard(out / "leaderboard.json")
    rel = board.tasks[0].rows[0].samples
    assert rel is not None and rel.startswith("runs/beta/")
    assert rel.endswith("/samples/lengthgen/addition.jsonl.gz")
    import gzip

    assert gzip.decompress((out / rel).read_bytes()).decode().count("\n") == 3
    assert f'href="../{rel}"' in (out / "tasks/lengthgen__addition.html").read_text()
    build([b], out, samples="none")
    assert load_leaderboard(out / "leaderboard.json").tasks[0].rows[0].samples is None


def test_every_schema_field_is_documented() -> None:
    src = Path(schema.__file__).read_text()
    lines = re.findall(r"^    \w+: \S.*$", src, re.M)
    assert len(lines) > 50
    assert [x for x in lines if "  # " not in x] == []


@pytest.mark.parametrize(("content", "message"), [
    (None, "no such file"),
    ("{not json", "not JSON"),
    ('{"hello": 1}', "not a genharness results.json"),
    ('{"schema_version": 99, "tasks": []}', "schema_version 99 is not supported"),
    ('{"schema_version": 3, "tasks": [{}]}', "invalid results.json"),
])
def test_bad_input_is_one_line_naming_the_file(tmp_path: Path, content: str | None,
                                               message: str) -> None:
    p = tmp_path / "r.json"
    if content is not None:
        p.write_text(content)
    with pytest.raises(HarnessError) as e:
        load_results(p)
    assert str(p) in str(e.value) and message in str(e.value) and "\n" not in str(e.value)


def test_cli_build_and_bad_input(tmp_path: Path) -> None:
    paths = _runs(tmp_path)
    out = tmp_path / "lb"
    cmd = [sys.executable, "-m", "harness", "leaderboard", "build", *map(str, paths),
           "--out", str(out), "--no-png"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "1. beta" in r.stdout and (out / "index.html").is_file()
    assert not (out / "plots").exists()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema_version": 7, "tasks": []}))
    r = subprocess.run([*cmd[:5], str(bad), "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and str(bad) in r.stderr
    r = subprocess.run([sys.executable, "-m", "harness", "leaderboard", "serve",
                        str(tmp_path / "nowhere")], capture_output=True, text=True)
    assert r.returncode == 2 and "no index.html" in r.stderr


def test_serve_previews_the_site(tmp_path: Path) -> None:
    import urllib.request

    out = tmp_path / "lb"
    build(_runs(tmp_path), out, png=False)
    proc = subprocess.Popen([sys.executable, "-m", "harness", "leaderboard", "serve", str(out),
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
        assert m, line
        with urllib.request.urlopen(m.group(1) + "index.html", timeout=10) as r:
            assert b'<table id="leaderboard"' in r.read()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_analysis_columns_come_from_the_analyses_metadata() -> None:
    """Titles, headline order and direction are declared with each analysis (@analysis), not
    listed by the leaderboard; a name no built-in declares gets the defaults."""
    from harness.analyses.registry import board_info
    from harness.leaderboard.registered import analysis_columns, analysis_title, better

    assert [board_info(n).headline for n in ("compositionality_gap", "sgr", "multi_prompt",
                                             "effective_length")] == [1, 2, 3, 4]
    assert analysis_title("sgr") == "SGR" and analysis_title("multi_prompt") == "CPS"
    assert better("compositionality_gap") == better("critical_complexity") == "low"
    assert better("sgr") == "high" and analysis_title("plugin_thing") == "plugin_thing"
    unknown = board_info("plugin_thing")
    assert unknown.headline is None and unknown.board == "mean"
    entry = schema.Entry.model_construct(analyses={n: 0.5 for n in (
        "zeta", "effective_length", "sgr", "critical_complexity", "compositionality_gap")})
    board = schema.Leaderboard.model_construct(entries=[entry])
    assert analysis_columns(board) == ["compositionality_gap", "sgr", "effective_length",
                                       "critical_complexity", "zeta"]


def test_gap_columns_come_from_the_gaps_metadata() -> None:
    """The built-in gaps declare their titles, direction and aggregation with @gap (the board's
    "gap" column is id_ood's title, lower is better); other gaps' columns follow the same
    headline-then-name order as analyses', with the defaults where no built-in declares them."""
    from harness.gaps.registry import board_info
    from harness.leaderboard.registered import gap_better, gap_columns, gap_head, gap_title

    assert gap_title("id_ood") == "gap" and gap_better("id_ood") == "none"
    assert gap_head("retention") == "retention ↑" and gap_head("horizon") == "horizon ↑"
    assert [board_info(n).headline for n in ("id_ood", "retention", "horizon")] == [0, 1, 2]
    assert board_info("retention").board == "role_ratio" and board_info("horizon").board == "mean"
    unknown = board_info("plugin_gap")
    assert (unknown.headline, unknown.better, unknown.board) == (None, "high", "mean")
    assert gap_head("plugin_gap") == "plugin_gap ↑"
    entry = schema.Entry.model_construct(analyses={}, gaps={"zeta": 0.1, "horizon": 0.2,
                                                            "alpha": 0.3})
    board = schema.Leaderboard.model_construct(entries=[entry])
    assert gap_columns(board) == ["horizon", "alpha", "zeta"]


def test_reproduce_line_carries_the_runs_include_paths() -> None:
    """A run of a task from a folder (``--include-path``) is reproducible from a clone only
    with that folder; a local absolute folder is named, never spelled out (issue 24)."""
    from harness.leaderboard.provenance import reproduce
    from tests.unit.test_leaderboard_fixtures import TaskSpecLite, make_results

    res = make_results("m", [TaskSpecLite("reference/parity", [("1", "ID", 1, 1)])])
    run = res.run.model_copy(update={"include_paths": [Path("examples/reference_models/tasks"),
                                                       Path("/home/someone/tasks")]})
    line = reproduce(res.model_copy(update={"run": run}))
    assert "--include-path examples/reference_models/tasks" in line
    assert "--include-path '<tasks>'" in line and "/home/someone" not in line
    assert "--max-answer-tokens" not in line
    capped = res.model_copy(update={"run": run.model_copy(update={"max_answer_tokens": 64})})
    assert "--max-answer-tokens 64" in reproduce(capped)  # a cap changes the answers
    # local weights (no package or hub pins them): the line says which numbers are bitwise
    assert line.endswith(f"  # bitwise only with weights of sha256 {res.model.weights_sha256[:12]}"
                         "…; weights trained again (another machine or build) are another draw "
                         "of the seed: compare them as a distribution over seeds")
    hub = res.model.model_copy(update={"name": "org/model", "path": "org/model",
                                       "weights_sha256": None, "revision": "abc"})
    assert "  # " not in reproduce(res.model_copy(update={"run": run, "model": hub}))
