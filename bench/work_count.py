"""How much model work each tool does for the same requests: token positions through the
transformer body, positions through the output head, and forward calls.

    .venv/bin/python bench/work_count.py            # after vs_lmeval.py (its request sets)

The model's time follows this work (positions, padding included) and the number of forward
calls (a decode step of 32 rows costs far more per position than a prefill). When both tools do
the same work in the same number of calls, neither can be much faster in the model phase with
identical answers: overhead.py shows the harness at the raw model's speed per call.

Each tool runs in its own environment (``.venv`` and ``.venv-lmeval``) through this same file,
counting with forward hooks on the loaded Hugging Face model; the answers are compared.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))


def _count(model: Any) -> dict[str, int]:
    """Attach counters to an HF causal LM; the dict fills as the model runs."""
    counts = {"calls": 0, "body_positions": 0, "head_positions": 0}

    def body(_m: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        x = kwargs.get("input_ids")
        if x is None:
            x = kwargs.get("inputs_embeds")
        if x is None and args:
            x = args[0]
        counts["calls"] += 1
        counts["body_positions"] += int(x.shape[0] * x.shape[1])

    def head(_m: Any, args: tuple[Any, ...]) -> None:
        h = args[0]
        counts["head_positions"] += int(h.numel() // h.shape[-1])

    model.model.register_forward_pre_hook(body, with_kwargs=True)
    model.lm_head.register_forward_pre_hook(head)
    return counts


def _tool_main(tool: str, model_dir: str, batch: str, req_file: str, out_file: str) -> None:
    """In the tool's own environment: run every request set once, counting."""
    import torch
    from _worker import _harness, _lmeval  # the same calls the backend timing makes

    gen, ll = (_harness if tool == "harness" else _lmeval)(model_dir, batch)
    # the one causal LM the tool loaded (neither exposes it through these calls)
    with warnings.catch_warnings():  # looking at torch.distributed's objects warns
        warnings.simplefilter("ignore")
        found = [o for o in gc.get_objects() if isinstance(o, torch.nn.Module)
                 and hasattr(o, "lm_head") and hasattr(o, "model")]
    if len(found) != 1:
        raise SystemExit(f"{tool}: expected one loaded model, found {len(found)}")
    counts = _count(found[0])
    sets = json.loads(Path(req_file).read_text())
    out: dict[str, Any] = {}
    for name, reqs in sets.items():
        before = dict(counts)
        answers = gen(reqs["generate"]) if "generate" in reqs else ll(reqs["loglikelihood"])
        out[name] = {"work": {k: counts[k] - before[k] for k in counts}, "answers": answers}
    Path(out_file).write_text(json.dumps(out))


def main() -> None:
    from common import ENV, LMEVAL, VENV, WORK, machine, model_dir, print_table, write_result

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch-size", default="32")
    ap.add_argument("--name", default="work_count", help="results file name")
    args = ap.parse_args()
    req_file = WORK / "vs_lmeval" / "backend_requests.json"
    if not req_file.exists():
        raise SystemExit(f"{req_file} is missing: run bench/vs_lmeval.py --mode backend first")
    mdir = model_dir()
    res: dict[str, Any] = {}
    for tool, py in (("harness", VENV / "python"), ("lm-eval", LMEVAL / "python")):
        out = WORK / f"work_count_{tool}.json"
        subprocess.run([str(py), __file__, "--tool", tool, mdir, args.batch_size, str(req_file),
                        str(out)], check=True, env=ENV)
        res[tool] = json.loads(out.read_text())
    rows, table = [], []
    for name in res["harness"]:
        h, lm = res["harness"][name], res["lm-eval"][name]
        if name.startswith("gen"):  # identical texts, or the max log-likelihood difference
            same: Any = h["answers"] == lm["answers"]
        else:
            same = max(abs(a[0] - b[0]) for a, b in zip(h["answers"], lm["answers"], strict=True))
        hw, lw = h["work"], lm["work"]
        ratio = {k: lw[k] / hw[k] if hw[k] else None for k in hw}
        rows.append({"config": name, "harness": hw, "lm-eval": lw, "ratio": ratio,
                     "same_answers": same})
        table.append([name, hw["body_positions"], lw["body_positions"],
                      f"{ratio['body_positions'] or 0:.2f}", hw["head_positions"],
                      lw["head_positions"], hw["calls"], lw["calls"],
                      str(same) if isinstance(same, bool) else f"{same:.1e}"])
    print_table("model work for the same requests (token positions)",
                ["config", "harness body", "lm-eval body", "lm-eval/harness", "harness head",
                 "lm-eval head", "harness calls", "lm-eval calls", "same answers"], table)
    result = {"benchmark": "work_count", "machine": machine(), "batch_size": args.batch_size,
              "command": " ".join(sys.argv), "rows": rows}
    print(f"\nwrote {write_result(args.name, result)}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--tool":
        _tool_main(*sys.argv[2:7])
    else:
        main()
