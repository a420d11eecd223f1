"""A long-lived model process for backend-level timing (run under .venv or .venv-lmeval).

    python bench/_worker.py {harness|lmeval} MODEL_DIR BATCH_SIZE REQUESTS.json

REQUESTS.json maps a set name to ``{"generate": [[prompt, max_tokens, [stops]], ...]}`` or
``{"loglikelihood": [[context, continuation], ...]}``. The worker loads the model once, prints
``ready``, then for each line ``run NAME OUT.json`` on stdin runs that set, writes the answers
(texts, or ``[logprob, is_greedy]`` pairs) to OUT.json and prints ``done <seconds>``. The
parent alternates two such processes, so start-up costs are out of the comparison and both
see the same machine load.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def _harness(model_dir: str, batch_size: str) -> Any:
    from harness.models.hf.backend import HFModel
    from harness.requests import GenerateRequest, LoglikelihoodRequest

    bs: Any = "auto" if batch_size == "auto" else int(batch_size)
    model = HFModel(model_dir, {"dtype": "float32", "device": "cpu"}, bs)

    def forget() -> None:
        # every timed run starts cold, as a fresh `harness eval` does: no shared prefix kept
        # from the run before (lm-eval keeps nothing between calls either)
        if model._prefix is not None:
            model._prefix.clear()

    def gen(reqs: list[list[Any]]) -> list[str]:
        forget()
        out = model.generate([GenerateRequest(p, int(n), tuple(s)) for p, n, s in reqs])
        return [r.text for r in out]

    def ll(reqs: list[list[str]]) -> list[list[Any]]:
        forget()
        out = model.loglikelihood([LoglikelihoodRequest(c, x) for c, x in reqs])
        return [[r.logprob, r.is_greedy] for r in out]

    return gen, ll


def _lmeval(model_dir: str, batch_size: str) -> Any:
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(pretrained=model_dir, dtype="float32", device="cpu",
              batch_size=batch_size if batch_size == "auto" else int(batch_size))

    def gen(reqs: list[list[Any]]) -> list[str]:
        inst = [Instance(request_type="generate_until", doc={}, idx=i,
                         arguments=(p, {"until": list(s), "max_gen_toks": int(n),
                                        "do_sample": False}))
                for i, (p, n, s) in enumerate(reqs)]
        return [str(x) for x in lm.generate_until(inst, disable_tqdm=True)]

    def ll(reqs: list[list[str]]) -> list[list[Any]]:
        inst = [Instance(request_type="loglikelihood", doc={}, idx=i, arguments=(c, x))
                for i, (c, x) in enumerate(reqs)]
        return [[float(a), bool(b)] for a, b in lm.loglikelihood(inst, disable_tqdm=True)]

    return gen, ll


def main() -> None:
    kind, model_dir, batch_size, requests_file = sys.argv[1:5]
    with open(requests_file, encoding="utf-8") as f:
        sets = json.load(f)
    gen, ll = (_harness if kind == "harness" else _lmeval)(model_dir, batch_size)
    print("ready", flush=True)
    for line in sys.stdin:
        parts = line.split()
        if len(parts) != 3 or parts[0] != "run":
            break
        reqs = sets[parts[1]]
        t0 = time.perf_counter()
        out = gen(reqs["generate"]) if "generate" in reqs else ll(reqs["loglikelihood"])
        secs = time.perf_counter() - t0
        with open(parts[2], "w", encoding="utf-8") as f:
            json.dump(out, f)
        print(f"done {secs:.6f}", flush=True)


if __name__ == "__main__":
    main()
