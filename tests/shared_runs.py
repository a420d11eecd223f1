"""A command's run made once per test session and read by every test that asks for it, also
when pytest-xdist spreads the tests over several worker processes: the first to ask runs it
(holding a file lock), the others wait for it and read its output folder and its recorded exit
status, stdout and stderr.

    out, proc = shared_run(tmp_path_factory, "vllm-eval",
                           lambda out: [..., "--output-dir", str(out)], timeout=900)

Tests must only read the folder (it is shared)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


def session_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary folder of the whole session: under xdist, the one that holds each worker's
    own (``.../pytest-N/popen-gw0``), else the session's own."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def shared_run(tmp_path_factory: pytest.TempPathFactory, name: str,
               command: Callable[[Path], list[str]], **run_args: Any
               ) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """Run ``command(out)`` once per session (``subprocess.run(..., capture_output=True,
    text=True, **run_args)``); return ``out`` and the finished process (its exit status, stdout
    and stderr as recorded). A run that raised (a time-out) is not recorded: the next caller
    runs it again."""
    root = session_root(tmp_path_factory) / "shared-runs"
    root.mkdir(exist_ok=True)
    out, record = root / name, root / f"{name}.json"
    with (root / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not record.is_file():
            shutil.rmtree(out, ignore_errors=True)
            cmd = command(out)
            proc = subprocess.run(cmd, capture_output=True, text=True, **run_args)
            record.write_text(json.dumps({"args": cmd, "returncode": proc.returncode,
                                          "stdout": proc.stdout, "stderr": proc.stderr}))
        done = json.loads(record.read_text())
    return out, subprocess.CompletedProcess(done["args"], done["returncode"], done["stdout"],
                                            done["stderr"])
