"""Benchmark 5: a newcomer's first result.

Runs the README's first command as written, minus its set-up part (``bash scripts/setup.sh &&``),
and times, from process start: the line that announces the number of prompts, the first task's
table (printed as soon as that task is done), the first estimate of the time left, and the end of
the process (every table printed). ``--first-table-only`` stops the command once the first table
is out. Each
run gets a fresh output folder and a fresh, empty response cache, so nothing is answered from
disk; the model cache (the converted SmolLM2 folder that set-up builds) is used as set-up left
it. The machine's load average is recorded before and after every run: on a shared machine the
absolute times move with it.

    .venv/bin/python bench/first_result.py [--runs 1] [--extra-args "--limit-per-bucket 20"]
        [--first-table-only]
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, WORK, machine, print_table, summary, write_result  # noqa: E402

W = WORK / "first_result"
SETUP = "bash scripts/setup.sh && "


def readme_command() -> list[str]:
    """The README's first fenced command, without its set-up part."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```\n(.*?)\n```", text, re.S)
    if block is None or not block.group(1).startswith(SETUP):
        raise SystemExit("README.md: the first code block is not 'bash scripts/setup.sh && ...'")
    return shlex.split(block.group(1)[len(SETUP):])


def with_output_dir(cmd: list[str], folder: Path) -> list[str]:
    """``cmd`` writing to ``folder`` instead of the README's output folder."""
    out = list(cmd)
    if "--output-dir" in out:
        out[out.index("--output-dir") + 1] = str(folder)
    else:
        out += ["--output-dir", str(folder)]
    return out


def timed_run(cmd: list[str], env: dict[str, str], first_only: bool = False) -> dict[str, Any]:
    """Run ``cmd``; seconds from start to the prompt count, the first table, the first
    estimate, and the end (``first_only``: stop it after the first table)."""
    marks: dict[str, Any] = {"loadavg_before": os.getloadavg()}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None and proc.stdout is not None
    out_lines: list[str] = []

    def read_stdout() -> None:  # tables come on stdout while progress comes on stderr
        assert proc.stdout is not None
        for line in proc.stdout:
            out_lines.append(line)
            if "first_table_s" not in marks and "[template" in line:
                marks["first_table_s"] = round(time.perf_counter() - t0, 2)
                marks["loadavg_first_table"] = os.getloadavg()
                if first_only:
                    proc.terminate()

    reader = threading.Thread(target=read_stdout)
    reader.start()
    err_lines = []
    for line in proc.stderr:
        now = time.perf_counter() - t0
        err_lines.append(line.rstrip("\n"))
        if "prompts_announced_s" not in marks and re.search(r"\d prompts? in \d+ tasks?", line):
            marks["prompts_announced_s"] = round(now, 2)
            marks["prompts_line"] = line.strip()
        if "first_estimate_s" not in marks and "left" in line and "estimated" in line:
            marks["first_estimate_s"] = round(now, 2)
            marks["first_estimate_line"] = line.strip()
    rc = proc.wait()
    reader.join()
    stdout = "".join(out_lines)
    marks["loadavg_after"] = os.getloadavg()
    if first_only and "first_table_s" in marks:
        return marks
    marks["table_s"] = round(time.perf_counter() - t0, 2)
    if rc != 0:
        tail = "\n".join((stdout + "\n".join(err_lines)).strip().splitlines()[-20:])
        raise RuntimeError(f"command failed ({rc}): {shlex.join(cmd)}\n{tail}")
    marks["tables"] = stdout.count("\n")
    return marks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--extra-args", default="",
                    help="appended to the README's command (e.g. the full-precision flag)")
    ap.add_argument("--name", default="first_result", help="bench/results/<name>.json")
    ap.add_argument("--first-table-only", action="store_true",
                    help="stop each run once its first table is printed")
    args = ap.parse_args()
    cmd = readme_command() + shlex.split(args.extra_args)
    exe = ROOT / cmd[0] if not Path(cmd[0]).is_absolute() else Path(cmd[0])
    if not exe.exists():
        raise SystemExit(f"{exe} does not exist: run bash scripts/setup.sh first")
    runs = []
    for r in range(args.runs):
        folder = W / f"run{r}"
        shutil.rmtree(folder, ignore_errors=True)
        env = {**os.environ, "GENHARNESS_RESPONSE_CACHE": str(folder / "responses")}
        marks = timed_run(with_output_dir(cmd, folder / "out"), env, args.first_table_only)
        runs.append(marks)
        print(f"  run {r}: first table after {marks.get('first_table_s', float('nan')):.1f} s, "
              f"all after {marks.get('table_s', float('nan')):.1f} s "
              f"(load average {marks['loadavg_before'][0]:.2f} -> "
              f"{marks['loadavg_after'][0]:.2f})", flush=True)
    done = [m["table_s"] for m in runs if "table_s" in m]
    tables = summary(done) if done else None
    rows = [[name, *(summary([m[key] for m in runs if key in m]).values())]
            for name, key in (("prompt count printed", "prompts_announced_s"),
                              ("first table printed", "first_table_s"),
                              ("first estimate printed", "first_estimate_s"),
                              ("whole table printed", "table_s"))
            if any(key in m for m in runs)]
    print_table(f"first result: {shlex.join(cmd)}", ["seconds from start", "median", "min", "max",
                                                      "n"], rows)
    path = write_result(args.name, {"machine": machine(), "command": cmd, "runs": runs,
                                    "table_s": tables})
    print(f"\nwrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
