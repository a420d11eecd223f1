"""Output faults on the real ``harness eval`` command (issue 15, "Faults"): a second live writer,
Ctrl-C, a full disk and a read-only folder each give one line, lose nothing finished, and the
rerun resumes. The full disk and the read-only folder are real: a small tmpfs mounted in a
private mount namespace (``unshare -rm``); where that is not allowed those two tests skip
(tests/unit/test_rundir.py simulates the full disk at the write layer everywhere)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import comparable, samples_bytes
from tests.plugins.fakedist import REPO, make_dist

# A model backend answering "abc" after SLOW_S seconds per request (so a run can be caught
# part-way), reporting each response as it finishes (so the response cache keeps it).
SLOW = """\
import os, time
from harness.testing import ScriptedLM


class SlowLM(ScriptedLM):
    def generate(self, requests, on_done=None):
        out = []
        for i, r in enumerate(requests):
            time.sleep(float(os.environ.get("SLOW_S", "0")))
            (res,) = super().generate([r])
            out.append(res)
            if on_done:
                on_done(i, res)
        return out


def factory(name, model_args, batch_size):
    return SlowLM(name, name=name)
"""
TASK = "lengthgen/copy"


@pytest.fixture()
def site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    make_dist(site, "slow-model", "1.0", {"harness.models": {"slow": "slowplug:factory"}},
              {"slowplug.py": SLOW})
    return site


def env(site: Path, slow_s: float) -> dict[str, str]:
    return {**os.environ, "COLUMNS": "200", "SLOW_S": str(slow_s),
            "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}


def eval_args(out: Path, cache: Path, model: str = "slow:abc") -> list[str]:
    return [sys.executable, "-m", "harness", "eval", "--model", model, "--tasks", TASK,
            "--limit-per-bucket", "3", "--chunk-size", "4", "--seed", "1",
            "--output-dir", str(out), "--cache-dir", str(cache)]


def interruptible() -> None:
    """In the child before exec: Ctrl-C back to its default. A shell starts background jobs
    (``cmd &``, as CI runners and nohup scripts may) with SIGINT ignored, and Python then never
    raises KeyboardInterrupt: the run would ignore the test's Ctrl-C and finish."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run(site: Path, args: list[str], slow_s: float = 0.0,
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, env=env(site, slow_s),
                          timeout=300, cwd=cwd)


def errors(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith(("error:", "interrupted"))]


def results(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "results.json").read_text())
    return data


def wait_for(check: Any, proc: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + 120
    while not check():
        assert proc.poll() is None, f"the run ended before {what}: {proc.communicate()}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def lines(path: Path) -> int:
    return len(path.read_bytes().splitlines()) if path.is_file() else 0


def test_second_live_writer_fails_at_once(site: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    # 1 s a prompt: the first run must still be writing when the second (a whole Python start
    # on a loaded 2-core machine) asks; at 0.2 s it sometimes finished first
    first = subprocess.Popen(eval_args(out, tmp_path / "c1"), env=env(site, 1.0), text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             preexec_fn=interruptible)
    try:
        lock = out / ".harness.lock"
        wait_for(lambda: lock.is_file() and lock.read_text().strip(), first, "the lock")
        second = run(site, eval_args(out, tmp_path / "c2", model="slow:xyz"))
        assert second.returncode == 2, second.stderr
        (line,) = errors(second.stderr)
        assert f"another harness run is writing there (pid {first.pid} on " in line
        assert ", started 20" in line and "Traceback" not in second.stderr
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=120)
    assert first.returncode == 130


def test_other_options_refused_unless_overwrite_default_folder_replaced(
        site: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run(site, eval_args(out, tmp_path / "c")).returncode == 0
    other = [*eval_args(out, tmp_path / "c"), "--seed", "2"]
    r = run(site, other)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert errors(r.stderr) == [
        f"error: --output-dir {out} holds another run's results (seed 1 (now 2)); rerun with "
        "the same options to resume, pass --overwrite to replace them, or choose another folder"]
    assert results(out)["run"]["seed"] == 1
    assert run(site, [*other, "--overwrite"]).returncode == 0
    assert results(out)["run"]["seed"] == 2
    # without --output-dir, runs/latest holds whatever ran last
    bare = [a for a in eval_args(out, tmp_path / "c") if a not in ("--output-dir", str(out))]
    for seed in ("3", "4"):
        r = run(site, [*bare, "--seed", seed], cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    assert results(tmp_path / "runs" / "latest")["run"]["seed"] == 4


def test_ctrl_c_is_one_line_exit_130_and_the_rerun_resumes(site: Path, tmp_path: Path) -> None:
    clean = run(site, eval_args(tmp_path / "clean", tmp_path / "fresh"))
    assert clean.returncode == 0, clean.stderr
    total = results(tmp_path / "clean")["cache"]["misses"]

    out, cache = tmp_path / "run", tmp_path / "cache"
    # 0.5 s a prompt: Ctrl-C must land while prompts are left (at 0.05 s a loaded machine
    # sometimes let the run finish between the 4th sample and the signal)
    proc = subprocess.Popen(eval_args(out, cache), env=env(site, 0.5), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=interruptible)
    samples = out / "samples" / f"{TASK}.jsonl"
    wait_for(lambda: lines(samples) >= 4, proc, "4 samples")
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "Aborted" not in stderr
    (line,) = errors(stderr)
    written = lines(samples)
    assert line == (f"interrupted: 0 of 1 tasks done ({TASK}: {written} samples written); "
                    "rerun the same command to resume (finished model responses are cached)")
    assert not (out / "results.json").exists()

    again = run(site, eval_args(out, cache))  # the same folder and options: resumes
    assert again.returncode == 0, again.stderr
    stats = results(out)["cache"]
    assert stats["hits"] >= written and stats["hits"] + stats["misses"] == total
    assert comparable(results(out)) == comparable(results(tmp_path / "clean"))
    assert samples_bytes(out) == samples_bytes(tmp_path / "clean")


def _namespace_ok() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs tmpfs /mnt"],
                           capture_output=True)
    return probe.returncode == 0


needs_namespace = pytest.mark.skipif(not _namespace_ok(),
                                     reason="no private mount namespace (unshare -rm) here")


def in_namespace(site: Path, script: str, **values: str) -> None:
    """Run ``script`` (sh) in a private mount namespace; ``values`` become its variables."""
    r = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True,
                       env={**env(site, 0.0), **values}, timeout=600)
    assert r.returncode == 0, (r.stdout, r.stderr)


@needs_namespace
def test_full_disk_is_one_line_and_the_rerun_resumes(site: Path, tmp_path: Path) -> None:
    clean = run(site, eval_args(tmp_path / "clean", tmp_path / "fresh"))
    assert clean.returncode == 0, clean.stderr
    total = results(tmp_path / "clean")["cache"]["misses"]
    mnt, logs = tmp_path / "mnt", tmp_path / "logs"
    mnt.mkdir()
    logs.mkdir()
    args = " ".join(f"'{a}'" for a in eval_args(mnt / "run", tmp_path / "cache"))
    in_namespace(site, f"""
        mount -t tmpfs -o size=16k tmpfs "$MNT"
        {args} >"$LOGS/1.out" 2>"$LOGS/1.err"; echo $? >"$LOGS/1.rc"
        ls -R "$MNT" >"$LOGS/1.ls"
        mount -o remount,size=4m "$MNT"
        {args} >"$LOGS/2.out" 2>"$LOGS/2.err"; echo $? >"$LOGS/2.rc"
        cp -r "$MNT/run" "$LOGS/run"
    """, MNT=str(mnt), LOGS=str(logs))
    first_err = (logs / "1.err").read_text()
    assert (logs / "1.rc").read_text().strip() == "2", first_err
    assert "Traceback" not in first_err
    (line,) = errors(first_err)
    assert line == (f"error: {mnt}/run/samples/{TASK}.jsonl: cannot write: No space left on "
                    "device"), first_err
    assert "results.json" not in (logs / "1.ls").read_text()
    assert (logs / "2.rc").read_text().strip() == "0", (logs / "2.err").read_text()
    stats = results(logs / "run")["cache"]
    assert stats["hits"] > 0 and stats["hits"] + stats["misses"] == total  # nothing redone
    assert comparable(results(logs / "run"))["tasks"] == comparable(
        results(tmp_path / "clean"))["tasks"]
    assert samples_bytes(logs / "run") == samples_bytes(tmp_path / "clean")


@needs_namespace
def test_read_only_folder_is_one_line_before_the_model_loads(site: Path, tmp_path: Path) -> None:
    mnt, logs = tmp_path / "mnt", tmp_path / "logs"
    mnt.mkdir()
    logs.mkdir()
    # "nosuch:" names no backend: the folder's error comes first, so it is checked before
    args = " ".join(f"'{a}'" for a in eval_args(mnt / "run", tmp_path / "cache", "nosuch:x"))
    in_namespace(site, f"""
        mount -t tmpfs -o ro,size=16k tmpfs "$MNT"
        {args} >"$LOGS/1.out" 2>"$LOGS/1.err"; echo $? >"$LOGS/1.rc"
    """, MNT=str(mnt), LOGS=str(logs))
    err = (logs / "1.err").read_text()
    assert (logs / "1.rc").read_text().strip() == "2", err
    assert err.splitlines() == [
        f"error: --output-dir {mnt}/run: cannot write there: Read-only file system"]
