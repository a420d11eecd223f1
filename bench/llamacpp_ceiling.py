"""llama.cpp's own speed on this machine: the ceiling `llamacpp:` is measured against.

For each GGUF, through llama-cpp-python's low-level batch API (the path `llama-bench` times, with
nothing of the harness in between): prompt processing (``pp``: one sequence, N prompt tokens fed
in batches of up to 512, logits of the last one only), prompt processing with every position's
logits (``pp+logits``: what scoring a continuation needs) and decoding (``tg``: one token per
call, after a 64-token prompt), each repeated, tokens per second of process CPU and of wall time.
Then the `llamacpp:` backend on prefill-bound work (the 4-way multiple-choice workload of
`bench/engines.py`, 3-shot, 240 requests in one call, as `harness eval` makes it) for the same
file: prompt tokens the engine fed per CPU second, beside the ceiling (``pp``: a choice needs
the logits of its own tokens only). Beside both, `hf:` fp32 on the same requests (an alias with
an ``hf:`` model): the tokens the engine fed over hf's CPU seconds, the rate llama.cpp would need
to use no more CPU than hf.

    .venv/bin/python bench/llamacpp_ceiling.py [--threads 1] [--repeats 3] [--models A,B,...]
        [--name llamacpp_ceiling]

The results name the llama.cpp build (its ggml backends, e.g. ``blas`` for a llama-cpp-python
compiled with ``-DGGML_BLAS=ON``): ``--name`` keeps another build's numbers apart.

A model is ``smollm2-135m`` / ``gemma3-270m`` (the F16 conversion `llamacpp:ALIAS` runs),
``ALIAS:TYPE`` (the alias converted to TYPE, e.g. ``smollm2-135m:q8_0``), or a path to a
``.gguf``. Writes ``bench/results/NAME.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import machine, print_table, write_result  # noqa: E402

from harness.models.llamacpp import weights  # noqa: E402
from harness.models.llamacpp.engine import Engine  # noqa: E402

ITEMS = 60  # multiple-choice items (4 choices each, 3-shot) the engine's rate is taken on


def gguf(model: str) -> tuple[Path, str]:
    """The file a model name runs, and a label."""
    alias, _, dtype = model.partition(":")
    if alias in weights.names():
        w = weights.resolve(alias, dtype or None)
        kind = "shipped" if w.changes_answers else (dtype or "f16").upper()
        return w.gguf, f"{alias} {kind}"
    return Path(model), Path(model).name


def measure(path: Path, threads: int, repeats: int, n_prompt: int, n_gen: int) -> dict[str, Any]:
    """pp, pp+logits and tg tokens per CPU second and per wall second."""
    ll = weights.import_llama_cpp(path.name)
    eng = Engine(ll, str(path), path.name)
    eng.start(1, n_prompt + n_gen + 64, threads)
    b = eng._batch
    out: dict[str, Any] = {"n_vocab": eng.vocab, "n_batch": eng.n_batch}

    def feed(tokens: list[int], start: int, logits_all: bool) -> None:
        for a in range(0, len(tokens), eng.n_batch):
            part = tokens[a: a + eng.n_batch]
            for i, t in enumerate(part):
                b.token[i], b.pos[i], b.n_seq_id[i] = t, start + a + i, 1
                b.seq_id[i][0] = 0
                b.logits[i] = logits_all or a + i == len(tokens) - 1
            b.n_tokens = len(part)
            eng._decode()

    prompt = [(97 * i + 13) % (eng.vocab - 10) + 5 for i in range(n_prompt)]
    for name, logits_all in (("pp", False), ("pp+logits", True)):
        cpu, wall = [], []
        for _ in range(repeats):
            ll.llama_memory_clear(eng._mem, True)
            c0, w0 = time.process_time(), time.perf_counter()
            feed(prompt, 0, logits_all)
            cpu.append(time.process_time() - c0)
            wall.append(time.perf_counter() - w0)
        out[name] = {"tokens": n_prompt, "tok_per_cpu_s": round(n_prompt / statistics.median(cpu),
                                                                1),
                     "tok_per_wall_s": round(n_prompt / statistics.median(wall), 1)}
    cpu, wall = [], []
    for _ in range(repeats):
        ll.llama_memory_clear(eng._mem, True)
        feed(prompt[:64], 0, False)
        c0, w0 = time.process_time(), time.perf_counter()
        for k in range(n_gen):
            feed([prompt[k]], 64 + k, True)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    out["tg"] = {"tokens": n_gen, "tok_per_cpu_s": round(n_gen / statistics.median(cpu), 1),
                 "tok_per_wall_s": round(n_gen / statistics.median(wall), 1)}
    eng.close()
    return out


def _mc_requests() -> list[Any]:
    """The 3-shot multiple-choice workload of `bench/engines.py` (its task's items; three other
    items' question and answer before each question), one request per choice."""
    from vs_lmeval import MC_TEMPLATE, W, write_mc_task  # noqa: PLC0415

    from harness.requests import LoglikelihoodRequest  # noqa: PLC0415

    write_mc_task()
    rows = [json.loads(x) for x in
            (W / "tasks" / "benchmc" / "arith_mc.jsonl").read_text().splitlines()]

    def question(r: dict[str, Any]) -> str:
        return MC_TEMPLATE.replace("{{ a }}", str(r["a"])).replace("{{ b }}", str(r["b"]))

    reqs = []
    for i, r in enumerate(rows[:ITEMS]):
        shots = [rows[(i + k) % len(rows)] for k in (7, 31, 101)]
        context = "".join(f"{question(x)} {x['a'] + x['b']}\n\n" for x in shots) + question(r)
        reqs += [LoglikelihoodRequest(context, " " + c) for c in r["choices"]]
    return reqs


def harness_rate(model: str, threads: int) -> dict[str, Any] | None:
    """Prompt tokens the `llamacpp:` backend feeds per CPU second on the 3-shot multiple-choice
    workload (the engine's own count of fed tokens over the call's CPU seconds)."""
    from harness.models.llamacpp.backend import LlamaCppModel  # noqa: PLC0415

    alias, _, dtype = model.partition(":")
    if alias not in weights.names():
        return None
    reqs = _mc_requests()
    lm = LlamaCppModel(alias, {"threads": str(threads), **({"dtype": dtype} if dtype else {})},
                       8)
    try:
        fed0 = lm._engine.fed
        c0, w0 = time.process_time(), time.perf_counter()
        lm.loglikelihood(reqs)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        fed = lm._engine.fed - fed0
    finally:
        lm.close()
    return {"requests": len(reqs), "tokens_fed": fed, "tok_per_cpu_s": round(fed / cpu, 1),
            "tok_per_wall_s": round(fed / wall, 1)}


def hf_rate(model: str, threads: int, fed: int) -> dict[str, Any] | None:
    """`hf:` fp32 on the 3-shot multiple-choice workload: *fed* (the tokens the llama.cpp engine
    fed for it) over hf's CPU seconds for the same requests (best of two calls)."""
    from harness.models.aliases import ALIASES  # noqa: PLC0415
    from harness.models.backends import load_model  # noqa: PLC0415

    alias, _, _ = model.partition(":")
    if alias not in ALIASES or ALIASES[alias].llamacpp_only:
        return None
    import torch  # noqa: PLC0415

    torch.set_num_threads(threads)
    reqs = _mc_requests()
    lm = load_model(f"hf:{alias}", {}, "auto")
    lm.loglikelihood(reqs[:8])  # warm-up
    cpu = []
    for _ in range(2):
        c0 = time.process_time()
        lm.loglikelihood(reqs)
        cpu.append(time.process_time() - c0)
    return {"requests": len(reqs), "cpu_s": round(min(cpu), 2),
            "tok_per_cpu_s": round(fed / min(cpu), 1)}


def build() -> dict[str, Any]:
    """The llama.cpp build measured: llama-cpp-python's version and its ggml backends."""
    import llama_cpp  # noqa: PLC0415

    lib = Path(llama_cpp.__file__).parent / "lib"
    backends = sorted(p.name.removeprefix("libggml-").split(".")[0]
                      for p in lib.glob("libggml-*.so") if p.name != "libggml-base.so")
    env = {k: v for k, v in os.environ.items() if k.startswith("OPENBLAS_")}
    return {"llama_cpp_python": llama_cpp.__version__, "ggml_backends": backends,
            "system_info": llama_cpp.llama_print_system_info().decode().strip(" |"), "env": env}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="smollm2-135m,gemma3-270m")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--prompt", type=int, default=512)
    ap.add_argument("--gen", type=int, default=64)
    ap.add_argument("--name", default="llamacpp_ceiling")
    args = ap.parse_args()
    results, table = [], []
    for model in args.models.split(","):
        path, label = gguf(model)
        rec = {"model": model, "label": label, "file": path.name,
               **measure(path, args.threads, args.repeats, args.prompt, args.gen),
               "harness_mc_3shot": harness_rate(model, args.threads)}
        h = rec["harness_mc_3shot"]
        rec["hf_mc_3shot"] = h and hf_rate(model, args.threads, h["tokens_fed"])
        results.append(rec)
        share = "-" if not h else (
            f"{h['tok_per_cpu_s']:.0f} ({h['tok_per_cpu_s'] / rec['pp']['tok_per_cpu_s']:.0%})")
        table.append([label, rec["pp"]["tok_per_cpu_s"], rec["pp+logits"]["tok_per_cpu_s"],
                      rec["tg"]["tok_per_cpu_s"], share,
                      rec["hf_mc_3shot"]["tok_per_cpu_s"] if rec["hf_mc_3shot"] else "-"])
        print(json.dumps(rec), flush=True)
    print_table(f"llama.cpp ceiling ({args.threads} thread(s); tokens per CPU second)",
                ["model", "pp", "pp+logits", "tg", "harness MC 3-shot (share of pp)",
                 "hf fp32 same work"],
                table)
    write_result(args.name, {"machine": machine(), "build": build(), "threads": args.threads,
                                      "repeats": args.repeats, "results": results,
                                      "cmd": "bench/llamacpp_ceiling.py " + " ".join(sys.argv[1:])})


if __name__ == "__main__":
    main()
