"""How closely ``llamacpp:`` keeps ``hf:``'s answers, per weight type.

Runs ``harness eval`` on a sample of the board's tasks with ``hf:ALIAS`` (fp32, the reference),
``llamacpp:ALIAS`` (the shipped weights converted to F16) and ``llamacpp:ALIAS-<quant>`` (the
shipped 4-bit file as it is), one after the other with the same seed, and compares their samples
files item by item: greedy generation text identical (the model's raw output), multiple choice
the same pick, and the largest |Δ log-prob| of any choice (a sum over the choice's tokens, in
nats). Each run's CPU seconds (user + system of the process) come along.

    .venv/bin/python bench/llamacpp_agreement.py --alias smollm2-135m --quant q4_1
    .venv/bin/python bench/llamacpp_agreement.py --alias gemma3-270m --quant q4_k_m

The harness runs with ``--no-cache`` and one thread per engine (``OMP_NUM_THREADS=1``,
``--model-args threads=1``); writes ``bench/results/llamacpp_agreement_<alias>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ENV, ROOT, VENV, WORK, machine, print_table, write_result  # noqa: E402

TASKS = ("lengthgen/addition,lengthgen/copy,lengthgen/count,compgen/scan_simple,"
         "easy2hard/ladder_sign,easy2hard/math,instructdiv/word_before,"
         "instructdiv/more_letters,instructdiv/homophones,instructdiv/rhyming_word")


def run_eval(model: str, out: Path, tasks: str, limit: int, extra: list[str]) -> dict[str, Any]:
    """One ``harness eval``; its wall and CPU seconds and the load average around it."""
    cmd = [str(VENV / "harness"), "eval", "--model", model, "--tasks", tasks,
           "--limit-per-bucket", str(limit), "--seed", "0", "--no-cache", "--output-dir",
           str(out), "--overwrite", *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=ENV, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    shown = " ".join(c.replace(f"{ROOT}/", "") for c in cmd)  # no local path in the results
    return {"model": model, "cmd": shown, "wall_s": round(wall, 1),
            "cpu_s": round(cpu, 1), "load": [round(load0, 2), round(os.getloadavg()[0], 2)]}


def samples(run: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    """Every sample record of a run, by (task, item id, template)."""
    res = json.loads((run / "results.json").read_text())
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for t in res["tasks"]:
        for line in (run / t["samples_file"]).read_text().splitlines():
            r = json.loads(line)
            out[(r["task"], r["id"], r["template"])] = r
    return out


def compare(ref: Path, other: Path) -> dict[str, Any]:
    """Generation texts identical, multiple-choice picks equal, max |Δ choice log-prob|."""
    a, b = samples(ref), samples(other)
    if set(a) != set(b):
        raise RuntimeError(f"{ref} and {other} hold different items")
    gen = [k for k in a if a[k]["choice_logprobs"] is None]
    mc = [k for k in a if a[k]["choice_logprobs"] is not None]
    same_text = sum(a[k]["output"] == b[k]["output"] for k in gen)
    same_pick = 0
    delta = 0.0
    for k in mc:
        la, lb = a[k]["choice_logprobs"], b[k]["choice_logprobs"]
        same_pick += max(range(len(la)), key=la.__getitem__) == max(range(len(lb)),
                                                                     key=lb.__getitem__)
        delta = max(delta, *(abs(x - y) for x, y in zip(la, lb, strict=True)))
    same_score = sum(a[k]["score"] == b[k]["score"] for k in a)
    return {"generate": len(gen), "same_text": same_text, "multiple_choice": len(mc),
            "same_pick": same_pick, "max_abs_dlogprob": round(delta, 4),
            "items": len(a), "same_score": same_score}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--alias", default="smollm2-135m")
    ap.add_argument("--quant", default="q4_1", help="the shipped file's quantization suffix")
    ap.add_argument("--tasks", default=TASKS)
    ap.add_argument("--limit", type=int, default=2)
    args = ap.parse_args()
    if "GENHARNESS_DATA" not in ENV:
        ENV["GENHARNESS_DATA"] = str(ROOT.parent / "shared" / "data")
    work = WORK / "llamacpp_agreement" / args.alias
    models = [(f"hf:{args.alias}", []),
              (f"llamacpp:{args.alias}", ["--model-args", "threads=1"]),
              (f"llamacpp:{args.alias}-{args.quant}", ["--model-args", "threads=1"])]
    runs = []
    for i, (model, extra) in enumerate(models):
        runs.append(run_eval(model, work / str(i), args.tasks, args.limit, extra))
        print(runs[-1], flush=True)
    rows = []
    from importlib.metadata import version

    result: dict[str, Any] = {"machine": machine(), "llama-cpp-python": version(
                                  "llama-cpp-python"), "tasks": args.tasks, "limit": args.limit,
                              "runs": runs, "agreement": {}}
    for i, (model, _) in enumerate(models[1:], start=1):
        cmp = compare(work / "0", work / str(i))
        result["agreement"][model] = cmp
        rows.append([model, f"{cmp['same_text']}/{cmp['generate']}",
                     f"{cmp['same_pick']}/{cmp['multiple_choice']}", cmp["max_abs_dlogprob"],
                     f"{cmp['same_score']}/{cmp['items']}", runs[i]["cpu_s"]])
    print_table(f"agreement with hf:{args.alias} (reference CPU-s {runs[0]['cpu_s']})",
                ["engine", "greedy text identical", "MC pick same", "max |Δ log-prob| (nats)",
                 "score same", "CPU-s"], rows)
    write_result(f"llamacpp_agreement_{args.alias}", result)


if __name__ == "__main__":
    main()
