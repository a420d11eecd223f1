"""CI's times: each step of ``.ci/run`` and the slowest tests, from what ``.ci/run`` wrote.

``.ci/run`` keeps, in ``$CI_TIMES_DIR`` (a fresh temporary folder unless set):

- ``steps.tsv``: one line per command it starts (bash's DEBUG trap) and one ``.ci/run exit N``
  line at the end, each with the wall time (``$EPOCHREALTIME``) and the 1-, 5- and 15-minute
  load averages at that moment;
- ``pytest-<pid>.json``: each pytest session's tests with their seconds (``tests/timings.py``).

and runs this script on exit, which prints each step's time, the load at its start and end, the
total, and the 20 slowest tests. ``--record FILE`` also writes the figures as JSON, durations and
load averages only (no clock time, no path), e.g. ``bench/results/ci_times.json`` after a
fresh-clone run, which the README's CI figure quotes (tests/unit/test_ci_times.py checks it).

    python3 scripts/ci_times.py DIR [--slowest 20] [--record FILE] [--note TEXT]

Standard library only: it runs with whatever ``python3`` CI has, before or without ``.venv``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

# commands of .ci/run that are bookkeeping, not steps
NOT_STEPS = ("trap ", "cd ", "set ", "export ")
EXIT = ".ci/run exit "  # the last line of steps.tsv, written by .ci/run's EXIT trap


def read_steps(path: Path) -> tuple[list[dict[str, Any]], int | None]:
    """The steps in ``steps.tsv`` with their seconds and load averages, and the exit status
    (None when the run has not ended)."""
    rows: list[tuple[float, list[float], str]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        t, l1, l5, l15, command = line.split("\t", 4)
        if rows and rows[-1][2] == command:
            continue  # the trap again for the same command (bash runs it in the EXIT trap too)
        rows.append((float(t), [float(l1), float(l5), float(l15)], command))
    steps: list[dict[str, Any]] = []
    status = None
    for (t, load, command), nxt in zip(rows, [*rows[1:], None], strict=True):
        if command.startswith(EXIT):
            status = int(command[len(EXIT):])
            break
        if command.startswith(NOT_STEPS) or nxt is None:
            continue
        steps.append({"step": command, "seconds": round(nxt[0] - t, 1), "load_start": load,
                      "load_end": nxt[1]})
    return steps, status


def read_tests(folder: Path) -> list[dict[str, Any]]:
    """Every test of every pytest session in ``folder``, with its session's ``-m``."""
    out = []
    for path in sorted(folder.glob("pytest-*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for nodeid, t in data["tests"].items():
            out.append({"test": nodeid, "group": data["markexpr"] or "all",
                        "seconds": t["seconds"], "outcome": t["outcome"]})
    return out


def summary(folder: Path, slowest: int = 20) -> dict[str, Any]:
    """Steps, total, status and the slowest tests of the run recorded in ``folder``."""
    steps, status = read_steps(folder / "steps.tsv")
    tests = read_tests(folder)
    loads = [s["load_start"] for s in steps] + [s["load_end"] for s in steps]
    return {
        "steps": steps,
        "total_seconds": round(sum(s["seconds"] for s in steps), 1),
        "exit_status": status,
        "load_1min_max": max((x[0] for x in loads), default=None),
        "load_at_end": steps[-1]["load_end"] if steps else None,
        "tests": len(tests),
        "outcomes": {o: sum(t["outcome"] == o for t in tests)
                     for o in ("passed", "failed", "skipped") if any(t["outcome"] == o
                                                                    for t in tests)},
        "slowest": sorted(tests, key=lambda t: -t["seconds"])[:slowest],
    }


def minutes(seconds: float) -> str:
    """``m:ss``."""
    m, s = divmod(round(seconds), 60)
    return f"{m}:{s:02d}"


def render(s: dict[str, Any]) -> str:
    """The summary as the text CI prints."""
    def load(x: list[float]) -> str:
        return "/".join(f"{v:.2f}" for v in x)

    lines = ["CI times (scripts/ci_times.py): step, seconds (m:ss), load average 1/5/15 min "
             "at start → end"]
    width = max((len(st["step"]) for st in s["steps"]), default=4)
    for st in s["steps"]:
        sec = st["seconds"]
        lines.append(f"  {st['step']:<{width}}  {sec:7.1f} s {minutes(sec):>6}  "
                     f"{load(st['load_start'])} → {load(st['load_end'])}")
    status = "running" if s["exit_status"] is None else f"exit {s['exit_status']}"
    total = s["total_seconds"]
    lines.append(f"  {'total':<{width}}  {total:7.1f} s {minutes(total):>6}  ({status})")
    if s["slowest"]:
        lines.append(f"the {len(s['slowest'])} slowest of {s['tests']} tests (seconds, setup "
                     "and teardown included; group = pytest -m):")
        for t in s["slowest"]:
            mark = "" if t["outcome"] == "passed" else f"  [{t['outcome']}]"
            lines.append(f"  {t['seconds']:8.1f}  {t['group']:<9}  {t['test']}{mark}")
    if s["tests"]:  # last, alone on a line: the test count of every group together
        counts = {"passed": 0, "failed": 0, **s["outcomes"]}
        lines.append("all groups: " + ", ".join(f"{n} {o}" for o, n in counts.items()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path, help="$CI_TIMES_DIR of a .ci/run")
    ap.add_argument("--slowest", type=int, default=20, help="how many tests to list (20)")
    ap.add_argument("--record", type=Path, help="also write the summary as JSON to this file")
    ap.add_argument("--note", default="", help="what the recorded run was (e.g. fresh clone)")
    args = ap.parse_args(argv)
    if not (args.folder / "steps.tsv").is_file():
        print(f"ci_times: no steps.tsv in {args.folder}", file=sys.stderr)
        return 1
    s = summary(args.folder, args.slowest)
    print(render(s))
    if args.record:
        s = {"note": args.note, **s}
        args.record.write_text(json.dumps(s, indent=1, ensure_ascii=False) + "\n",
                               encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
