"""Engine speed and agreement at the board's own size: `hf:` fp32 against `llamacpp:` F16.

The board runs SmolLM2 on `hf:` and Gemma on `llamacpp:` (scripts/build_leaderboard.sh). For one
of its groups (default: the limit-30 group, 4 tasks, 1,230 prompts per model) this runs the other
engine on the same tasks, limit and seed (one thread, `--no-cache`), then compares item by item
with the board's run: greedy text identical, multiple-choice pick the same, max |Δ log-prob|,
score the same; and the model calls' process CPU seconds of both (`<task>.model_cpu_s`, the
number the cost table holds).

    .venv/bin/python bench/engine_speed.py [--limit 30] [--runs runs/leaderboard] [--models A,B]

Writes ``bench/results/engine_speed.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ENV, ROOT, VENV, WORK, machine, print_table, write_result  # noqa: E402
from llamacpp_agreement import compare  # noqa: E402

# (alias, the board's engine and run folder name, the other engine's model spec)
PAIRS = (("smollm2-135m", "hf", "smollm2-135m", "llamacpp:smollm2-135m"),
         ("gemma3-270m", "llamacpp", "llamacpp-gemma3-270m", "hf:gemma3-270m"))


def model_cpu(run: Path) -> tuple[float, int, list[float]]:
    """Sum of the tasks' model-call CPU seconds, prompts, and the load averages around the run."""
    res = json.loads((run / "results.json").read_text(encoding="utf-8"))
    t = res["timings"]
    cpu = sum(t[f"{task['task']}.model_cpu_s"] for task in res["tasks"])
    prompts = sum(int(tpl["n"]) for task in res["tasks"] for tpl in task["templates"])
    return cpu, prompts, [t.get("loadavg_1m_start", -1.0), t.get("loadavg_1m_end", -1.0)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", default="30")
    ap.add_argument("--runs", type=Path, default=ROOT / "runs" / "leaderboard")
    ap.add_argument("--models", default="smollm2-135m,gemma3-270m", help="aliases to compare")
    args = ap.parse_args()
    ENV.setdefault("GENHARNESS_DATA", str(ROOT.parent / "shared" / "data"))
    ENV["OMP_NUM_THREADS"] = "1"
    rows: list[list[Any]] = []
    out: dict[str, Any] = {"machine": machine(), "limit": args.limit, "pairs": []}
    for alias, engine, folder, other in PAIRS:
        if alias not in args.models.split(","):
            continue
        board_run = args.runs / folder / f"limit-{args.limit}"
        res = json.loads((board_run / "results.json").read_text(encoding="utf-8"))
        tasks = ",".join(t["task"] for t in res["tasks"])
        mine = WORK / "engine_speed" / alias
        if not (mine / "results.json").is_file():
            extra = ["--model-args", "threads=1"] if other.startswith("llamacpp:") else []
            cmd = [str(VENV / "harness"), "eval", "--model", other, *extra, "--tasks", tasks,
                   "--limit-per-bucket", args.limit, "--seed", "0", "--no-cache",
                   "--output-dir", str(mine), "--overwrite"]
            subprocess.run(cmd, cwd=ROOT, env=ENV, check=True, stdout=subprocess.DEVNULL)
        hf_run, cpp_run = (board_run, mine) if engine == "hf" else (mine, board_run)
        (hf_cpu, n, hf_load), (cpp_cpu, _, cpp_load) = model_cpu(hf_run), model_cpu(cpp_run)
        cmp = compare(hf_run, cpp_run)
        out["pairs"].append({"model": alias, "tasks": tasks, "prompts": n,
                             "hf_cpu_s": round(hf_cpu, 1), "llamacpp_cpu_s": round(cpp_cpu, 1),
                             "hf_load": hf_load, "llamacpp_load": cpp_load, "agreement": cmp})
        rows.append([alias, n, round(hf_cpu), round(cpp_cpu), round(cpp_cpu / hf_cpu, 2),
                     f"{cmp['same_text']}/{cmp['generate']}",
                     f"{cmp['same_pick']}/{cmp['multiple_choice']}", cmp["max_abs_dlogprob"],
                     f"{cmp['same_score']}/{cmp['items']}"])
    print_table(f"hf fp32 vs llamacpp F16 at limit {args.limit} (model-call CPU-s, one thread; "
                f"load {os.getloadavg()[0]:.1f} now)",
                ["model", "prompts", "hf CPU-s", "llamacpp CPU-s", "ratio", "greedy same",
                 "MC same", "max |Δ logp|", "score same"], rows)
    write_result("engine_speed", out)


if __name__ == "__main__":
    main()
