"""The plain-script baseline of bench/overhead.py: the same prompts straight to the model.

    python bench/_raw.py MODEL_DIR BATCH_SIZE REQUESTS.json NAME OUT.json

Imports torch and transformers, loads the model, tokenizes, sorts longest-first, cuts batches
of BATCH_SIZE and runs them: ``model.generate`` (greedy, ``stop_strings``) for a generation
set, one forward pass per batch of (context + continuation) rows for a loglikelihood set. No
harness code. Writes the answers and ``{"load_s", "model_s"}`` to OUT.json.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

T0 = time.perf_counter()

import torch  # noqa: E402
import transformers  # noqa: E402


def generate(model: Any, tok: Any, reqs: list[list[Any]], bs: int) -> list[str]:
    enc = [tok(p, add_special_tokens=False)["input_ids"] for p, _, _ in reqs]
    order = sorted(range(len(reqs)), key=lambda i: (-len(enc[i]), i))
    out: list[str] = [""] * len(reqs)
    for a in range(0, len(order), bs):
        idx = order[a : a + bs]
        width = max(len(enc[i]) for i in idx)
        ids = torch.full((len(idx), width), tok.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(idx), width), dtype=torch.long)
        for j, i in enumerate(idx):
            ids[j, width - len(enc[i]) :] = torch.tensor(enc[i])
            mask[j, width - len(enc[i]) :] = 1
        seqs = model.generate(input_ids=ids, attention_mask=mask, do_sample=False,
                              max_new_tokens=int(reqs[idx[0]][1]), stop_strings=reqs[idx[0]][2],
                              tokenizer=tok, pad_token_id=tok.pad_token_id)
        for j, i in enumerate(idx):
            text = tok.decode(seqs[j, width:], skip_special_tokens=True)
            cuts = [text.find(s) for s in reqs[i][2] if s in text]
            out[i] = text[: min(cuts)] if cuts else text
    return out


def loglikelihood(model: Any, tok: Any, reqs: list[list[str]], bs: int) -> list[list[Any]]:
    rows = []
    for ctx, cont in reqs:
        n_ctx = len(tok(ctx, add_special_tokens=False)["input_ids"])
        full = tok(ctx + cont, add_special_tokens=False)["input_ids"]
        rows.append((full, len(full) - n_ctx))
    order = sorted(range(len(rows)), key=lambda i: (-len(rows[i][0]), i))
    out: list[list[Any]] = [[]] * len(rows)
    for a in range(0, len(order), bs):
        idx = order[a : a + bs]
        width = max(len(rows[i][0]) - 1 for i in idx)
        ids = torch.full((len(idx), width), tok.pad_token_id, dtype=torch.long)
        for j, i in enumerate(idx):
            ids[j, : len(rows[i][0]) - 1] = torch.tensor(rows[i][0][:-1])
        mask = (torch.arange(width)[None, :] < torch.tensor(
            [len(rows[i][0]) - 1 for i in idx])[:, None]).long()
        logp = model(input_ids=ids, attention_mask=mask).logits.float().log_softmax(-1)
        for j, i in enumerate(idx):
            toks, n = rows[i]
            lp = logp[j, len(toks) - 1 - n : len(toks) - 1]
            target = torch.tensor(toks[-n:])
            out[i] = [float(lp.gather(-1, target[:, None]).sum()),
                      bool((lp.argmax(-1) == target).all())]
    return out


@torch.inference_mode()
def main() -> None:
    model_dir, bs, req_file, name, out_file = sys.argv[1:6]
    with open(req_file, encoding="utf-8") as f:
        reqs = json.load(f)[name]
    hf: Any = transformers
    tok = hf.AutoTokenizer.from_pretrained(model_dir)
    tok.padding_side = "left"
    model = hf.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    t1 = time.perf_counter()
    if "generate" in reqs:
        answers: Any = generate(model, tok, reqs["generate"], int(bs))
    else:
        answers = loglikelihood(model, tok, reqs["loglikelihood"], int(bs))
    t2 = time.perf_counter()
    with open(out_file, "w", encoding="utf-8") as f:
        json.dump({"answers": answers, "load_s": t1 - T0, "model_s": t2 - t1}, f)


if __name__ == "__main__":
    main()
