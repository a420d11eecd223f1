"""Train one tiny reference model from scratch on exported ID data.

The training rows come from ``harness.data.export.iter_rows`` (the same items and prompts as
``harness data export``, never a same-seed eval prompt). ``--arch transformer`` (the default):
a decoder-only transformers class with the position encoding ``--variant`` names, saved as an
ordinary HF folder, loadable as ``--model hf:DIR`` without remote code. ``--arch lstm`` or
``gru``: ``modeling_recurrent.RecurrentForCausalLM``, saved with that file beside the weights,
loadable as ``--model hf:DIR --model-args trust_remote_code=true``. Both with a character-level
fast tokenizer. Deterministic per seed.

    .venv/bin/python examples/reference_models/train.py --variant rope --seed 0 \
        --task lengthgen/addition_reversed --steps 3000 --out refmodels/rope-s0
    .venv/bin/python examples/reference_models/train.py --arch lstm --seed 0 \
        --task reference/parity --include-path examples/reference_models/tasks \
        --steps 2000 --out refmodels/lstm-s0
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models
from transformers import (
    GPT2Config,
    GPT2LMHeadModel,
    GPTNeoXConfig,
    GPTNeoXForCausalLM,
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedModel,
    PreTrainedTokenizerFast,
)

from harness.data.export import ExportReport, iter_rows
from harness.errors import HarnessError
from harness.tasks.index import TaskIndex

sys.path.insert(0, str(Path(__file__).resolve().parent))  # modeling_recurrent, also when imported
from modeling_recurrent import RecurrentConfig, RecurrentForCausalLM  # noqa: E402

VARIANTS = ("learned", "rope", "nope")  # GPT-2 absolute, Llama rotary, GPT-NeoX rotary_pct=0
ARCHS = ("transformer", "lstm", "gru")
PAD, EOS = "<pad>", "<eos>"


def char_tokenizer() -> PreTrainedTokenizerFast:
    """One token per printable ASCII character and newline (BPE with no merges)."""
    chars = ["\n"] + [chr(c) for c in range(32, 127)]
    vocab = {PAD: 0, EOS: 1, **{ch: i + 2 for i, ch in enumerate(chars)}}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token=None))
    tok.decoder = decoders.Fuse()  # join characters as they are (no space between tokens)
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token=PAD, eos_token=EOS,
                                   bos_token=EOS, clean_up_tokenization_spaces=False)


def build_recurrent(cell: str, vocab: int, layers: int, d: int) -> PreTrainedModel:
    """A fresh LSTM/GRU model whose folder carries its modeling file (weights from torch's
    current seed)."""
    RecurrentConfig.register_for_auto_class()
    RecurrentForCausalLM.register_for_auto_class("AutoModelForCausalLM")
    return RecurrentForCausalLM(RecurrentConfig(vocab_size=vocab, hidden_size=d, num_layers=layers,
                                                cell=cell, bos_token_id=1, eos_token_id=1,
                                                pad_token_id=0))


def build_model(variant: str, vocab: int, layers: int, d: int, heads: int, ctx: int
                ) -> PreTrainedModel:
    """A fresh transformer of the variant (weights from torch's current seed)."""
    if variant == "learned":
        return GPT2LMHeadModel(GPT2Config(vocab_size=vocab, n_positions=ctx, n_embd=d,
                                          n_layer=layers, n_head=heads, bos_token_id=1,
                                          eos_token_id=1, pad_token_id=0, resid_pdrop=0.0,
                                          embd_pdrop=0.0, attn_pdrop=0.0))
    if variant == "rope":
        return LlamaForCausalLM(LlamaConfig(
            vocab_size=vocab, hidden_size=d, intermediate_size=4 * d, num_hidden_layers=layers,
            num_attention_heads=heads, num_key_value_heads=heads, max_position_embeddings=ctx,
            bos_token_id=1, eos_token_id=1, pad_token_id=0, tie_word_embeddings=True))
    if variant == "nope":  # rotary on 0% of each head: no position signal but the causal mask
        return GPTNeoXForCausalLM(GPTNeoXConfig(
            vocab_size=vocab, hidden_size=d, intermediate_size=4 * d, num_hidden_layers=layers,
            num_attention_heads=heads, max_position_embeddings=ctx, rotary_pct=0.0,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                             "partial_rotary_factor": 0.0},
            bos_token_id=1, eos_token_id=1, pad_token_id=0, use_parallel_residual=False))
    raise SystemExit(f"--variant: expected one of {', '.join(VARIANTS)}, got {variant!r}")


def encode(tok: PreTrainedTokenizerFast, prompt: str, target: str) -> tuple[list[int], int]:
    """Token ids of ``prompt + " " + target + "\\n"`` and where the answer starts."""
    p = tok.encode(prompt, add_special_tokens=False)
    a = tok.encode(" " + target + "\n", add_special_tokens=False)
    return p + a, len(p)


def batch(rows: list[tuple[list[int], int]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-padded ids, attention mask and labels (loss on the answer only)."""
    width = max(len(ids) for ids, _ in rows)
    ids = torch.zeros(len(rows), width, dtype=torch.long)
    mask = torch.zeros_like(ids)
    labels = torch.full_like(ids, -100)
    for i, (seq, start) in enumerate(rows):
        ids[i, :len(seq)] = torch.tensor(seq)
        mask[i, :len(seq)] = 1
        labels[i, start:len(seq)] = torch.tensor(seq[start:])
    return ids, mask, labels


def curriculum_rows(rows: Iterator[dict[str, object]], lo: int, hi: int, ramp: int
                    ) -> Iterator[tuple[int, dict[str, object]]]:
    """``(cap, row)`` pairs: during the first ``ramp`` rows handed out, rows whose difficulty
    exceeds a cap rising linearly from ``lo`` to ``hi`` are skipped (a length curriculum,
    shortest first); after it every row passes. ``ramp`` 0: no curriculum."""
    served = 0
    for row in rows:
        cap = hi if served >= ramp else lo + (hi - lo) * served // max(1, ramp)
        if float(str(row["difficulty"])) <= cap:
            served += 1
            yield cap, row


def _public(path: Path) -> str:
    """``path`` relative to the working directory when inside it (no local path in records)."""
    rel = os.path.relpath(path.resolve(), Path.cwd())
    return rel if not rel.startswith("..") else path.name


def train(task: str, variant: str | None, seed: int, steps: int, out: Path, layers: int = 3,
          d: int = 128, heads: int = 4, batch_size: int = 64, lr: float = 1e-3,
          threads: int = 1, template: str | None = None,
          include: list[Path] | None = None, arch: str = "transformer",
          curriculum: float = 0.0) -> dict[str, object]:
    """Train and save one model; its training record (also written to out/train.json)."""
    if arch == "transformer" and variant not in VARIANTS:
        raise SystemExit(f"--variant: expected one of {', '.join(VARIANTS)} for --arch "
                         f"transformer, got {variant!r}")
    torch.set_num_threads(threads)
    random.seed(seed)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    index = TaskIndex.build(include or [])
    ref = index.resolve([task])[0]
    spec = index.spec(ref)
    report = ExportReport()
    rows = iter_rows(spec, ref, "ID", seed, template, report)
    if curriculum:
        if spec.roles.id_range is None:
            raise SystemExit(f"--curriculum: {task} declares no roles.id_range to ramp over")
        rng = spec.roles.id_range
        staged = curriculum_rows(rows, rng.min, rng.max, int(curriculum * steps) * batch_size)
        rows = (row for _, row in staged)
    tok = char_tokenizer()
    model = (build_model(str(variant), len(tok), layers, d, heads, 256) if arch == "transformer"
             else build_recurrent(arch, len(tok), layers, d))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps,
                                                pct_start=0.1)
    model.train()
    load_start = os.getloadavg()[0]  # other work on the machine while this one trains
    t0, loss_v = time.perf_counter(), float("nan")
    trained: Counter[float] = Counter()  # rows trained on per difficulty value
    for step in range(steps):
        picked = [next(rows) for _ in range(batch_size)]
        trained.update(float(str(r["difficulty"])) for r in picked)
        ids, mask, labels = batch([encode(tok, str(r["prompt"]), str(r["target"]))
                                   for r in picked])
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        loss_v = loss.detach().item()
        if step % 200 == 0:
            print(f"step {step} loss {loss_v:.4f} {time.perf_counter() - t0:.0f}s", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    model.eval()
    model.save_pretrained(out)
    tok.save_pretrained(out)
    record: dict[str, object] = {
        "task": task, "template": template or spec.templates[0].id, "arch": arch,
        "variant": variant if arch == "transformer" else arch,
        "seed": seed, "steps": steps, "batch_size": batch_size,
        "layers": layers, "d_model": d, "heads": heads if arch == "transformer" else None,
        "lr": lr, "curriculum": curriculum, "final_loss": loss_v,
        "seconds": round(time.perf_counter() - t0, 1), "threads": threads,
        "load_average": [round(load_start, 2), round(os.getloadavg()[0], 2)],  # 1-min, start/end
        "cpus": os.cpu_count(),
        "train_rows": steps * batch_size, "skipped_eval_items": report.skipped_eval,
        "rows_per_difficulty": {f"{v:g}": n for v, n in sorted(trained.items())},
        "include_paths": [_public(p) for p in include or []],
        "parameters": sum(p.numel() for p in model.parameters()),
    }
    (out / "train.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", default="lengthgen/addition_reversed")
    ap.add_argument("--arch", choices=ARCHS, default="transformer",
                    help="transformer (position encoding: --variant), or a recurrent lstm/gru "
                         "(--layers, --d-model: its depth and width)")
    ap.add_argument("--variant", choices=VARIANTS, default=None,
                    help="position encoding of --arch transformer (required for it)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3, help="peak of the one-cycle schedule")
    ap.add_argument("--template", default=None,
                    help="template id of the training prompts (default: the task's first); "
                         "evaluate with the same one (harness eval --templates ID)")
    ap.add_argument("--curriculum", type=float, default=0.0,
                    help="fraction of the steps over which the longest trained difficulty rises "
                         "from the ID range's min to its max (shortest first); 0: none")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--include-path", type=Path, action="append", default=[],
                    help="extra task folder (repeatable), as for harness eval / data export")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    if a.arch == "transformer" and a.variant is None:
        ap.error("--variant is required with --arch transformer")
    try:
        rec = train(a.task, a.variant, a.seed, a.steps, a.out, a.layers, a.d_model, a.heads,
                    a.batch_size, a.lr, a.threads, a.template, a.include_path, a.arch,
                    a.curriculum)
    except HarnessError as e:  # unknown task, template or folder: one line, usage error
        print(f"train.py: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    print(json.dumps(rec))


if __name__ == "__main__":
    main()
