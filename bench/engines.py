"""Engines side by side: `hf:` fp32 against `llamacpp:` on the same work, alternated.

The workload of `vs_lmeval.py` (generation: ``lengthgen/addition``; 4-way multiple choice: the
arithmetic task written here), each 0-shot and 3-shot with exemplars drawn per item. For every
model spec given (default: ``hf:ALIAS`` and ``llamacpp:ALIAS``) one ``harness eval --no-cache``
per workload and run, the specs alternated within each run. Per run: wall seconds, the model
calls' process CPU seconds (``<task>.model_cpu_s`` of results.json) and the command's peak RSS;
per workload, agreement with the first spec (greedy texts identical, picks equal, largest
|Δ log-prob| of a choice, scores equal).

    .venv/bin/python bench/engines.py [--alias smollm2-135m] [--runs 5] [--limit 10]
        [--models hf:smollm2-135m,llamacpp:smollm2-135m] [--threads 1] [--name engines]

A spec ``SPEC+KEY=VALUE`` adds a model argument (``llamacpp:smollm2-135m+dtype=f32``);
``SPEC@DIR`` runs the harness of the source tree DIR (``python -m harness`` with
``PYTHONPATH=DIR``): an earlier commit's engine beside today's.

``--threads N``: ``OMP_NUM_THREADS`` for ``hf:`` and ``--model-args threads=N`` for
``llamacpp:`` (both engines on the same number of cores). Writes ``bench/results/NAME.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ENV, ROOT, VENV, WORK, machine, print_table, write_result  # noqa: E402
from llamacpp_agreement import compare  # noqa: E402
from vs_lmeval import CONFIGS, Config, write_mc_task  # noqa: E402

W = WORK / "engines"
WORKLOADS = ("gen-0shot", "gen-3shot", "mc-0shot", "mc-3shot")


def command(spec: str, cfg: Config, out: Path, limit: int, threads: int) -> list[str]:
    """``harness eval`` of one workload with one model spec (``SPEC@DIR``: the harness of the
    source tree DIR, e.g. a worktree of an earlier commit)."""
    spec, _, src = spec.partition("@")
    spec, *args = spec.split("+")
    if spec.startswith("llamacpp:"):
        args.append(f"threads={threads}")
    extra = ["--model-args", ",".join(args)] if args else []
    harness = ([str(VENV / "python"), "-m", "harness"] if src else [str(VENV / "harness")])
    return [*harness, "eval", "--model", spec, *extra, "--tasks", cfg.task,
            "--include-path", str(W / "tasks"), "--limit-per-bucket", str(limit),
            "--num-fewshot", str(cfg.k), "--fewshot-per-item", "--seed", "0", "--no-cache",
            "--output-dir", str(out), "--overwrite"]


def timed(cmd: list[str], threads: int, log: Path, src: str) -> dict[str, Any]:
    """Run *cmd* (with the harness of *src* when given): wall seconds, peak RSS (MB), the load
    average before and after."""
    env = {**ENV, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    if src:
        env["PYTHONPATH"] = src
    load0 = os.getloadavg()[0]
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as sink:
        t0 = time.perf_counter()
        # python -m puts the working folder first on sys.path: run an earlier tree from itself
        proc = subprocess.Popen(cmd, cwd=src or ROOT, env=env, stdout=sink,
                                stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{log.read_text()[-2000:]}")
    return {"wall_s": round(wall, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024),
            "load": [round(load0, 2), round(os.getloadavg()[0], 2)]}


def _label(spec: str) -> str:
    """A folder name for a spec."""
    return "".join(c if c.isalnum() or c in "-." else "_" for c in spec)


def _public(text: str) -> str:
    """*text* with every ``@DIR`` of a spec written as ``@<DIR's commit>`` (no local path in a
    results file)."""
    def commit(match: re.Match[str]) -> str:
        rev = subprocess.run(["git", "-C", match.group(1), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
        return f"@{rev or 'other-tree'}"

    return re.sub(r"@(/[^\s,\"]+)", commit, text)


def model_cpu(out: Path) -> float:
    """The model calls' process CPU seconds of a run."""
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return float(sum(res["timings"][f"{t['task']}.model_cpu_s"] for t in res["tasks"]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--alias", default="smollm2-135m")
    ap.add_argument("--models", default="", help="comma-separated specs (default: hf and "
                    "llamacpp of --alias); agreement is against the first")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--limit", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--name", default="engines")
    args = ap.parse_args()
    specs = args.models.split(",") if args.models else [f"hf:{args.alias}",
                                                        f"llamacpp:{args.alias}"]
    cfgs = [c for c in CONFIGS if c.name in args.workloads.split(",")]
    write_mc_task()
    (W / "tasks").mkdir(parents=True, exist_ok=True)
    mc_src = WORK / "vs_lmeval" / "tasks" / "benchmc"
    (W / "tasks" / "benchmc").mkdir(exist_ok=True)
    for f in mc_src.iterdir():
        (W / "tasks" / "benchmc" / f.name).write_bytes(f.read_bytes())
    times: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for run in range(args.runs):
        for cfg in cfgs:
            order = specs if run % 2 == 0 else specs[::-1]
            for spec in order:
                out = W / "out" / cfg.name / _label(spec)
                rec = timed(command(spec, cfg, out, args.limit, args.threads), args.threads,
                            out.with_suffix(".log"), spec.partition("@")[2])
                rec["model_cpu_s"] = round(model_cpu(out), 2)
                times.setdefault(cfg.name, {}).setdefault(spec, []).append(rec)
                print(f"run {run} {cfg.name} {spec}: {rec}", flush=True)
    rows, table = [], []
    for cfg in cfgs:
        ref = W / "out" / cfg.name / specs[0].replace(":", "_").replace("/", "_")
        base = statistics.median(r["model_cpu_s"] for r in times[cfg.name][specs[0]])
        for spec in specs:
            recs = times[cfg.name][spec]
            cpu = [r["model_cpu_s"] for r in recs]
            wall = [r["wall_s"] for r in recs]
            other = W / "out" / cfg.name / _label(spec)
            agree = compare(ref, other)
            row = {"workload": cfg.name, "model": spec, "model_cpu_s": cpu, "wall_s": wall,
                   "cpu_ratio_to_first": round(statistics.median(cpu) / base, 3),
                   "agreement": agree, "runs": recs}
            rows.append(row)
            same = (f"{agree['same_text']}/{agree['generate']} texts" if agree["generate"]
                    else f"{agree['same_pick']}/{agree['multiple_choice']} picks, "
                         f"max |Δ| {agree['max_abs_dlogprob']}")
            table.append([cfg.name, spec, f"{statistics.median(cpu):.2f} "
                          f"({min(cpu):.2f}-{max(cpu):.2f})", f"{statistics.median(wall):.1f}",
                          f"{row['cpu_ratio_to_first']:.2f}",
                          max(r["peak_rss_mb"] for r in recs), same])
    print_table(f"engines ({args.runs} runs, limit {args.limit}, {args.threads} thread(s))",
                ["workload", "model", "model CPU-s median (min-max)", "wall s", "CPU ratio",
                 "peak RSS MB", f"agreement with {specs[0]}"], table)
    data = {"machine": machine(), "runs": args.runs, "limit": args.limit,
            "threads": args.threads, "models": specs, "rows": rows,
            "cmd": "bench/engines.py " + " ".join(sys.argv[1:])}
    write_result(args.name, json.loads(_public(json.dumps(data))))


if __name__ == "__main__":
    main()
