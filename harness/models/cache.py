"""Response cache: every finished model response is written to SQLite as soon as it completes.

A run that dies part-way (crash, ``kill -9``, pre-emption) is re-run with the same arguments and
recomputes nothing that had finished. The cache sits between the runner and any backend
(``CachedLM`` wraps an ``LM``), keyed by:

- the backend and the model's identity (name, resolved path, revision, weight hash, dtype, and
  the backend arguments that change outputs),
- the method (generate / loglikelihood / loglikelihood_rolling),
- the exact request (prompt or context + continuation, max tokens, stop sequences, temperature).

Sampled requests (temperature > 0) also key on their occurrence number within the call, so
asking for the same prompt five times yields five samples, and a re-run gets the same five.

A greedy generate request the cache holds under another budget is answered from there when
that answer stopped by itself before this request's budget (``models/cache_ended``): a run
under a changed budget asks the model only for the answers the old budget cut. Those are
counted in ``CacheStats.regrown``.

The database lives in the user cache directory (``platformdirs``), never inside the installed
package; WAL mode lets concurrent runs share it. Rows carry checksums and a damaged file is moved
aside (see :mod:`harness.models.cache_store`): a stored response that fails its checksum or does
not decode into the response type is dropped and asked again, never scored.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from harness.cache_paths import RESPONSE_CACHE_ENV
from harness.lm import LM, ModelIdentity, OnDone, WrapperLM
from harness.models.cache_store import DB_NAME, ResponseCache, warn
from harness.requests import (
    GenerateRequest,
    GenerateResponse,
    LoglikelihoodRequest,
    LoglikelihoodResponse,
    RollingRequest,
)

__all__ = ["DB_NAME", "CacheStats", "CachedLM", "ResponseCache", "model_key"]
CACHE_ENV = RESPONSE_CACHE_ENV  # the response cache folder alone
# Backend arguments that change how fast a model answers, not what it answers.
OPERATIONAL_ARGS = frozenset({
    "max_concurrency", "timeout", "max_retries", "api_key_env", "backoff", "batch_size",
    "gpu_memory_utilization", "tensor_parallel_size", "data_parallel_size",
    "pipeline_parallel_size", "swap_space", "device_map", "max_backoff",
})

Req = TypeVar("Req")
Res = TypeVar("Res")


def model_key(identity: ModelIdentity) -> str:
    """Canonical JSON of the identity fields that decide what a model answers."""
    fields = {
        "backend": identity.backend, "name": identity.name, "path": identity.path,
        "revision": identity.revision, "weights_sha256": identity.weights_sha256,
        "dtype": identity.dtype,
        "args": {k: v for k, v in sorted(identity.args.items()) if k not in OPERATIONAL_ARGS},
    }
    if identity.engine is not None:  # another engine version may answer otherwise
        fields["engine"] = identity.engine
    return json.dumps(fields, sort_keys=True, separators=(",", ":"))


def legacy_model_key(identity: ModelIdentity) -> str | None:
    """The model key a ``llamacpp:`` response was stored under before ``ModelIdentity.engine``:
    the engine version in ``revision`` (None for any other model). The cache reads those rows
    too, so answers stored by an older harness are not asked again."""
    if identity.backend != "llamacpp" or identity.engine is None or identity.revision is not None:
        return None
    return model_key(identity.model_copy(update={"revision": identity.engine, "engine": None}))


def _request_json(method: str, req: object, occurrence: int) -> str:
    body: dict[str, Any] = {"method": method, **dataclasses.asdict(req)}  # type: ignore[call-overload]
    if body.get("until") == "":  # no answer end: the key of a request from before the field
        del body["until"]
    if occurrence:
        body["occurrence"] = occurrence
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass
class CacheStats:
    """Counts for one run (reported in results.json under ``cache``)."""

    hits: int = 0  # requests answered from the cache
    misses: int = 0  # requests sent to the model (= model calls this run)
    rejected: int = 0  # stored responses that failed their checksum or decoding (asked again)
    regrown: int = 0  # of the hits, answers stored under another budget that they ended before


_KINDS: dict[str, tuple[type, ...]] = {"str": (str,), "int": (int,), "float": (float, int),
                                       "bool": (bool,)}


def strict_decoder(cls: type[Res]) -> Callable[[Any], Res]:
    """A decoder of a response dataclass from its JSON form that accepts exactly its fields,
    each of its type (``ValueError`` otherwise): a row of the wrong shape is never scored."""
    types = {f.name: f.type if isinstance(f.type, str) else f.type.__name__
             for f in dataclasses.fields(cls)}  # type: ignore[arg-type]

    def decode(data: Any) -> Res:
        if not isinstance(data, dict) or set(data) != set(types):
            raise ValueError(f"expected the fields {sorted(types)}")
        for name, kind in types.items():
            v = data[name]
            if (isinstance(v, bool) and kind != "bool") or not isinstance(v, _KINDS[kind]):
                raise ValueError(f"{name}: expected {kind}")
        return cls(**data)

    return decode


def decode_float(data: Any) -> float:
    """A rolling log-likelihood from its JSON form (a number, not a bool)."""
    if isinstance(data, bool) or not isinstance(data, int | float):
        raise ValueError("expected a number")
    return float(data)


_GENERATE = strict_decoder(GenerateResponse)
_LOGLIKELIHOOD = strict_decoder(LoglikelihoodResponse)


class CachedLM(WrapperLM):
    """Wraps a backend: answers what the cache holds, sends the rest, stores each as it ends."""

    def __init__(self, inner: LM, cache: ResponseCache) -> None:
        super().__init__(inner)
        self.cache = cache
        self.stats = CacheStats()
        self._model = model_key(inner.identity)
        self._legacy = legacy_model_key(inner.identity)

    def _call(
        self,
        method: str,
        requests: Sequence[Req],
        run: Callable[[list[Req], OnDone[Res] | None], list[Res]],
        encode: Callable[[Res], Any],
        decode: Callable[[Any], Res],
        on_done: OnDone[Res] | None,
    ) -> list[Res]:
        seen: dict[str, int] = {}
        keys, texts = [], []
        for r in requests:
            text = _request_json(method, r, 0)
            occurrence = 0
            if getattr(r, "temperature", 0.0) > 0:
                occurrence = seen.get(text, 0)
                seen[text] = occurrence + 1
            texts.append(_request_json(method, r, occurrence))
            keys.append(ResponseCache.key(self._model, texts[-1]))
        before = self.cache.rejected
        stored = self.cache.get_many(keys)
        if self._legacy is not None:  # rows an older harness stored (see legacy_model_key)
            old = {ResponseCache.key(self._legacy, t): k for k, t in zip(keys, texts, strict=True)
                   if k not in stored}
            stored.update({old[k]: text for k, text in self.cache.get_many(list(old)).items()})
        decoded: dict[str, Res] = {}
        undecodable = []
        for k, text in stored.items():
            try:
                decoded[k] = decode(json.loads(text))
            except (ValueError, TypeError, KeyError, RecursionError):
                undecodable.append(k)
        self.cache.discard(undecodable)
        if (rejected := self.cache.rejected - before) > 0:
            self.stats.rejected += rejected
            warn(f"response cache: {rejected} stored {method} responses in {self.cache.path} "
                 "failed their checksum or could not be decoded; they were dropped and are "
                 "asked again")
        if method == "generate":  # answers that ended before another budget (see module)
            for k, t, r in zip(keys, texts, requests, strict=True):
                held = None if k in decoded else self.cache.ended_answer(self._model, t)
                if held is None or not self._whole_prompt(r, held[1]):
                    continue
                try:
                    decoded[k] = decode(json.loads(held[0]))
                    self.stats.regrown += 1
                except (ValueError, TypeError, KeyError, RecursionError):
                    pass
        out: list[Res | None] = [None] * len(requests)
        todo: dict[str, list[int]] = {}  # key → positions waiting for it (greedy duplicates)
        for i, k in enumerate(keys):
            if k in decoded:
                out[i] = decoded[k]
                if on_done:
                    on_done(i, decoded[k])
            else:
                todo.setdefault(k, []).append(i)
        self.stats.hits += len(requests) - sum(len(v) for v in todo.values())
        if not todo:
            return out  # type: ignore[return-value]
        firsts = [v[0] for v in todo.values()]
        saved: set[int] = set()

        def done(j: int, res: Res) -> None:
            i = firsts[j]
            if j in saved:
                return
            saved.add(j)
            self.cache.put(keys[i], self._model, method, texts[i], json.dumps(encode(res)))
            for pos in todo[keys[i]]:
                out[pos] = res
                if on_done:
                    on_done(pos, res)

        results = run([requests[i] for i in firsts], done)
        self.stats.misses += len(firsts)
        for j, res in enumerate(results):
            done(j, res)  # backends that report late or not at all
        return out  # type: ignore[return-value]

    def _whole_prompt(self, r: object, other: int) -> bool:
        """Whether generate request ``r``'s prompt fits the model's context whole beside both
        its budget and ``other``: a local backend cuts a prompt from the left to make room for
        the budget, and an answer to a cut prompt answers another question. Unknown context or
        token count: a server, which refuses such a request rather than cutting it."""
        ctx = self.inner.context_length()
        if ctx is None or not isinstance(r, GenerateRequest):
            return ctx is None
        n = self.inner.count_tokens(r.prompt)
        return n is None or n + 1 + max(r.max_tokens, other) <= ctx

    def generate(
        self, requests: Sequence[GenerateRequest], on_done: OnDone[GenerateResponse] | None = None
    ) -> list[GenerateResponse]:
        return self._call("generate", requests,
                          lambda rs, cb: call_inner(self.inner.generate, rs, cb),
                          dataclasses.asdict, _GENERATE, on_done)

    def loglikelihood(
        self,
        requests: Sequence[LoglikelihoodRequest],
        on_done: OnDone[LoglikelihoodResponse] | None = None,
    ) -> list[LoglikelihoodResponse]:
        return self._call("loglikelihood", requests,
                          lambda rs, cb: call_inner(self.inner.loglikelihood, rs, cb),
                          dataclasses.asdict, _LOGLIKELIHOOD, on_done)

    def loglikelihood_rolling(
        self, requests: Sequence[RollingRequest], on_done: OnDone[float] | None = None
    ) -> list[float]:
        return self._call("loglikelihood_rolling", requests,
                          lambda rs, cb: call_inner(self.inner.loglikelihood_rolling, rs, cb),
                          lambda x: x, decode_float, on_done)

    def close(self) -> None:
        self.inner.close()
        self.cache.close()


def call_inner(method: Callable[..., list[Res]], requests: list[Req],
               on_done: OnDone[Res] | None, chunk: int = 256) -> list[Res]:
    """Call a backend method with ``on_done``; a backend written before ``on_done`` existed is
    called in chunks instead, so finished work still reaches the cache as the run goes."""
    import inspect

    try:
        takes = "on_done" in inspect.signature(method).parameters
    except (TypeError, ValueError):
        takes = False
    if takes or on_done is None:
        return method(requests, on_done=on_done) if takes else method(requests)
    out: list[Res] = []
    for start in range(0, len(requests), chunk):
        part = method(requests[start : start + chunk])
        for j, res in enumerate(part):
            on_done(start + j, res)
        out.extend(part)
    return out
