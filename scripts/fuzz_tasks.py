#!/usr/bin/env python
"""Fuzz the readers of untrusted files (issue 15): task files (mutations of every shipped task,
random bytes, random YAML), results.json, samples files and the response cache.

    .venv/bin/python scripts/fuzz_tasks.py --cases 10000 [--seed 0] [--json out.json]

Prints the counts (ok, error, bad_message, traceback, hang) and examples of every bad outcome;
exits 1 when there is any traceback, hang (over 5 s) or error line not naming its file.
Needs the dev extra (hypothesis).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the fuzzer lives in tests/


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=10_000, help="number of fuzzed cases")
    ap.add_argument("--seed", type=int, default=0, help="hypothesis seed")
    ap.add_argument("--json", help="also write the counts and examples to this file")
    args = ap.parse_args()
    from tests.fuzzing import HANG_SECONDS, Tally, run

    start = time.monotonic()

    def progress(n: int, tally: Tally) -> None:
        if n % 1000 == 0:
            print(f"{n} cases, {dict(tally.counts)}", file=sys.stderr, flush=True)

    tally = run(args.cases, seed=args.seed, progress=progress)
    seconds = time.monotonic() - start
    counts = {k: tally.counts.get(k, 0)
              for k in ("ok", "error", "bad_message", "traceback", "hang")}
    print(f"{sum(counts.values())} cases in {seconds:.0f} s (seed {args.seed}; hang = over "
          f"{HANG_SECONDS:g} s; slowest case {tally.slowest:.2f} s)")
    for k, v in counts.items():
        print(f"  {k:12s} {v}")
    for kind, examples in tally.examples.items():
        print(f"\n== {kind} (first {len(examples)})")
        for e in examples:
            print(e[:2000], "\n--")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"counts": counts, "seconds": round(seconds, 1), "seed": args.seed,
                       "slowest": tally.slowest, "examples": tally.examples}, f, indent=1)
    bad = counts["traceback"] + counts["hang"] + counts["bad_message"]
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
