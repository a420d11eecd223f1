"""vLLM backend, in process: ``vllm:NAME``, NAME an alias, a local HF folder or a hub id.

``--model-args`` go to ``vllm.LLM`` (``tensor_parallel_size=2,max_model_len=4096,...``), their
strings converted to the types of vLLM's engine arguments. Prompts are tokenized here by the
code the hf backend uses too (:mod:`harness.models.local`) and sent as token ids, so both
backends see the same tokens. Every request of one method call is queued in the engine at once
(its scheduler batches them) and the engine is stepped here, so each response is reported
through ``on_done`` the moment it finishes.

Loglikelihood reads vLLM's prompt logprobs of context+continuation (``max_tokens=1``): the
scored tokens start at the first token whose end offset lies past the context, as in the hf
backend, and ``is_greedy`` holds when each scored token has rank 1.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeAlias

from harness.errors import HarnessError
from harness.lm import LM, ModelIdentity, OnDone
from harness.models.local import LocalLM, Row
from harness.models.support import trim_at_stop
from harness.models.vllm.support import (
    VLLMOptions,
    engine_signature,
    error_line,
    import_vllm,
    in_daemon,
    resolve,
    start_engine,
)
from harness.requests import (
    GenerateRequest,
    GenerateResponse,
    RollingRequest,
)

log = logging.getLogger(__name__)

Args: TypeAlias = "dict[str, str]"
Size: TypeAlias = "int | Literal['auto']"


class VLLMModel(LocalLM):
    """A causal LM run by ``vllm.LLM`` in this process (its engine core in a child process)."""

    def __init__(self, name: str, model_args: Args | None = None, batch_size: Size = 1) -> None:
        # batch_size is not used: vLLM's scheduler batches by memory (max_num_seqs caps it)
        self._args = dict(model_args or {})
        self._name = name
        self._label = f"vllm:{name}"
        vllm = import_vllm(name)
        accepted, kinds = engine_signature(vllm)
        opts = VLLMOptions.parse(self._args, accepted, lambda k: kinds.get(k, "auto"))
        in_daemon(name, opts.engine)
        src = resolve(name)
        self._vllm = vllm
        self._llm = start_engine(vllm, name, src, opts.engine)
        try:
            gen = self._llm.llm_engine.model_config.try_get_generation_config() or {}
            self._init_tokens(self._llm.get_tokenizer(), gen.get("eos_token_id"),
                              opts.add_bos_token)
        except Exception:
            self.close()
            raise
        config = self._llm.llm_engine.model_config
        self.max_length: int = int(config.max_model_len)
        self._identity = ModelIdentity(
            backend="vllm",
            name=name,
            path=src.path,
            revision=opts.engine.get("revision") or None,
            weights_sha256=src.weights_sha256,
            dtype=str(config.dtype).removeprefix("torch."),
            device=self._device(),
            args=self._args,
        )

    def _device(self) -> str:
        from vllm.platforms import current_platform

        kind = str(getattr(current_platform, "device_type", "") or "unknown")
        try:
            world = int(self._llm.get_world_size())
        except Exception:  # older vLLM without get_world_size
            world = 1
        return kind if world == 1 else f"{kind} x{world}"

    @property
    def identity(self) -> ModelIdentity:
        """Identity of the loaded model."""
        return self._identity

    # -- the engine loop ------------------------------------------------------------------------

    def _run(
        self, prompts: list[list[int]], params: list[Any], done: Callable[[int, Any], None]
    ) -> None:
        """Queue every prompt at once, then step the engine, calling ``done(k, output)`` as soon
        as prompt *k* finishes."""
        if not prompts:
            return
        from vllm.inputs import TokensPrompt

        engine = self._llm.llm_engine
        if engine.has_unfinished_requests():  # left over from an interrupted call
            raise HarnessError(f"vllm:{self._name}: the engine still holds unfinished requests")
        try:
            ids = self._llm.enqueue(
                [TokensPrompt(prompt_token_ids=p) for p in prompts], params, use_tqdm=False
            )
        except Exception as e:
            raise HarnessError(f"vllm:{self._name}: vLLM refused a request: {error_line(e)}") from e
        where: dict[str, int] = {}
        for k, rid in enumerate(ids):  # outputs carry the id without vLLM's random suffix
            where[rid] = where[rid.rsplit("-", 1)[0]] = k
        pending = set(range(len(prompts)))
        try:
            while pending:
                if not engine.has_unfinished_requests():
                    raise HarnessError(
                        f"vllm:{self._name}: the engine stopped with {len(pending)} requests "
                        "unanswered"
                    )
                for out in engine.step():
                    got = where.get(str(out.request_id))
                    if out.finished and got is not None and got in pending:
                        pending.discard(got)
                        done(got, out)
        except HarnessError:
            engine.abort_request(list(ids), internal=True)
            raise
        except BaseException as e:
            engine.abort_request(list(ids), internal=True)
            if isinstance(e, Exception):
                raise HarnessError(f"vllm:{self._name}: engine failed: {error_line(e)}") from e
            raise

    # -- generation ---------------------------------------------------------------------------

    def generate(
        self, requests: Sequence[GenerateRequest], on_done: OnDone[GenerateResponse] | None = None
    ) -> list[GenerateResponse]:
        """Continue each prompt (greedy when temperature is 0); output trimmed at stop strings.

        Sampled requests get a seed from (engine seed, prompt, repeat number), so their output
        does not depend on which other requests share the call."""
        self._start_generate(requests)
        seen: dict[str, int] = {}
        params = []
        for r in requests:
            seed = None
            if r.temperature > 0:
                seen[r.prompt] = seen.get(r.prompt, -1) + 1
                key = f"{self._args.get('seed', '0')}\0{r.prompt}\0{seen[r.prompt]}"
                seed = int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big")
            params.append(self._vllm.SamplingParams(
                max_tokens=r.max_tokens, temperature=max(0.0, r.temperature), top_p=1.0,
                stop=[s for s in r.stop if s] or None, seed=seed, skip_special_tokens=True,
            ))
        results: dict[int, GenerateResponse] = {}

        def finish(k: int, out: Any) -> None:
            r = requests[k]
            toks = list(out.outputs[0].token_ids)[: r.max_tokens]
            toks = toks[: next((i for i, t in enumerate(toks) if t in self._eos), len(toks))]
            results[k] = GenerateResponse(trim_at_stop(self._decode(toks), r.stop), len(toks))
            if on_done:
                on_done(k, results[k])

        self._run([self._prompt_ids(r) for r in requests], params, finish)
        return [results[k] for k in range(len(requests))]

    # -- scoring ------------------------------------------------------------------------------

    def _describe(self, e: BaseException) -> str:
        """An exception from vLLM's tokenizer in one line (pydantic errors name the field)."""
        return error_line(e)

    def _window(self) -> int:
        """Most tokens one prompt can score: the prompt plus one generated token must fit."""
        return max(1, self.max_length - 2)

    def loglikelihood_rolling(
        self, requests: Sequence[RollingRequest], on_done: OnDone[float] | None = None
    ) -> list[float]:
        """Log-probability of each whole text (first token conditioned on BOS when there is one).

        Tokens are scored in disjoint windows of ``max_model_len - 2`` predictions; each window
        is fed the token just before it, so context does not carry over between windows.
        """
        rows, owners = self._rolling_rows(requests)
        totals = [0.0] * len(requests)
        left = [0] * len(requests)
        for k in owners:
            left[k] += 1

        def finish(j: int, lp: float, greedy: bool) -> None:
            k = owners[j]
            totals[k] += lp
            left[k] -= 1
            if left[k] == 0 and on_done:
                on_done(k, totals[k])

        if on_done:  # texts with nothing to score are final at once
            for k in range(len(requests)):
                if left[k] == 0:
                    on_done(k, 0.0)
        self._score(rows, finish)
        return totals

    def _score(self, rows: list[Row], finish: Callable[[int, float, bool], None]) -> None:
        """Prompt logprobs of each row's last ``n`` tokens; ``finish(j, sum, all rank 1)``."""
        live = [j for j, (toks, n) in enumerate(rows) if n > 0 and len(toks) > 1]
        for j in sorted(set(range(len(rows))) - set(live)):
            finish(j, 0.0, True)
        params = self._vllm.SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=0)

        def done(k: int, out: Any) -> None:
            toks, n = rows[live[k]]
            lps = out.prompt_logprobs
            total, greedy = 0.0, True
            for pos in range(len(toks) - n, len(toks)):
                entry = lps[pos][toks[pos]]
                total += float(entry.logprob)
                greedy = greedy and entry.rank == 1
            finish(live[k], total, greedy)

        self._run([rows[j][0] for j in live], [params] * len(live), done)

    def close(self) -> None:
        """Shut the engine (and its worker processes) down."""
        llm, self._llm = getattr(self, "_llm", None), None
        core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
        if core is not None and hasattr(core, "shutdown"):
            try:
                core.shutdown()
            except Exception as e:  # shutting down must not turn a result into an error
                log.debug("vLLM engine shutdown: %s", e)


def create(name: str, model_args: Args, batch_size: Size) -> LM:
    """Registry factory for ``vllm:NAME``."""
    return VLLMModel(name, model_args, batch_size)
