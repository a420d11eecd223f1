"""Peak memory of ``harness data export`` at 10k, 100k and 1M rows (flat = the export streams).

Each size runs in a fresh process (``harness data export`` itself); the peak resident set comes
from ``getrusage(RUSAGE_CHILDREN)`` of a wrapper process per size. Writes
``bench/results/export_memory.json`` and prints a table. Not a test: nothing asserts a number.

    .venv/bin/python bench/export_memory.py [--sizes 10000 100000 1000000] [--task T]
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_CHILD = (
    "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, "
    "stdout=subprocess.DEVNULL); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def measure(task: str, n: int, out: Path) -> tuple[float, float, int]:
    """(seconds, peak RSS in MiB, file bytes) of one export of ``n`` rows."""
    harness = str(Path(sys.executable).with_name("harness"))
    cmd = [sys.executable, "-c", _CHILD, harness, "data", "export", task, "--n", str(n),
           "--seed", "0", "--out", str(out)]
    t0 = time.perf_counter()
    res = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT)
    secs = time.perf_counter() - t0
    return secs, int(res.stdout.split()[-1]) / 1024, out.stat().st_size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--task", default="lengthgen/addition_reversed")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            secs, mib, size = measure(args.task, n, Path(tmp) / "train.jsonl")
            rows.append({"rows": n, "seconds": round(secs, 1), "peak_rss_mib": round(mib, 1),
                         "file_mib": round(size / 2**20, 1)})
            print(f"{n:>9} rows  {secs:8.1f} s  peak RSS {mib:7.1f} MiB  file "
                  f"{size / 2**20:7.1f} MiB", flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=ROOT).stdout.strip()
    out = ROOT / "bench" / "results" / "export_memory.json"
    out.write_text(json.dumps({"command": " ".join(sys.argv), "task": args.task,
                               "commit": commit, "cpu": platform.processor() or platform.machine(),
                               "python": platform.python_version(), "rows": rows}, indent=1)
                   + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
