"""Shared helpers of the benchmarks: paths, machine facts, subprocess timing, statistics, output.

Every benchmark prints a table and writes ``bench/results/<name>.json``. Absolute times on a
shared 2-core machine move with its load; the claims are ratios between alternated runs.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.files import write_blocks

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
RESULTS = BENCH / "results"
WORK = ROOT / "runs" / "bench"  # scratch (gitignored): generated tasks, outputs, logs
VENV = ROOT / ".venv" / "bin"
LMEVAL = ROOT / ".venv-lmeval" / "bin"
VLLM = ROOT / ".venv-vllm" / "bin"
ALIAS = "smollm2-135m"

# the same environment for every process we time: offline, no progress bars, no telemetry
ENV = {
    **os.environ,
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "TQDM_DISABLE": "1",
    "PYTHONHASHSEED": "0",
    # One intra-op thread for every tool: on this shared, oversubscribed 2-core machine two
    # OpenMP threads spin-wait on each other (a 22x576x1536 matmul took 7 ms with 2 threads
    # vs 0.4 ms with 1 under a load average of 5). Override with BENCH_THREADS.
    "OMP_NUM_THREADS": os.environ.get("BENCH_THREADS", "1"),
    "MKL_NUM_THREADS": os.environ.get("BENCH_THREADS", "1"),
}


def model_dir() -> str:
    """The local fp32 HF folder of the harness's built-in alias (built on first use)."""
    from harness.models.aliases import resolve_alias

    src = resolve_alias(ALIAS)
    assert src is not None and src.gguf_file is None, src
    return src.load_path


def run(cmd: Sequence[str | Path], *, env: dict[str, str] | None = None, log: Path | None = None,
        cwd: Path = ROOT, timeout: float = 3600) -> float:
    """Run ``cmd``; return its wall time in seconds. A failure raises with the output's tail."""
    t0 = time.perf_counter()
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env or ENV, capture_output=True,
                          text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(f"$ {' '.join(map(str, cmd))}\n--- stdout\n{proc.stdout}\n"
                       f"--- stderr\n{proc.stderr}\n")
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
        raise RuntimeError(f"command failed ({proc.returncode}): {' '.join(map(str, cmd))}\n{tail}")
    return wall


def summary(values: Sequence[float]) -> dict[str, float]:
    """Median, min, max (and n) of a list of measurements."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def _pkg_version(python: Path, dist: str) -> str | None:
    code = ("import importlib.metadata as m, sys\n"
            "try: print(m.version(sys.argv[1]))\nexcept Exception: print('')")
    if not python.exists():
        return None
    out = subprocess.run([str(python), "-c", code, dist], capture_output=True, text=True)
    return out.stdout.strip() or None


def machine() -> dict[str, Any]:
    """The machine and the versions the numbers were measured with."""
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        mem_kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{mem_kb / 2**20:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    py = VENV / "python"
    info: dict[str, Any] = {
        "cpu": cpu, "cores": os.cpu_count(), "memory": mem, "platform": platform.platform(),
        "python": sys.version.split()[0], "git_commit": commit,
        "loadavg_at_start": os.getloadavg(),
        "harness": {d: _pkg_version(py, d) for d in ("genharness", "torch", "transformers",
                                                      "tokenizers")},
    }
    if (LMEVAL / "python").exists():
        info["lmeval_venv"] = {d: _pkg_version(LMEVAL / "python", d)
                               for d in ("lm_eval", "torch", "transformers", "tokenizers")}
    return info


def write_result(name: str, data: dict[str, Any]) -> Path:
    """Write ``bench/results/<name>.json`` (atomically)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n")
    os.replace(tmp, path)
    return path


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A plain aligned table on stdout."""
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    print(f"\n{title}")
    for k, r in enumerate(cells):
        print("  ".join(c.rjust(w) if k and i else c.ljust(w) for i, (c, w)
                        in enumerate(zip(r, widths, strict=True))))
        if k == 0:
            print("  ".join("-" * w for w in widths))


def _fmt(x: object) -> str:
    if isinstance(x, float):
        return f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"
    return str(x)


def fmt_range(s: dict[str, float], unit: str = "", digits: int = 2) -> str:
    """``median [min–max]``."""
    return f"{s['median']:.{digits}f}{unit} [{s['min']:.{digits}f}–{s['max']:.{digits}f}]"


def write_doc(path: Path, blocks: dict[str, str]) -> None:
    """Replace each ``<!-- NAME:start -->`` … ``<!-- NAME:end -->`` block of ``path``
    (``harness.files.write_blocks``); a missing block ends the script with its one line."""
    try:
        write_blocks(path, blocks)
    except HarnessError as e:
        raise SystemExit(str(e)) from None
