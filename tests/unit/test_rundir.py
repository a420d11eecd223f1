"""One run per output folder, in process: the lock, resume versus refusal, --overwrite and stale
files, results.json never beside samples it does not describe, samples sha256, links never
followed, and output faults (a fault-injecting writer) as one line with a resumable folder."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import IO

import pytest

from harness.config import RunConfig
from harness.errors import HarnessError, Interrupted
from harness.files import sha256_file
from harness.run import results as results_mod
from harness.run.evaluate import evaluate
from harness.run.results import SamplesFile, SampleWriter, read_samples
from harness.run.rundir import LOCK_NAME, MANIFEST_NAME, OutputError, RunLock
from harness.scoring.report import task_reports
from harness.spec.buckets import build_buckets
from harness.spec.task import TaskSpec
from tests.fixtures.fake_model import FakeLM


def cfg(out: Path, **kw: object) -> RunConfig:
    base: dict[str, object] = dict(model="fake:x", tasks=["lengthgen/copy"], seed=0,
                                   limit_per_bucket=2, output_dir=out)
    base.update(kw)
    return RunConfig.model_validate(base)


def echo() -> FakeLM:
    return FakeLM(lambda p: " abc")


def test_second_live_writer_fails_at_once_naming_the_holder(tmp_path: Path) -> None:
    held = RunLock(tmp_path)
    held.acquire()
    try:
        with pytest.raises(HarnessError) as e:
            evaluate(cfg(tmp_path), model=echo())
        msg = str(e.value)
        assert f"pid {os.getpid()}" in msg and "started 20" in msg and "\n" not in msg
        assert not (tmp_path / "samples").exists()  # nothing written by the refused run
    finally:
        held.release()
    assert not (tmp_path / LOCK_NAME).exists()
    evaluate(cfg(tmp_path), model=echo())  # free again once released


def test_lock_of_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    (tmp_path / LOCK_NAME).write_text(json.dumps(
        {"pid": int(dead.stdout), "host": "h", "started": "2026-01-01T00:00:00Z"}))
    res = evaluate(cfg(tmp_path), model=echo())
    assert res.tasks and (tmp_path / "results.json").is_file()
    assert not (tmp_path / LOCK_NAME).exists() and not (tmp_path / MANIFEST_NAME).exists()


def test_same_configuration_resumes_other_one_refuses_overwrite_cleans(tmp_path: Path) -> None:
    first = evaluate(cfg(tmp_path, tasks=["lengthgen/copy", "lengthgen/reverse"]), model=echo())
    before = (tmp_path / "results.json").read_bytes()
    again = evaluate(cfg(tmp_path, tasks=["lengthgen/copy", "lengthgen/reverse"],
                         chunk_size=3), model=echo())  # chunk size does not change results
    assert again.tasks == first.tasks
    now = (tmp_path / "results.json").read_bytes()
    assert json.loads(before)["tasks"] == json.loads(now)["tasks"]

    with pytest.raises(HarnessError) as e:
        evaluate(cfg(tmp_path, seed=1), model=echo())
    msg = str(e.value)
    assert "another run's results" in msg and "seed 0 (now 1)" in msg and "--overwrite" in msg
    assert (tmp_path / "results.json").read_bytes() == now  # the refusal touched nothing

    res = evaluate(cfg(tmp_path, seed=1), model=echo(), overwrite=True)
    assert [t.task for t in res.tasks] == ["lengthgen/copy"]
    left = sorted(p.relative_to(tmp_path).as_posix() for p in (tmp_path / "samples").rglob("*")
                  if p.is_file())
    assert left == ["samples/lengthgen/copy.jsonl"]  # reverse's old samples are gone
    assert json.loads((tmp_path / "results.json").read_text())["run"]["seed"] == 1


def test_unknown_samples_refuse_without_overwrite(tmp_path: Path) -> None:
    (tmp_path / "samples").mkdir()
    (tmp_path / "samples" / "x.jsonl").write_text("{}\n")
    with pytest.raises(HarnessError, match="results of an unknown run"):
        evaluate(cfg(tmp_path), model=echo())
    evaluate(cfg(tmp_path), model=echo(), overwrite=True)
    assert not (tmp_path / "samples" / "x.jsonl").exists()


def test_interrupted_rerun_leaves_no_old_results_json(tmp_path: Path) -> None:
    evaluate(cfg(tmp_path), model=echo())
    assert (tmp_path / "results.json").is_file()
    calls = 0

    def answer(prompt: str) -> str:
        nonlocal calls
        calls += 1
        if calls > 5:
            raise KeyboardInterrupt
        return " abc"

    with pytest.raises(Interrupted) as e:
        evaluate(cfg(tmp_path, chunk_size=2), model=FakeLM(answer))
    assert str(e.value).startswith("interrupted: 0 of 1 tasks done (lengthgen/copy: 4 samples "
                                   "written); rerun")
    assert not (tmp_path / "results.json").exists()  # never beside samples it does not describe
    assert not (tmp_path / LOCK_NAME).exists()
    evaluate(cfg(tmp_path), model=echo())  # the same configuration resumes
    assert (tmp_path / "results.json").is_file()


def test_output_dir_under_a_file_fails_before_the_model_loads(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    # "nosuch:" would fail to load: the folder is checked first
    with pytest.raises(OutputError, match=r"--output-dir .*afile/sub: .*afile is a file"):
        evaluate(cfg(tmp_path / "afile" / "sub", model="nosuch:x"))


def test_samples_sha256_recorded_and_checked(tmp_path: Path) -> None:
    res = evaluate(cfg(tmp_path), model=echo())
    (task,) = res.tasks
    path = tmp_path / task.samples_file
    assert task.samples_sha256 == sha256_file(path)
    spec = TaskSpec.model_validate(task.spec)
    buckets = build_buckets(spec.buckets, spec.roles)
    again = task_reports(SamplesFile.of(tmp_path, task), buckets, spec.gaps, 0,
                         spec.scoring.metric, extract=spec.scoring.extract)
    assert again == task.templates
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]))  # one sample dropped after the run
    with pytest.raises(HarnessError, match="differs from samples_sha256"):
        task_reports(SamplesFile.of(tmp_path, task), buckets, spec.gaps, 0)
    with pytest.raises(HarnessError, match="differs from samples_sha256"):
        read_samples(path, task.samples_sha256)
    outside = task.model_copy(update={"samples_file": "../elsewhere.jsonl"})
    with pytest.raises(HarnessError, match="outside the run folder"):
        SamplesFile.of(tmp_path, outside)


def test_symlinks_in_samples_are_never_followed(tmp_path: Path) -> None:
    out = tmp_path / "run"
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    (out / "samples" / "lengthgen").mkdir(parents=True)
    (out / "samples" / "lengthgen" / "copy.jsonl").symlink_to(target)
    evaluate(cfg(out), model=echo(), overwrite=True)
    assert target.read_text() == "keep me\n"
    written = out / "samples" / "lengthgen" / "copy.jsonl"
    assert not written.is_symlink() and len(read_samples(written)) > 0

    out2 = tmp_path / "run2"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out2 / "samples").mkdir(parents=True)
    (out2 / "samples" / "lengthgen").symlink_to(elsewhere, target_is_directory=True)
    evaluate(cfg(out2), model=echo())  # a stale link is removed, never written through
    assert list(elsewhere.iterdir()) == []
    assert not (out2 / "samples" / "lengthgen").is_symlink()
    (out2 / "samples" / "evil").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(OutputError, match="evil is a symbolic link"):
        SampleWriter(out2 / "samples" / "evil" / "t.jsonl", out2)
    assert list(elsewhere.iterdir()) == []


class _FullDisk:
    """A file object that takes ``room`` bytes, then fails like a full disk."""

    def __init__(self, inner: IO[bytes], room: int) -> None:
        self.inner, self.room = inner, room
        self.closed = False

    def write(self, data: bytes) -> int:
        if len(data) > self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= len(data)
        return self.inner.write(data)

    def flush(self) -> None:
        self.inner.flush()

    def close(self) -> None:
        self.closed = True
        self.inner.close()


def test_disk_full_is_one_line_and_the_rerun_resumes(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulated at the write layer (tests/e2e/test_faults.py does it on a real full tmpfs)."""
    real = results_mod.open_new
    monkeypatch.setattr(results_mod, "open_new",
                        lambda path, root: _FullDisk(real(path, root), 2000))  # type: ignore[arg-type]
    with pytest.raises(OutputError) as e:
        evaluate(cfg(tmp_path), model=echo())
    assert "copy.jsonl: cannot write: No space left on device" in str(e.value)
    assert "\n" not in str(e.value)
    assert not (tmp_path / "results.json").exists() and not (tmp_path / LOCK_NAME).exists()
    monkeypatch.setattr(results_mod, "open_new", real)
    res = evaluate(cfg(tmp_path), model=echo())  # same folder, same configuration: resumes
    assert res.tasks[0].samples_sha256 == sha256_file(
        tmp_path / res.tasks[0].samples_file)
