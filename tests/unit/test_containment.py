"""Leaderboard builds from hostile results files: nothing written outside --out, no local file
published, no link written through, samples checked against their sha256, and a build that
fails or races another leaves a whole leaderboard (the old one or the new one)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

from harness.errors import HarnessError  # noqa: E402
from harness.leaderboard import build as build_mod  # noqa: E402
from harness.leaderboard.build import build  # noqa: E402
from harness.leaderboard.collect import load_leaderboard  # noqa: E402
from harness.leaderboard.paths import BuildLock, SafeWriter  # noqa: E402
from tests.unit.test_leaderboard_fixtures import (  # noqa: E402
    TaskSpecLite,
    make_results,
    record,
    write_run,
)

ADD = TaskSpecLite("lengthgen/addition", [("1", "ID", 4, 3), ("2", "OOD", 4, 1)],
                   gap=(0.5, 0.1, 0.9))
SECRET = "top secret contents of a local file"


def files_under(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


def good_run(folder: Path, model: str = "good") -> Path:
    recs = [record(ADD.task, str(i), 1.0) for i in range(2)]
    return write_run(folder, make_results(model, [ADD]), {ADD.task: recs})


def edit_task(results: Path, **fields: Any) -> None:
    data = json.loads(results.read_text())
    data["tasks"][0].update(fields)
    results.write_text(json.dumps(data))


def one_line(e: pytest.ExceptionInfo[HarnessError]) -> str:
    msg = str(e.value)
    assert "\n" not in msg and "Traceback" not in msg
    return msg


def test_a_task_name_climbing_out_writes_nothing_outside_out(tmp_path: Path) -> None:
    task = TaskSpecLite("x/../../../../ESCAPED", ADD.buckets, gap=ADD.gap)
    run = tmp_path / "in/a/b/run"
    (run / "samples/x").mkdir(parents=True)
    results = write_run(run, make_results("evil", [task]))
    (run / "samples/x/../../../../ESCAPED.jsonl").write_text(json.dumps(
        record(ADD.task, "0", 1.0).model_dump(mode="json")) + "\n")
    other = good_run(tmp_path / "in/good")
    out = tmp_path / "out"
    with pytest.raises(HarnessError) as e:
        build([results, other], out, png=False)
    msg = one_line(e)
    assert str(results) in msg and "tasks[0].task" in msg and "--skip-invalid" in msg
    assert not out.exists()  # no partial board
    report = build([results, other], out, png=False, skip_invalid=True)
    assert len(report.skipped) == 1 and "tasks[0].task" in report.skipped[0]
    assert [t.task for t in report.board.tasks] == [ADD.task]
    outside = [p for p in tmp_path.rglob("*") if not p.is_relative_to(tmp_path / "in")
               and not p.is_relative_to(out)]
    assert outside == []  # no ESCAPED.jsonl, no lock file, no leftover build folder
    assert not any("ESCAPED" in name for name in files_under(out))


@pytest.mark.parametrize("samples_file", [
    "ABSOLUTE", "../secret.txt", "samples/../../secret.txt", "samples/link.jsonl",
    "samples/dirlink/secret.txt", "/etc/hostname",
])
def test_a_samples_file_outside_its_run_folder_is_refused(tmp_path: Path,
                                                          samples_file: str) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    run = tmp_path / "run"
    results = good_run(run, "evil")
    (run / "samples/link.jsonl").symlink_to(secret)
    (run / "samples/dirlink").symlink_to(tmp_path, target_is_directory=True)
    edit_task(results, samples_file=str(secret) if samples_file == "ABSOLUTE" else samples_file)
    out = tmp_path / "lb"
    with pytest.raises(HarnessError) as e:
        build([results], out, png=False)
    msg = one_line(e)
    assert str(results) in msg and "tasks[0].samples_file" in msg
    assert not out.exists()
    report = build([results, good_run(tmp_path / "good")], out, png=False, skip_invalid=True)
    assert len(report.skipped) == 1 and [e.label for e in report.board.entries] == ["good"]
    published = b"".join(files_under(out).values())
    assert SECRET.encode() not in published
    if Path("/etc/hostname").is_file() and Path("/etc/hostname").read_bytes().strip():
        assert Path("/etc/hostname").read_bytes() not in published


def test_a_link_inside_the_run_folder_is_followed_for_reading(tmp_path: Path) -> None:
    run = tmp_path / "run"
    results = good_run(run)
    real = run / "samples/lengthgen/addition.jsonl"
    os.replace(real, run / "kept.jsonl")
    real.symlink_to(run / "kept.jsonl")
    build([results], tmp_path / "lb", png=False)
    rel = load_leaderboard(tmp_path / "lb/leaderboard.json").tasks[0].rows[0].samples
    assert rel and (tmp_path / "lb" / rel).read_bytes() == (run / "kept.jsonl").read_bytes()


def test_links_in_an_old_leaderboard_are_never_written_through(tmp_path: Path) -> None:
    runs = [good_run(tmp_path / "run")]
    out = tmp_path / "lb"
    build(runs, out, png=False)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    victim_dir = tmp_path / "victim_dir"
    victim_dir.mkdir()
    (out / "leaderboard.csv").unlink()
    (out / "leaderboard.csv").symlink_to(victim)
    (out / "index.html").unlink()
    (out / "index.html").symlink_to(victim)
    import shutil

    shutil.rmtree(out / "assets")
    (out / "assets").symlink_to(victim_dir, target_is_directory=True)
    build(runs, out, png=True)
    assert victim.read_text() == "keep me" and list(victim_dir.iterdir()) == []
    for name in ("leaderboard.csv", "index.html", "assets"):
        assert not (out / name).is_symlink()
    assert (out / "leaderboard.csv").read_text().startswith("group,")


def test_safe_writer_refuses_paths_leaving_its_root(tmp_path: Path) -> None:
    w = SafeWriter(tmp_path / "root")
    (tmp_path / "root").mkdir()
    (tmp_path / "root/sub").symlink_to(tmp_path, target_is_directory=True)
    for rel in ("../x", "a/../../x", "/etc/x", "a//b", "sub/x"):
        with pytest.raises(HarnessError):
            w.write_text(rel, "no")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["root"]


def test_out_that_is_a_link_or_holds_other_files_is_refused(tmp_path: Path) -> None:
    runs = [good_run(tmp_path / "run")]
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.txt").write_text("mine")
    with pytest.raises(HarnessError) as e:
        build(runs, home, png=False)
    assert "holds no leaderboard.json" in one_line(e)
    assert (home / "notes.txt").read_text() == "mine"
    (tmp_path / "link").symlink_to(home, target_is_directory=True)
    with pytest.raises(HarnessError) as e:
        build(runs, tmp_path / "link", png=False)
    assert "symbolic link" in one_line(e)
    assert sorted(p.name for p in home.iterdir()) == ["notes.txt"]
    (tmp_path / "empty").mkdir()
    build(runs, tmp_path / "empty", png=False)  # an empty folder is fine
    assert (tmp_path / "empty/index.html").is_file()


def _with_sha(tmp_path: Path) -> tuple[Path, Path]:
    run = tmp_path / "run"
    results = good_run(run)
    samples = run / "samples/lengthgen/addition.jsonl"
    edit_task(results, samples_sha256=hashlib.sha256(samples.read_bytes()).hexdigest())
    return results, samples


@pytest.mark.parametrize("gz", [False, True])
def test_samples_are_checked_against_their_sha256(tmp_path: Path, gz: bool) -> None:
    results, samples = _with_sha(tmp_path)
    out = tmp_path / "lb"
    build([results], out, png=False, gzip_samples=gz)  # matching: copied
    before = files_under(out)
    assert any(name.startswith("runs/") for name in before)
    samples.write_text(samples.read_text().replace('"score": 1.0', '"score": 0.0', 1))
    with pytest.raises(HarnessError) as e:
        build([results], out, png=False, gzip_samples=gz)
    msg = one_line(e)
    assert str(samples) in msg and "samples_sha256" in msg and str(results) in msg
    assert files_under(out) == before  # the previous leaderboard, untouched
    with pytest.raises(HarnessError) as e:  # nothing left: no board, rather than an empty one
        build([results], out, png=False, skip_invalid=True, gzip_samples=gz)
    assert "no task results to show (1 left out as invalid)" in one_line(e)
    assert files_under(out) == before
    report = build([results, good_run(tmp_path / "other", "other")], out, png=False,
                   skip_invalid=True, gzip_samples=gz)
    assert [e.label for e in report.board.entries] == ["other"]
    assert "samples_sha256" in report.skipped[0]


def test_samples_changed_while_copying_fail_the_build(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    results, samples = _with_sha(tmp_path)
    real = build_mod._copy_files

    def tamper_then_copy(*a: Any) -> list[Path]:  # after the check, before the copy
        samples.write_text("{}\n")
        return real(*a)

    monkeypatch.setattr(build_mod, "_copy_files", tamper_then_copy)
    with pytest.raises(HarnessError) as e:
        build([results], tmp_path / "lb", png=False)
    assert "samples_sha256 does not match" in one_line(e)
    assert not (tmp_path / "lb").exists()


def test_a_failing_build_leaves_the_previous_leaderboard_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = [good_run(tmp_path / "run")]
    out = tmp_path / "lb"
    build(runs, out, title="first", png=False)
    before = files_under(out)

    def disk_full(*a: object, **k: object) -> list[Path]:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("harness.leaderboard.site.write_site", disk_full)
    with pytest.raises(HarnessError) as e:
        build(runs, out, title="second", png=False)
    assert "No space left on device" in one_line(e) and str(out) in str(e.value)
    assert files_under(out) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_second_build_into_one_folder_fails_at_once_naming_the_first(tmp_path: Path) -> None:
    runs = [good_run(tmp_path / "run")]
    out = tmp_path / "lb"
    with BuildLock(out):
        with pytest.raises(HarnessError) as e:
            build(runs, out, png=False)
        msg = one_line(e)
        assert "another leaderboard build" in msg and f"pid {os.getpid()}" in msg
        assert not out.exists()
    (tmp_path / ".lb.build-killed").mkdir()  # left by a build that was killed
    (tmp_path / ".lb.build-killed/index.html").write_text("half")
    build(runs, out, png=False)  # free again
    assert (out / "index.html").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lb", "run"]


def _titles(out: Path) -> set[str]:
    md = (out / "leaderboard.md").read_text().splitlines()[0].removeprefix("# ")
    html = (out / "index.html").read_text()
    page = html.split("<title>", 1)[1].split("</title>", 1)[0]
    return {load_leaderboard(out / "leaderboard.json").title, md, page.split(" ")[0]}


def test_concurrent_builds_leave_one_whole_leaderboard(tmp_path: Path) -> None:
    runs = [good_run(tmp_path / "run")]
    out = tmp_path / "lb"
    outcomes: list[str] = []

    def one(title: str) -> None:
        try:
            build(runs, out, title=title, png=False)
            outcomes.append("ok")
        except HarnessError as e:
            assert "another leaderboard build" in str(e)
            outcomes.append("refused")

    for _ in range(3):
        threads = [threading.Thread(target=one, args=(t,)) for t in ("AAA", "BBB")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(_titles(out)) == 1  # every file from the same build
    assert len(outcomes) == 6 and "ok" in outcomes


def test_cli_refuses_in_one_line_and_skips_with_a_warning(tmp_path: Path) -> None:
    results = good_run(tmp_path / "run", "evil")
    edit_task(results, samples_file="/etc/hostname")
    ok = good_run(tmp_path / "ok")
    out = tmp_path / "lb"
    cmd = [sys.executable, "-m", "harness", "leaderboard", "build", str(results), str(ok),
           "--out", str(out), "--no-png"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "tasks[0].samples_file" in r.stderr and not out.exists()
    r = subprocess.run([*cmd, "--skip-invalid"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith("warning: skipped: ") and r.stderr.count("\n") == 1
    assert "1 tasks skipped" in r.stdout


def test_compare_reads_no_samples_file_outside_a_run_folder(tmp_path: Path) -> None:
    from harness.leaderboard.paired import compare_runs

    a, b = good_run(tmp_path / "a", "a"), good_run(tmp_path / "b", "b")
    assert compare_runs(a, b).tasks[0].task == ADD.task
    target = tmp_path / "a/samples/lengthgen/addition.jsonl"
    edit_task(b, samples_file=str(target))  # a valid samples file, but another run's
    with pytest.raises(HarnessError) as e:
        compare_runs(a, b)
    assert str(b) in one_line(e) and "tasks[0].samples_file" in str(e.value)
    edit_task(b, samples_file="samples/lengthgen/addition.jsonl",
              samples_sha256="0" * 64)
    with pytest.raises(HarnessError) as e:
        compare_runs(a, b)
    assert "samples_sha256" in one_line(e)
