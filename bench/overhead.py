"""Benchmark 2: the harness end to end vs a plain script doing the same model work.

For each workload of bench/vs_lmeval.py (generation and multiple choice, 0- and 3-shot), the
harness command (``harness eval ... --no-cache``) is timed against ``bench/_raw.py``: a script
that imports torch and transformers, loads the same model, tokenizes the very prompts the
harness rendered, and feeds them in the same batch size straight to ``model.generate`` (greedy,
``stop_strings``) or to one forward pass per batch of context+continuation rows. Both are whole
processes, alternated; the answers must agree. Overhead = harness / raw - 1 (negative: the
harness does the same work faster than the plain loop, e.g. by sharing context passes).

    .venv/bin/python bench/overhead.py [--runs 5] [--limit-per-bucket 10] [--batch-size 32]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    ROOT,
    VENV,
    WORK,
    machine,
    model_dir,
    print_table,
    run,
    summary,
    write_result,
)
from vs_lmeval import (  # noqa: E402
    CONFIGS,
    compare,
    harness_answers,
    harness_cmd,
    harness_samples,
    write_mc_task,
)

W = WORK / "overhead"


def requests_for(cfg: Any, rows: list[dict[str, Any]]) -> dict[str, Any]:
    if cfg.kind == "gen":
        return {"generate": [[r["prompt"], 24, ["\n"]] for r in rows]}
    return {"loglikelihood": [[r["prompt"], " " + c] for r in rows for c in r["choices"]]}


def raw_answers(cfg: Any, out: Path, rows: list[dict[str, Any]]) -> tuple[list[Any], float]:
    data = json.loads(out.read_text())
    answers = data["answers"]
    if cfg.kind == "mc":
        per: list[list[float]] = []
        pos = 0
        for r in rows:
            per.append([a[0] for a in answers[pos : pos + len(r["choices"])]])
            pos += len(r["choices"])
        answers = per
    return answers, float(data["model_s"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--limit-per-bucket", type=int, default=10)
    ap.add_argument("--batch-size", default="32")
    ap.add_argument("--configs", default=",".join(c.name for c in CONFIGS))
    ap.add_argument("--name", default="overhead", help="results file name")
    args = ap.parse_args()
    cfgs = [c for c in CONFIGS if c.name in args.configs.split(",")]
    mdir = model_dir()
    write_mc_task()
    sets, refs = {}, {}
    for cfg in cfgs:
        out = W / "h" / cfg.name / "ref"
        shutil.rmtree(out, ignore_errors=True)
        run(harness_cmd(cfg, out, args.limit_per_bucket, args.batch_size))
        refs[cfg.name] = harness_samples(out, cfg)
        sets[cfg.name] = requests_for(cfg, refs[cfg.name])
    req_file = W / "requests.json"
    req_file.write_text(json.dumps(sets))
    times: dict[str, dict[str, list[float]]] = {c.name: {"harness": [], "raw": [],
                                                          "harness_model": [], "raw_model": []}
                                                for c in cfgs}
    checks: dict[str, Any] = {}
    for r in range(args.runs + 1):  # run 0: the answer check and a warm-up, not timed
        for cfg in cfgs:
            for tool in (["harness", "raw"] if r % 2 == 0 else ["raw", "harness"]):
                out = W / tool / cfg.name / f"run{r}"
                shutil.rmtree(out, ignore_errors=True)
                if tool == "harness":
                    secs = run(harness_cmd(cfg, out, args.limit_per_bucket, args.batch_size))
                    model_s = sum(v for k, v in json.loads((out / "results.json").read_text())
                                  ["timings"].items() if k.endswith(".model_s"))
                    answers = harness_answers(harness_samples(out, cfg), cfg.kind)
                else:
                    out.mkdir(parents=True, exist_ok=True)
                    secs = run([VENV / "python", ROOT / "bench" / "_raw.py", mdir,
                                args.batch_size, req_file, cfg.name, out / "raw.json"])
                    answers, model_s = raw_answers(cfg, out / "raw.json", refs[cfg.name])
                check = compare(cfg.kind, answers, harness_answers(refs[cfg.name], cfg.kind))
                if not check["ok"]:
                    raise SystemExit(f"{cfg.name} {tool} run {r}: different answers: {check}")
                checks.setdefault(cfg.name, {})[tool] = check
                if r:
                    times[cfg.name][tool].append(secs)
                    times[cfg.name][f"{tool}_model"].append(model_s)
                    print(f"  run {r} {cfg.name:10s} {tool:8s} {secs:6.2f} s "
                          f"(model {model_s:.2f} s)", flush=True)
    table = []
    for name, t in times.items():
        over = [h / w - 1 for h, w in zip(t["harness"], t["raw"], strict=True)]
        over_m = [h / w - 1 for h, w in zip(t["harness_model"], t["raw_model"], strict=True)]
        table.append({"config": name, "harness_s": summary(t["harness"]),
                      "raw_s": summary(t["raw"]), "overhead": summary(over),
                      "harness_model_s": summary(t["harness_model"]),
                      "raw_model_s": summary(t["raw_model"]), "model_overhead": summary(over_m)})
    print_table("harness vs plain script, end to end (process start to exit) and model phase",
                ["config", "harness s", "raw s", "overhead e2e", "harness model s",
                 "raw model s", "overhead model phase"],
                [[t["config"], t["harness_s"]["median"], t["raw_s"]["median"],
                  _pct(t["overhead"]), t["harness_model_s"]["median"], t["raw_model_s"]["median"],
                  _pct(t["model_overhead"])] for t in table])
    result = {"benchmark": "overhead", "machine": machine(), "runs": args.runs,
              "limit_per_bucket": args.limit_per_bucket, "batch_size": args.batch_size,
              "checks": checks, "table": table, "raw": times, "command": " ".join(sys.argv)}
    print(f"\nwrote {write_result(args.name, result)}")


def _pct(s: dict[str, float]) -> str:
    return f"{100 * s['median']:+.0f}% [{100 * s['min']:+.0f}..{100 * s['max']:+.0f}]"


if __name__ == "__main__":
    main()
