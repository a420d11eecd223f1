"""Which speed techniques of the hf backend pay: in-process A/B runs on the same requests.

The workloads of bench/vs_lmeval.py (prompts rendered by the harness), one model loaded once,
each technique switched on and off in alternated runs (same answers required):

- shared-context scoring (multiple choice): one context pass per item, its KV cache reused for
  every choice, vs one forward pass per (context + choice) row;
- token tries (multiple choice, ``hf.tree``): every distinct token prefix of a batch fed once,
  in one pass with a custom attention mask, vs the two-pass shared-context way;
- the greedy decoding loop vs ``model.generate`` (greedy, per-row ``RowStopper``);
- compacting finished rows out of the generation batch vs keeping them to the end;
- batch size 32 vs 64 (the auto start);
- a prompt prefix shared by a whole batch (one exemplar set for every item,
  ``--fewshot-shared``) run once and its KV cache reused, vs fed in every row;
- shared few-shot prefixes: how many prompt tokens a prefix cache could reuse at all.

    .venv/bin/python bench/techniques.py [--runs 5] [--limit-per-bucket 10]
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ENV, WORK, machine, print_table, run, summary, write_result  # noqa: E402
from vs_lmeval import CONFIGS, compare, harness_cmd, harness_samples, write_mc_task  # noqa: E402

W = WORK / "techniques"


def _prefix_share(tok: Any, prompts: list[str]) -> float:
    """Share of prompt tokens equal to the start of the previous prompt in sorted order (what
    a prefix cache could skip, at most)."""
    ids = sorted(tok(p, add_special_tokens=False)["input_ids"] for p in set(prompts))
    shared = 0
    for a, b in zip(ids, ids[1:], strict=False):
        k = 0
        while k < min(len(a), len(b)) and a[k] == b[k]:
            k += 1
        shared += k
    return shared / max(1, sum(map(len, ids)))


# (technique, workloads, settings with it on, settings with it off), in the order they run
_WORKLOADS: list[tuple[str, list[str], dict[str, Any], dict[str, Any]]] = [
    ("shared-context scoring (two passes)", ["mc-0shot", "mc-3shot"], {"tree": False},
     {"share": False, "tree": False}),
    ("token trie vs two passes", ["mc-0shot", "mc-3shot"], {}, {"tree": False}),
    ("greedy loop vs model.generate", ["gen-0shot", "gen-3shot"], {}, {"fast": False}),
    ("compact finished rows", ["gen-0shot", "gen-3shot"], {}, {"compact": False}),
    ("shared prompt prefix run once", ["gen-3shot-shared", "mc-3shot-shared"], {},
     {"prefix": False}),
    ("batch 64 vs 32", [c.name for c in CONFIGS], {"batch": 64}, {}),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--limit-per-bucket", type=int, default=10)
    ap.add_argument("--only", default="", help="run only techniques whose title contains this")
    args = ap.parse_args()
    import os

    for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[k] = ENV[k]
    import torch

    torch.set_num_threads(int(ENV["OMP_NUM_THREADS"]))
    import harness.models.hf.backend as hf
    from harness.models.hf import generate as hf_generate
    from harness.models.hf import prefix as hf_prefix
    from harness.models.hf.backend import HFModel
    from harness.requests import GenerateRequest, LoglikelihoodRequest

    write_mc_task()
    work: dict[str, Any] = {}
    for cfg in CONFIGS:
        if args.only and not any(args.only in t and cfg.name in n for t, n, *_ in _WORKLOADS):
            continue
        out = W / "ref" / cfg.name
        shutil.rmtree(out, ignore_errors=True)
        run(harness_cmd(cfg, out, args.limit_per_bucket, "32"))
        rows = harness_samples(out, cfg)
        if cfg.kind == "gen":
            work[cfg.name] = [GenerateRequest(r["prompt"], 24, ("\n",)) for r in rows]
        else:
            work[cfg.name] = [LoglikelihoodRequest(r["prompt"], " " + c) for r in rows
                              for c in r["choices"]]
    model = HFModel("smollm2-135m", {}, 32)
    real_plan = hf.plan

    def call(name: str) -> list[Any]:
        reqs = work[name]
        if isinstance(reqs[0], GenerateRequest):
            return [r.text for r in model.generate(reqs)]
        return [r.logprob for r in model.loglikelihood(reqs)]

    min_shared, compact = hf_prefix.MIN_SHARED, hf_generate.COMPACT_FRACTION  # the defaults

    def setting(**kw: Any) -> Callable[[], None]:
        def apply() -> None:
            model._fast = kw.get("fast", True)
            model._batch_size = kw.get("batch", 32)
            model._tree = kw.get("tree", True)
            hf.plan = real_plan if kw.get("share", True) else (lambda rows, live: None)
            hf_generate.COMPACT_FRACTION = compact if kw.get("compact", True) else 2.0
            hf_prefix.MIN_SHARED = min_shared if kw.get("prefix", True) else 10**9
        return apply

    experiments = [(title, names, setting(**on), setting(**off))
                   for title, names, on, off in _WORKLOADS]
    experiments = [e for e in experiments if args.only in e[0]]
    table, raw = [], {}
    for title, names, on, off in experiments:
        for name in names:
            t: dict[str, list[float]] = {"on": [], "off": []}
            answers: dict[str, list[Any]] = {}
            for r in range(args.runs + 1):  # run 0 warms up and checks the answers
                for arm, apply in ((("on", on), ("off", off)) if r % 2 == 0
                                   else (("off", off), ("on", on))):
                    apply()
                    t0 = time.perf_counter()
                    answers[arm] = call(name)
                    if r:
                        t[arm].append(time.perf_counter() - t0)
                kind = "gen" if name.startswith("gen") else "mc"
                a, b = answers["on"], answers["off"]
                check = compare(kind, [a] if kind == "mc" else a, [b] if kind == "mc" else b)
                if not check["ok"]:
                    raise SystemExit(f"{title} / {name}: answers differ: {check}")
            speed = [off_ / on_ for on_, off_ in zip(t["on"], t["off"], strict=True)]
            table.append({"technique": title, "workload": name, "on_s": summary(t["on"]),
                          "off_s": summary(t["off"]), "speedup": summary(speed)})
            raw[f"{title} / {name}"] = t
            print(f"  {title:32s} {name:10s} x{statistics.median(speed):.2f}", flush=True)
    setting()()
    share = {c.name: _prefix_share(model._tok, [getattr(r, "prompt", getattr(r, "context", ""))
                                                for r in work[c.name]])
             for c in CONFIGS if c.name in work}
    print_table("techniques: speed-up = time off / time on (median [min-max] of alternated runs)",
                ["technique", "workload", "on s", "off s", "speed-up"],
                [[x["technique"], x["workload"], x["on_s"]["median"], x["off_s"]["median"],
                  f"{x['speedup']['median']:.2f}x [{x['speedup']['min']:.2f}-"
                  f"{x['speedup']['max']:.2f}]"] for x in table])
    print("\nprompt tokens a few-shot prefix cache could reuse at most: "
          + ", ".join(f"{k} {v:.1%}" for k, v in share.items()))
    result = {"benchmark": "techniques", "machine": machine(), "runs": args.runs,
              "limit_per_bucket": args.limit_per_bucket, "table": table,
              "prefix_share": share, "raw": raw, "command": " ".join(sys.argv)}
    name = "techniques" + (f"_{re.sub('[^a-z0-9]+', '_', args.only.lower())}" if args.only else "")
    print(f"\nwrote {write_result(name.strip('_'), result)}")


if __name__ == "__main__":
    main()
