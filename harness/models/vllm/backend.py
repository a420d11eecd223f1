"""vLLM backend, in process: ``vllm:NAME``, NAME an alias, a local HF folder or a hub id.

``--model-args`` go to ``vllm.LLM`` (``tensor_parallel_size=2,max_model_len=4096,...``), their
strings converted to the types of vLLM's engine arguments. Prompts are tokenized here, exactly
as the hf backend does (no special tokens, BOS in front when the tokenizer adds it by default),
and sent as token ids, so both backends see the same tokens. Every request of one method call
is queued in the engine at once (its scheduler batches them) and the engine is stepped here, so
each response is reported through ``on_done`` the moment it finishes.

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
from harness.models.backends import backend
from harness.models.base import LM, ModelIdentity, OnDone, render_chat
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
    LoglikelihoodRequest,
    LoglikelihoodResponse,
    RollingRequest,
)
from harness.tasks.chat import ChatTurn

log = logging.getLogger(__name__)

Args: TypeAlias = "dict[str, str]"
Size: TypeAlias = "int | Literal['auto']"
Row = tuple[list[int], int]  # token ids, number of tokens at the end to score


class VLLMModel(LM):
    """A causal LM run by ``vllm.LLM`` in this process (its engine core in a child process)."""

    def __init__(self, name: str, model_args: Args | None = None, batch_size: Size = 1) -> None:
        # batch_size is not used: vLLM's scheduler batches by memory (max_num_seqs caps it)
        self._args = dict(model_args or {})
        self._name = name
        vllm = import_vllm(name)
        from harness.models.hf.support import trim_at_stop

        self._trim_at_stop = trim_at_stop
        accepted, kinds = engine_signature(vllm)
        opts = VLLMOptions.parse(self._args, accepted, lambda k: kinds.get(k, "auto"))
        in_daemon(name, opts.engine)
        src = resolve(name)
        self._vllm = vllm
        self._llm = start_engine(vllm, name, src, opts.engine)
        try:
            self._tok: Any = self._llm.get_tokenizer()
            self._setup_tokens(opts)
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

    def _setup_tokens(self, opts: VLLMOptions) -> None:
        tok = self._tok
        self._bos: int | None = tok.bos_token_id
        eos: set[int] = {tok.eos_token_id} if tok.eos_token_id is not None else set()
        gen = self._llm.llm_engine.model_config.try_get_generation_config() or {}
        gen_eos = gen.get("eos_token_id")
        eos |= set(gen_eos if isinstance(gen_eos, list) else [] if gen_eos is None else [gen_eos])
        self._eos = eos
        bos = [self._bos] if self._bos is not None else []
        default_bos = (
            bool(bos)
            and tok("a").input_ids[:1] == bos != tok("a", add_special_tokens=False).input_ids[:1]
        )
        self._add_bos = default_bos if opts.add_bos_token is None else opts.add_bos_token
        self._cache: dict[str, tuple[list[int], list[tuple[int, int]]]] = {}

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

    # -- tokenization -------------------------------------------------------------------------

    def _encode(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """Token ids (no special tokens added) and character offsets, cached per string."""
        if text not in self._cache:
            enc = self._tok(text, add_special_tokens=False, return_offsets_mapping=True)
            offsets = [(int(a), int(b)) for a, b in enc["offset_mapping"]]
            self._cache[text] = (list(enc["input_ids"]), offsets)
        return self._cache[text]

    def _with_bos(self, ids: list[int], force: bool = False) -> list[int]:
        if self._bos is not None and (force or self._add_bos) and ids[:1] != [self._bos]:
            return [self._bos, *ids]
        return ids

    def _prompt_ids(self, req: GenerateRequest) -> list[int]:
        ids = self._with_bos(self._encode(req.prompt)[0], force=not req.prompt)
        if not ids:
            raise HarnessError(f"vllm:{self._name}: cannot generate from an empty prompt")
        limit = self.max_length - req.max_tokens
        if len(ids) > limit:
            log.warning("prompt of %d tokens cut from the left to %d", len(ids), limit)
            keep = ids[:1] if ids[:1] == [self._bos] and limit > 1 else []
            ids = keep + ids[len(ids) - limit + len(keep) :]
        return ids

    def _decode(self, ids: list[int]) -> str:
        return str(self._tok.decode(ids, skip_special_tokens=True))

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
        self._cache.clear()
        for r in requests:
            if not 1 <= r.max_tokens < self.max_length:
                raise HarnessError(
                    f"max_tokens must be in 1..{self.max_length - 1}: {r.max_tokens}"
                )
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
            results[k] = GenerateResponse(self._trim_at_stop(self._decode(toks), r.stop), len(toks))
            if on_done:
                on_done(k, results[k])

        self._run([self._prompt_ids(r) for r in requests], params, finish)
        return [results[k] for k in range(len(requests))]

    # -- scoring ------------------------------------------------------------------------------

    def loglikelihood(
        self,
        requests: Sequence[LoglikelihoodRequest],
        on_done: OnDone[LoglikelihoodResponse] | None = None,
    ) -> list[LoglikelihoodResponse]:
        """Sum of log-probabilities of the tokens that carry continuation characters.

        The scored tokens start at the first token whose end offset lies past the context, so a
        token that merges the end of the context with the start of the continuation is scored.
        """
        self._cache.clear()
        unique = sorted(set(requests), key=lambda r: (r.context, r.continuation))
        where: dict[LoglikelihoodRequest, list[int]] = {}
        for i, r in enumerate(requests):
            where.setdefault(r, []).append(i)
        rows = [self._ll_row(r) for r in unique]
        by_req: dict[LoglikelihoodRequest, LoglikelihoodResponse] = {}

        def finish(j: int, lp: float, greedy: bool) -> None:
            resp = LoglikelihoodResponse(logprob=lp, is_greedy=greedy, n_tokens=rows[j][1])
            by_req[unique[j]] = resp
            if on_done:
                for i in where[unique[j]]:
                    on_done(i, resp)

        self._score(rows, finish)
        return [by_req[r] for r in requests]

    def _ll_row(self, req: LoglikelihoodRequest) -> Row:
        if not req.continuation:
            return [], 0
        ids, offsets = self._encode(req.context + req.continuation)
        start = next((i for i, (_, end) in enumerate(offsets) if end > len(req.context)), len(ids))
        full = self._with_bos(ids, force=not req.context)
        # shift past an added BOS; without BOS the first token has no prediction to score
        start = max(1, start + len(full) - len(ids))
        n = len(full) - start
        window = self._window()
        if len(full) - 1 > window:
            log.warning("loglikelihood input of %d tokens cut from the left", len(full) - 1)
            full, n = full[-(window + 1) :], min(n, window)
        return full, n

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
        self._cache.clear()
        rows: list[Row] = []
        owners: list[int] = []
        window = self._window()
        for k, r in enumerate(requests):
            toks = self._with_bos(self._encode(r.text)[0], force=True)
            for a in range(1, len(toks), window):
                b = min(a + window, len(toks))
                rows.append((toks[a - 1 : b], b - a))
                owners.append(k)
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

    def count_tokens(self, text: str) -> int | None:
        """Tokens of ``text`` in vLLM's tokenizer, without special tokens."""
        return len(self._tok(text, add_special_tokens=False)["input_ids"])

    # -- chat -----------------------------------------------------------------------------------

    def apply_chat_template(self, turns: Sequence[ChatTurn]) -> str:
        """Render *turns* with the tokenizer's chat template, opening the assistant's turn."""
        return render_chat(self._tok, turns, f"vllm:{self._name}", error_line)

    def close(self) -> None:
        """Shut the engine (and its worker processes) down."""
        llm, self._llm = getattr(self, "_llm", None), None
        core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
        if core is not None and hasattr(core, "shutdown"):
            try:
                core.shutdown()
            except Exception as e:  # shutting down must not turn a result into an error
                log.debug("vLLM engine shutdown: %s", e)


@backend("vllm")
def create(name: str, model_args: Args, batch_size: Size) -> LM:
    """Registry factory for ``vllm:NAME``."""
    return VLLMModel(name, model_args, batch_size)
