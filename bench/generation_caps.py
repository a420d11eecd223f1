"""Generation caps and degenerate repetition, measured on finished runs before changing anything.

For every generate task of each run: how many generations ran into the task's ``max_tokens`` cap
(their output, counted in the model's own tokenizer, is within 2 tokens of the cap: no stop
string came), the share of all generated tokens those hold, and what a **repetition stop** would
change. The rule tried: stop as soon as the text ends with the same block of at least
``--min-block`` characters three times in a row (a loop the greedy decoder cannot leave). Each
output is cut where the rule fires (greedy decoding makes the cut text exactly what the stopped
generation would have produced), extracted and scored again with the task's own extraction and
metric, and compared with the recorded score.

    .venv/bin/python bench/generation_caps.py runs/leaderboard/smollm2-135m/limit-30 ...

Prints a table per run and writes ``bench/results/generation_caps.json``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, print_table, write_result  # noqa: E402


def repetition_cut(text: str, min_block: int) -> int | None:
    """The shortest prefix length at which ``text`` ends with one block (at least ``min_block``
    characters) three times in a row, as a decoder checking after every character would stop;
    None when it never does."""
    pat = re.compile(r"(.{" + str(min_block) + r",}?)\1\1", re.DOTALL)
    rev = text[::-1]  # a triple ending at ``end`` is a triple starting at ``len - end`` here
    for end in range(3 * min_block, len(text) + 1):
        if pat.match(rev, len(text) - end):
            return end
    return None


def analyse(run: Path, count_tokens: Any, min_block: int) -> list[dict[str, Any]]:
    """One row per generate task of ``run``."""
    from harness.answers.extract import extract
    from harness.answers.metrics import get_metric
    from harness.spec.task import TaskSpec

    res = json.loads((run / "results.json").read_text(encoding="utf-8"))
    rows = []
    for t in res["tasks"]:
        spec = TaskSpec.model_validate(t["spec"])
        out = spec.output
        if getattr(out, "type", "") != "generate":
            continue
        cap = out.max_tokens  # type: ignore[union-attr]
        metric = get_metric(spec.scoring.metric)
        agg: dict[str, float] = defaultdict(float)
        with open(run / t["samples_file"], encoding="utf-8") as f:
            for line in f:
                rec = json.loads(line)
                text = rec["output"]
                n = count_tokens(text) or 0
                agg["samples"] += 1
                agg["tokens"] += n
                if n >= cap - 2:
                    agg["capped"] += 1
                    agg["capped_tokens"] += n
                cut = repetition_cut(text, min_block)
                if cut is None:
                    continue
                kept = count_tokens(text[:cut]) or 0
                agg["cut"] += 1
                agg["saved_tokens"] += n - kept
                new = metric(extract(text[:cut], spec.scoring.extract), rec["target"])
                if new != rec["score"]:
                    agg["changed"] += 1
                    agg["score_delta"] += new - rec["score"]
        tok = agg["tokens"] or 1
        rows.append({"task": t["task"], "cap": cap, "samples": int(agg["samples"]),
                     "capped": int(agg["capped"]),
                     "capped_token_share": round(agg["capped_tokens"] / tok, 3),
                     "repetition_cuts": int(agg["cut"]),
                     "saved_token_share": round(agg["saved_tokens"] / tok, 3),
                     "scores_changed": int(agg["changed"]),
                     "score_sum_delta": agg["score_delta"]})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--min-block", type=int, default=16)
    args = ap.parse_args()
    from harness.config import RunConfig
    from harness.run.evaluate import load

    out: dict[str, Any] = {"min_block": args.min_block, "runs": {}}
    tokenizers: dict[str, Any] = {}
    for run in args.runs:
        res = json.loads((run / "results.json").read_text(encoding="utf-8"))
        spec = res["run"]["model"]
        if spec not in tokenizers:
            tokenizers[spec] = load(RunConfig(model=spec, tasks=["x"], output_dir=Path("x")))
        rows = analyse(run, tokenizers[spec].count_tokens, args.min_block)
        full = run.resolve()
        key = str(full.relative_to(ROOT)) if full.is_relative_to(ROOT) else run.name
        out["runs"][key] = {"model": spec, "tasks": rows}
        heads = list(rows[0]) if rows else ["task"]
        print_table(f"{key} ({spec}), repetition block >= {args.min_block} chars", heads,
                    [list(r.values()) for r in rows])
    write_result("generation_caps", out)


if __name__ == "__main__":
    main()
