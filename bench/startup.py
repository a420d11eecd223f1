"""Benchmark 3: start-up with many tasks installed.

1,000 synthetic task files (each includes a shared base, like the built-in suites) go into an
``--include-path`` folder. Measured, alternated, process start to exit:

- ``harness tasks list`` (built-ins only, and with the 1,000 tasks), with the task-summary cache
  warm and cold (a fresh ``GENHARNESS_CACHE_DIR`` per run), and the same command of the baseline
  tree (``runs/bench/baseline_src``: ``git archive`` of the commit before this work, which parsed
  and validated every file and drew a rich table);
- ``harness eval --tasks synth/t0000`` with the 1,000 tasks installed: seconds from process start
  to (a) the CLI running, (b) the model load starting, (c) the model loaded, (d) the first model
  call; and whether torch/transformers were imported before the model was needed.

    .venv/bin/python bench/startup.py [--runs 5] [--tasks 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    ENV,
    ROOT,
    VENV,
    WORK,
    machine,
    print_table,
    run,
    summary,
    write_result,
)

W = WORK / "startup"
BASELINE = WORK / "baseline_src"
BASELINE_COMMIT = "ce9c82d"  # the last commit before the start-up work (task summaries)

BASE = """\
suites: [synth]
description: A synthetic task for the start-up benchmark.
source: {type: generator, name: copy, per_bucket: 10}
fields: {target: target, difficulty: length}
difficulty_name: length
buckets: {values: [2, 5, 8, 12]}
roles: {id_max: 5}
fewshot: {k: 2}
output: {type: generate, max_tokens: 8, stop: ["\\n"]}
scoring: {extract: {kind: first_line}, metric: exact_match}
"""

# Runs `harness eval` in-process, stamping wall-clock times at the phases that matter.
PROBE = r"""
import json, sys, time
t_spawn = float(sys.argv[1]); out = sys.argv[2]; argv = sys.argv[3:]
marks = {"python_started": time.time() - t_spawn}
import harness.cli.main as cli
import harness.models.backends as reg
marks["cli_imported"] = time.time() - t_spawn
heavy = lambda: sorted({m.split('.')[0] for m in sys.modules}
                      & {"torch", "transformers", "datasets", "pyarrow"})
real = reg.load_model
def load_model(*a, **k):
    marks["model_load_start"] = time.time() - t_spawn
    marks["heavy_before_load"] = heavy()
    lm = real(*a, **k)
    marks["model_loaded"] = time.time() - t_spawn
    cls = type(lm)
    def first(self, *a, **k):
        marks["first_model_call"] = time.time() - t_spawn
        json.dump(marks, open(out, "w"))
        import os; os._exit(0)
    cls.generate = cls.loglikelihood = first
    return lm
reg.load_model = load_model
sys.argv = ["harness", *argv]
cli.main()
"""


def make_tasks(n: int) -> Path:
    root = W / f"tasks{n}"
    folder = root / "synth"
    if (folder / f"t{n - 1:04d}.yaml").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "_base.yaml").write_text(BASE)
    for i in range(n):
        (folder / f"t{i:04d}.yaml").write_text(
            f"include: _base.yaml\nname: t{i:04d}\n"
            f"templates:\n  - {{id: io, prompt: \"Copy ({i}): {{{{ text }}}}\\nOutput:\"}}\n")
    return root


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--tasks", type=int, default=1000)
    args = ap.parse_args()
    tasks = make_tasks(args.tasks)
    if not (BASELINE / "harness").is_dir():  # a read-only export of the baseline tree
        BASELINE.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", BASELINE_COMMIT, "harness", "tasks"],
                                 cwd=ROOT, capture_output=True, check=False)
        if archive.returncode == 0:
            subprocess.run(["tar", "-x", "-C", str(BASELINE)], input=archive.stdout, check=True)
            (BASELINE / "COMMIT").write_text(BASELINE_COMMIT + "\n")
    warm_cache = W / "cache-warm"
    env_warm = {**ENV, "GENHARNESS_CACHE_DIR": str(warm_cache)}
    harness = [str(VENV / "harness")]
    base_env = {**ENV, "PYTHONPATH": str(BASELINE)}
    have_baseline = (BASELINE / "harness").is_dir()
    inc = ["--include-path", str(tasks)]
    cases: dict[str, tuple[list[str], Any]] = {
        "list builtin (warm)": ([*harness, "tasks", "list"], lambda: env_warm),
        f"list +{args.tasks} (warm)": ([*harness, "tasks", "list", *inc], lambda: env_warm),
        f"list +{args.tasks} (cold)": ([*harness, "tasks", "list", *inc], _cold_env),
    }
    if have_baseline:
        cases["baseline: list builtin"] = ([*harness, "tasks", "list"], lambda: base_env)
        cases[f"baseline: list +{args.tasks}"] = ([*harness, "tasks", "list", *inc],
                                                   lambda: base_env)
    for cmd, env in cases.values():  # warm the summary cache and the OS file cache
        run(cmd, env=env(), cwd=Path(tempfile.gettempdir()))
    times: dict[str, list[float]] = {k: [] for k in cases}
    for r in range(args.runs):
        names = list(cases) if r % 2 == 0 else list(reversed(cases))
        for name in names:
            cmd, env = cases[name]
            times[name].append(run(cmd, env=env(), cwd=Path(tempfile.gettempdir())))
            print(f"  run {r} {name:28s} {times[name][-1]:6.2f} s", flush=True)
    evals = [probe_eval(tasks, env_warm) for _ in range(args.runs)]
    keys = ["python_started", "cli_imported", "model_load_start", "model_loaded",
            "first_model_call"]
    ev = {k: summary([e[k] for e in evals]) for k in keys}
    heavy = sorted({m for e in evals for m in e["heavy_before_load"]})
    table = {k: summary(v) for k, v in times.items()}
    print_table(f"start-up, {args.runs} alternated runs (s: median [min-max])",
                ["command", "median s", "min", "max"],
                [[k, v["median"], v["min"], v["max"]] for k, v in table.items()])
    print_table(f"harness eval with {args.tasks} tasks installed: seconds from process start",
                ["phase", "median s", "min", "max"],
                [[k, v["median"], v["min"], v["max"]] for k, v in ev.items()])
    print(f"torch/transformers imported before the model was needed: {heavy or 'no'}")
    result = {"benchmark": "startup", "machine": machine(), "runs": args.runs,
              "tasks": args.tasks, "list": table, "raw": times, "eval_phases": ev,
              "eval_raw": evals, "heavy_imported_before_model": heavy,
              "baseline_commit": (BASELINE / "COMMIT").read_text().strip()
              if have_baseline else None, "command": " ".join(sys.argv)}
    shutil.rmtree(W / "cold", ignore_errors=True)
    print(f"\nwrote {write_result('startup', result)}")


def _cold_env() -> dict[str, str]:
    (W / "cold").mkdir(parents=True, exist_ok=True)
    return {**ENV, "GENHARNESS_CACHE_DIR": tempfile.mkdtemp(prefix="cache-", dir=W / "cold")}


def probe_eval(tasks: Path, env: dict[str, str]) -> dict[str, Any]:
    out = W / "probe.json"
    out.unlink(missing_ok=True)
    argv = ["eval", "--model", "hf:smollm2-135m", "--tasks", "synth/t0000", "--include-path",
            str(tasks), "--limit-per-bucket", "1", "--no-cache", "--output-dir",
            str(W / "eval-out")]
    # the model cache (GENHARNESS_CACHE_DIR) must hold the converted model: use the user's
    env = {k: v for k, v in env.items() if k != "GENHARNESS_CACHE_DIR"}
    subprocess.run([str(VENV / "python"), "-c", PROBE, repr(time.time()), str(out), *argv],
                   env=env, cwd=ROOT, check=True, capture_output=True, text=True)
    marks: dict[str, Any] = json.loads(out.read_text())
    return marks


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
