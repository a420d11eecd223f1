"""Benchmark 1: genharness vs lm-evaluation-harness 0.4.13 on the same work.

The same items and the exact same prompt strings (the harness renders them, few-shot exemplars
included; lm-eval reads them from local jsonl files through ``dataset_path: json`` tasks and runs
them zero-shot), the same model (SmolLM2-135M-Instruct as a local fp32 HF folder, the one
``hf:smollm2-135m`` resolves to), the same backend (HF transformers on CPU, same torch and
transformers versions), the same batch size. Six workloads: a generation task
(``lengthgen/addition``) and a multiple-choice task (4-way arithmetic, generated here), each
zero-shot, 3-shot with exemplars drawn per item, and 3-shot with one exemplar set shared by
every item (``--fewshot-shared``, as in MMLU's or BBH's fixed exemplars).

Before any timing, both tools must give the same greedy answers and the same per-choice
log-likelihoods (to 1e-4); the timed runs are checked again. Two comparisons, alternated:

- ``e2e``: the whole command (``harness eval`` vs ``lm-eval run``), process start to exit;
- ``backend``: one long-lived process per tool (model loaded once) runs the same request list
  (``HFModel.generate/loglikelihood`` vs ``HFLM.generate_until/loglikelihood``).

    .venv/bin/python bench/vs_lmeval.py [--runs 5] [--limit-per-bucket 10] [--batch-size 32]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    ENV,
    LMEVAL,
    ROOT,
    VENV,
    WORK,
    fmt_range,
    machine,
    model_dir,
    print_table,
    run,
    summary,
    write_result,
)

TOL = 1e-4
W = WORK / "vs_lmeval"
CACHE = "<cache>"  # how a results file names the harness's cache root (never this machine's)
MC_TEMPLATE = "Question: What is {{ a }} plus {{ b }}?\nAnswer:"


def public_model_dir(mdir: str) -> str:
    """The model folder as a results file records it, without this machine's layout:
    ``<cache>/models/<alias>-<sha256[:16]>`` under the harness's cache root (the folder name
    holds the alias and its GGUF's hash), else as results.json writes a path (``./``, ``~/``)."""
    from harness.cache_paths import cache_root
    from harness.run.public import public_path

    p = Path(mdir)
    for root in (cache_root(), cache_root().resolve()):
        if p.is_relative_to(root):
            return f"{CACHE}/{p.relative_to(root).as_posix()}"
    return public_path(mdir)


@dataclass(frozen=True)
class Config:
    name: str  # e.g. "gen-3shot"
    kind: str  # "gen" or "mc"
    task: str  # harness task address
    k: int  # few-shot exemplars
    shared: bool = False  # the same exemplars for every item (--fewshot-shared), else per item

    @property
    def lm_task(self) -> str:
        return "gh_" + self.name.replace("-", "_")


CONFIGS = [
    Config("gen-0shot", "gen", "lengthgen/addition", 0),
    Config("gen-3shot", "gen", "lengthgen/addition", 3),
    Config("mc-0shot", "mc", "benchmc/arith_mc", 0),
    Config("mc-3shot", "mc", "benchmc/arith_mc", 3),
    Config("gen-3shot-shared", "gen", "lengthgen/addition", 3, shared=True),
    Config("mc-3shot-shared", "mc", "benchmc/arith_mc", 3, shared=True),
]


# -- inputs ---------------------------------------------------------------------------------


def write_mc_task(per_digit: int = 40, seed: int = 0) -> Path:
    """A 4-way multiple-choice arithmetic task (harness task file + jsonl items)."""
    rng = random.Random(seed)
    folder = W / "tasks" / "benchmc"
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for d in range(1, 7):
        for i in range(per_digit):
            lo = 0 if d == 1 else 10 ** (d - 1)
            a, b = rng.randint(lo, 10**d - 1), rng.randint(lo, 10**d - 1)
            s = a + b
            wrong: set[int] = set()
            while len(wrong) < 3:
                c = s + rng.choice([-1, 1, -2, 2, -10, 10, -100, 100, 9, -9])
                if c >= 0 and c != s:
                    wrong.add(c)
            choices = [str(x) for x in [s, *sorted(wrong)]]
            rng.shuffle(choices)
            rows.append({"id": f"{d}-{i}", "a": a, "b": b, "digits": d, "choices": choices,
                         "target": choices.index(str(s))})
    (folder / "arith_mc.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "arith_mc.yaml").write_text(f"""\
name: arith_mc
description: Pick the sum of two integers among four candidates (benchmark task).
source: {{type: files, path: arith_mc.jsonl}}
fields: {{target: target, difficulty: digits, id: id}}
difficulty_name: digits
buckets: {{values: [1, 2, 3, 4, 5, 6]}}
roles: {{id_max: 3}}
templates:
  - {{id: q, prompt: {json.dumps(MC_TEMPLATE)}}}
fewshot: {{k: 3}}  # (--num-fewshot 0 for zero-shot: a file with k: 0 builds no pool)
output: {{type: multiple_choice, choices_field: choices, choice_prefix: " "}}
scoring: {{metric: exact_match}}
""")
    return W / "tasks"


def harness_cmd(cfg: Config, out: Path, limit: int, batch: str) -> list[str | Path]:
    return [VENV / "harness", "eval", "--model", "hf:smollm2-135m", "--tasks", cfg.task,
            "--include-path", W / "tasks", "--limit-per-bucket", str(limit), "--num-fewshot",
            str(cfg.k), "--seed", "0", "--batch-size", batch, "--output-dir", out, "--no-cache",
            "--fewshot-shared" if cfg.shared else "--fewshot-per-item"]


def lmeval_cmd(cfg: Config, out: Path, mdir: str, batch: str) -> list[str | Path]:
    return [LMEVAL / "lm-eval", "run", "--model", "hf", "--model_args",
            f"pretrained={mdir},dtype=float32", "--device", "cpu", "--tasks", cfg.lm_task,
            "--include_path", W / "lmeval_tasks", "--batch_size", batch, "--output_path", out,
            "--log_samples", "--seed", "0"]


def harness_samples(out: Path, cfg: Config) -> list[dict[str, Any]]:
    path = out / "samples" / f"{cfg.task}.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return sorted(rows, key=lambda r: r["id"])


def write_lmeval_task(cfg: Config, rows: list[dict[str, Any]]) -> None:
    """The harness's prompts as an lm-eval ``dataset_path: json`` task (run zero-shot)."""
    folder = W / "lmeval_tasks"
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / f"{cfg.lm_task}.jsonl"
    if cfg.kind == "gen":
        docs = [{"id": r["id"], "prompt": r["prompt"], "target": r["target"]} for r in rows]
        body = ("output_type: generate_until\ndoc_to_target: target\n"
                "generation_kwargs: {until: [\"\\n\"], max_gen_toks: 24, do_sample: false}\n"
                "metric_list: [{metric: exact_match}]\n")
    else:
        docs = [{"id": r["id"], "prompt": r["prompt"], "choices": r["choices"],
                 "gold": r["gold_index"]} for r in rows]
        body = ("output_type: multiple_choice\ndoc_to_choice: choices\ndoc_to_target: gold\n"
                "target_delimiter: \" \"\nmetric_list: [{metric: acc}]\n")
    data.write_text("".join(json.dumps(d) + "\n" for d in docs))
    (folder / f"{cfg.lm_task}.yaml").write_text(
        f"task: {cfg.lm_task}\ndataset_path: json\n"
        f"dataset_kwargs: {{data_files: {{test: {json.dumps(str(data))}}}}}\n"
        "test_split: test\ndoc_to_text: prompt\nnum_fewshot: 0\n" + body)


# -- answers --------------------------------------------------------------------------------


def harness_answers(rows: list[dict[str, Any]], kind: str) -> list[Any]:
    return [r["output"] if kind == "gen" else r["choice_logprobs"] for r in rows]


def lmeval_answers(out: Path, cfg: Config, ids: list[str]) -> list[Any]:
    (path,) = sorted(out.rglob(f"samples_{cfg.lm_task}_*.jsonl"))
    by_id = {}
    for line in path.read_text().splitlines():
        s = json.loads(line)
        if cfg.kind == "gen":
            by_id[s["doc"]["id"]] = s["resps"][0][0]
        else:
            by_id[s["doc"]["id"]] = [float(r[0][0]) for r in s["resps"]]
    return [by_id[i] for i in ids]


def compare(kind: str, a: list[Any], b: list[Any]) -> dict[str, Any]:
    """Same greedy texts / same per-choice log-likelihoods (to TOL) and the same argmax."""
    assert len(a) == len(b), (len(a), len(b))
    if kind == "gen":
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        return {"items": len(a), "different_answers": len(diff), "ok": not diff,
                "first_difference": None if not diff else [a[diff[0]], b[diff[0]]]}
    worst = max(abs(x - y) for ra, rb in zip(a, b, strict=True)
                for x, y in zip(ra, rb, strict=True))
    picks = sum(max(range(len(ra)), key=ra.__getitem__) != max(range(len(rb)), key=rb.__getitem__)
                for ra, rb in zip(a, b, strict=True))
    return {"items": len(a), "choices": sum(map(len, a)), "max_abs_logprob_diff": worst,
            "different_picks": picks, "ok": worst <= TOL and picks == 0}


# -- the two comparisons --------------------------------------------------------------------


CmdH = Callable[[Config, Path, int, str], list[str | Path]]  # (cfg, out, limit, batch)
CmdL = Callable[[Config, Path, str, str], list[str | Path]]  # (cfg, out, model dir, batch)


def e2e(cfgs: list[Config], runs: int, limit: int, batch: str, mdir: str,
        h_batch: str, harness_cmd: CmdH = harness_cmd,
        lmeval_cmd: CmdL = lmeval_cmd) -> dict[str, Any]:
    """Check answers, then time both whole commands, alternated (the command builders are
    this file's HF ones unless given: vs_lmeval_vllm.py passes its vLLM ones)."""
    ref: dict[str, tuple[list[str], list[Any], list[Any]]] = {}
    checks: dict[str, Any] = {}
    for cfg in cfgs:  # untimed: renders the prompts, writes the lm-eval task, checks answers
        out_h, out_l = W / "out" / "h" / cfg.name / "ref", W / "out" / "l" / cfg.name / "ref"
        shutil.rmtree(out_h, ignore_errors=True)
        shutil.rmtree(out_l, ignore_errors=True)
        run(harness_cmd(cfg, out_h, limit, h_batch), log=W / "logs" / f"h-{cfg.name}-ref.log")
        rows = harness_samples(out_h, cfg)
        write_lmeval_task(cfg, rows)
        run(lmeval_cmd(cfg, out_l, mdir, batch), log=W / "logs" / f"l-{cfg.name}-ref.log")
        ids = [r["id"] for r in rows]
        h, lm = harness_answers(rows, cfg.kind), lmeval_answers(out_l, cfg, ids)
        checks[cfg.name] = compare(cfg.kind, h, lm)
        print(f"{cfg.name}: {len(rows)} prompts; same answers: {checks[cfg.name]}", flush=True)
        if not checks[cfg.name]["ok"]:
            raise SystemExit(f"{cfg.name}: the two tools disagree; no timing")
        ref[cfg.name] = (ids, h, lm)
    times: dict[str, dict[str, list[float]]] = {c.name: {"harness": [], "lm-eval": []}
                                                for c in cfgs}
    for r in range(runs):
        for cfg in cfgs:
            order = ["harness", "lm-eval"] if r % 2 == 0 else ["lm-eval", "harness"]
            for tool in order:
                out = W / "out" / tool / cfg.name / f"run{r}"
                shutil.rmtree(out, ignore_errors=True)
                ids, h, lm = ref[cfg.name]
                if tool == "harness":
                    secs = run(harness_cmd(cfg, out, limit, h_batch))
                    again = harness_answers(harness_samples(out, cfg), cfg.kind)
                    ok = compare(cfg.kind, again, h)["ok"]
                else:
                    secs = run(lmeval_cmd(cfg, out, mdir, batch))
                    ok = compare(cfg.kind, lmeval_answers(out, cfg, ids), lm)["ok"]
                if not ok:
                    raise SystemExit(f"{cfg.name}: {tool} run {r} changed its answers")
                times[cfg.name][tool].append(secs)
                print(f"  e2e run {r} {cfg.name:10s} {tool:8s} {secs:7.2f} s", flush=True)
    return {"checks": checks, "times": times, "n_prompts": {c: len(ref[c][0]) for c in ref}}


class Worker:
    """A long-lived model process of one tool (see bench/_worker.py)."""

    def __init__(self, tool: str, mdir: str, batch: str, requests: Path) -> None:
        python = VENV / "python" if tool == "harness" else LMEVAL / "python"
        kind = "harness" if tool == "harness" else "lmeval"
        self.proc = subprocess.Popen(
            [str(python), str(ROOT / "bench" / "_worker.py"), kind, mdir, batch, str(requests)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=ENV, cwd=ROOT,
            stderr=(W / "logs" / f"worker-{kind}.log").open("w"))
        self._expect("ready")

    def _expect(self, word: str) -> str:
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("worker died; see runs/bench/vs_lmeval/logs/worker-*.log")
            if line.startswith(word):
                return line

    def run(self, name: str, out: Path) -> float:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"run {name} {out}\n")
        self.proc.stdin.flush()
        return float(self._expect("done").split()[1])

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        self.proc.wait(timeout=60)


def backend(cfgs: list[Config], runs: int, batch: str, mdir: str) -> dict[str, Any]:
    sets: dict[str, Any] = {}
    for cfg in cfgs:
        rows = harness_samples(W / "out" / "h" / cfg.name / "ref", cfg)
        if cfg.kind == "gen":
            sets[cfg.name] = {"generate": [[r["prompt"], 24, ["\n"]] for r in rows]}
        else:
            sets[cfg.name] = {"loglikelihood": [[r["prompt"], " " + c] for r in rows
                                                for c in r["choices"]]}
    req_file = W / "backend_requests.json"
    req_file.write_text(json.dumps(sets))
    workers = {t: Worker(t, mdir, batch, req_file) for t in ("harness", "lm-eval")}
    times: dict[str, dict[str, list[float]]] = {c.name: {"harness": [], "lm-eval": []}
                                                for c in cfgs}
    checks: dict[str, Any] = {}
    try:
        for r in range(runs + 1):  # run 0 is a warm-up and the answer check, not timed
            for cfg in cfgs:
                order = ["harness", "lm-eval"] if r % 2 == 0 else ["lm-eval", "harness"]
                answers = {}
                for tool in order:
                    out = W / "out" / f"backend-{tool}-{cfg.name}.json"
                    secs = workers[tool].run(cfg.name, out)
                    answers[tool] = json.loads(out.read_text())
                    if r:
                        times[cfg.name][tool].append(secs)
                        print(f"  backend run {r} {cfg.name:10s} {tool:8s} {secs:7.2f} s",
                              flush=True)
                h, lm = answers["harness"], answers["lm-eval"]
                if cfg.kind == "mc":  # back to per-item lists of per-choice logprobs
                    h, lm = _per_item(h, sets[cfg.name]), _per_item(lm, sets[cfg.name])
                check = compare(cfg.kind, h, lm)
                if not check["ok"]:
                    raise SystemExit(f"backend {cfg.name} run {r}: the tools disagree: {check}")
                checks.setdefault(cfg.name, check)
    finally:
        for w in workers.values():
            w.close()
    n = {c: len(next(iter(s.values()))) for c, s in sets.items()}
    return {"checks": checks, "times": times, "n_requests": n}


def _per_item(pairs: list[list[Any]], reqs: dict[str, Any]) -> list[list[float]]:
    out: list[list[float]] = []
    last = None
    for (ctx, _), (lp, _) in zip(reqs["loglikelihood"], pairs, strict=True):
        if ctx != last:
            out.append([])
            last = ctx
        out[-1].append(float(lp))
    return out


def ratios(times: dict[str, dict[str, list[float]]], n: dict[str, int]) -> list[dict[str, Any]]:
    rows = []
    for name, t in times.items():
        if not t["harness"]:
            continue
        speedups = [lm / h for h, lm in zip(t["harness"], t["lm-eval"], strict=True)]
        rows.append({
            "config": name, "requests": n[name],
            "harness_s": summary(t["harness"]), "lmeval_s": summary(t["lm-eval"]),
            "harness_req_per_s": n[name] / summary(t["harness"])["median"],
            "lmeval_req_per_s": n[name] / summary(t["lm-eval"])["median"],
            "speedup": summary(speedups),
        })
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--limit-per-bucket", type=int, default=10)
    ap.add_argument("--batch-size", default="32")
    ap.add_argument("--harness-batch-size", default=None,
                    help="the harness's batch size in the e2e runs (default: --batch-size)")
    ap.add_argument("--name", default=None, help="results file name (default: vs_lmeval)")
    ap.add_argument("--configs", default=",".join(c.name for c in CONFIGS))
    ap.add_argument("--mode", choices=["e2e", "backend", "both"], default="both")
    args = ap.parse_args()
    subprocess.run(["bash", str(ROOT / "bench" / "setup_lmeval.sh")], check=True)
    cfgs = [c for c in CONFIGS if c.name in args.configs.split(",")]
    mdir = model_dir()
    write_mc_task()
    info = machine()
    result: dict[str, Any] = {"benchmark": "vs_lmeval", "machine": info,
                              "model_dir": public_model_dir(mdir),
                              "runs": args.runs, "limit_per_bucket": args.limit_per_bucket,
                              "batch_size": args.batch_size, "tolerance": TOL,
                              "harness_batch_size": args.harness_batch_size or args.batch_size,
                              "command": " ".join(sys.argv)}
    if args.mode in ("e2e", "both"):
        res = e2e(cfgs, args.runs, args.limit_per_bucket, args.batch_size, mdir,
                  args.harness_batch_size or args.batch_size)
        result["e2e"] = {"checks": res["checks"], "raw": res["times"],
                         "table": ratios(res["times"], res["n_prompts"])}
        _print("end to end (process start to exit)", result["e2e"]["table"], "prompts")
    if args.mode in ("backend", "both"):
        if args.mode == "backend":  # needs the rendered prompts of an e2e reference run
            for cfg in cfgs:
                if not (W / "out" / "h" / cfg.name / "ref").exists():
                    raise SystemExit("run --mode e2e (or both) first")
        res = backend(cfgs, args.runs, args.batch_size, mdir)
        result["backend"] = {"checks": res["checks"], "raw": res["times"],
                             "table": ratios(res["times"], res["n_requests"])}
        _print("backend only (model loaded; same request list)", result["backend"]["table"],
               "requests")
    import os

    result["machine"]["loadavg_at_end"] = os.getloadavg()
    name = args.name or ("vs_lmeval" if args.mode == "both" else f"vs_lmeval_{args.mode}")
    print(f"\nwrote {write_result(name, result)}")


def _print(title: str, table: list[dict[str, Any]], unit: str) -> None:
    print_table(title, ["config", unit, "harness s", "lm-eval s", "harness req/s",
                        "lm-eval req/s", "speed-up (lm-eval/harness)"],
                [[r["config"], r["requests"], fmt_range(r["harness_s"]), fmt_range(r["lmeval_s"]),
                  f"{r['harness_req_per_s']:.1f}", f"{r['lmeval_req_per_s']:.1f}",
                  fmt_range(r["speedup"], "x")] for r in table])


if __name__ == "__main__":
    main()
