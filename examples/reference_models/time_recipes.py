"""Training seconds per model on a free core: each family's recipe (``rebuild.sh``'s table)
trained for ``--steps`` steps at seed 0, one at a time, one thread; the seconds per step times
the recipe's steps estimate one model's training. Written to ``timing.json`` beside this file
with the load average before each run (the 1-minute average includes the timing runs
themselves; on this 2-core machine a load near 2 means one other single-thread job ran beside
them, each on a core of its own).

    .venv/bin/python examples/reference_models/time_recipes.py [--steps 300] [FAMILY ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def plan(families: list[str]) -> list[list[str]]:
    """``rebuild.sh``'s plan for seed 0: [seed, family, task, template, steps, options...]."""
    out = subprocess.run(["bash", str(HERE / "rebuild.sh"), *families], cwd=ROOT, check=True,
                         capture_output=True, text=True, env={**os.environ, "PLAN": "1",
                                                              "SEEDS": "0"}).stdout
    return [shlex.split(line) for line in out.splitlines() if line.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=300, help="steps timed per recipe")
    ap.add_argument("families", nargs="*", help="rebuild.sh families (default: all)")
    a = ap.parse_args()
    out = HERE / "timing.json"
    timing = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}
    for seed, fam, task, tpl, steps, *opts in plan(a.families):
        load = os.getloadavg()[0]
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            subprocess.run([sys.executable, str(HERE / "train.py"), "--task", task, "--template",
                            tpl, "--steps", str(a.steps), "--seed", seed, "--include-path",
                            str(HERE / "tasks"), *opts, "--out", tmp], cwd=ROOT, check=True,
                           capture_output=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
            wall = time.perf_counter() - t0
            trained = json.loads((Path(tmp) / "train.json").read_text(encoding="utf-8"))
        per_step = float(trained["seconds"]) / a.steps
        timing[fam] = {"steps_timed": a.steps, "seconds_per_step": round(per_step, 4),
                       "recipe_steps": int(steps), "model_seconds": round(per_step * int(steps)),
                       "load_average_before": round(load, 2), "cpus": os.cpu_count()}
        print(f"{fam}: {per_step:.3f} s/step, about {per_step * int(steps):.0f} s per model of "
              f"{steps} steps (load {load:.2f} before; {wall:.0f} s wall with start-up)",
              flush=True)
        out.write_text(json.dumps(timing, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
