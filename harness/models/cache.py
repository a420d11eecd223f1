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

The database lives in the user cache directory (``platformdirs``), never inside the installed
package; WAL mode lets concurrent runs share it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from harness.errors import HarnessError
from harness.models.base import LM, ModelIdentity, OnDone, WrapperLM
from harness.requests import (
    GenerateRequest,
    GenerateResponse,
    LoglikelihoodRequest,
    LoglikelihoodResponse,
    RollingRequest,
)

DB_NAME = "responses.sqlite"
CACHE_ENV = "GENHARNESS_RESPONSE_CACHE"
# Backend arguments that change how fast a model answers, not what it answers.
OPERATIONAL_ARGS = frozenset({
    "max_concurrency", "timeout", "max_retries", "api_key_env", "backoff", "batch_size",
    "gpu_memory_utilization", "tensor_parallel_size", "data_parallel_size",
    "pipeline_parallel_size", "swap_space", "device_map", "max_backoff",
})

Req = TypeVar("Req")
Res = TypeVar("Res")


def default_cache_dir() -> Path:
    """``$GENHARNESS_RESPONSE_CACHE``, else ``responses/`` in the harness cache folder
    (``$GENHARNESS_CACHE_DIR`` or the platform's user cache folder for genharness)."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    from harness.models.aliases import cache_dir

    return cache_dir() / "responses"


def model_key(identity: ModelIdentity) -> str:
    """Canonical JSON of the identity fields that decide what a model answers."""
    fields = {
        "backend": identity.backend, "name": identity.name, "path": identity.path,
        "revision": identity.revision, "weights_sha256": identity.weights_sha256,
        "dtype": identity.dtype,
        "args": {k: v for k, v in sorted(identity.args.items()) if k not in OPERATIONAL_ARGS},
    }
    return json.dumps(fields, sort_keys=True, separators=(",", ":"))


def _request_json(method: str, req: object, occurrence: int) -> str:
    body: dict[str, Any] = {"method": method, **dataclasses.asdict(req)}  # type: ignore[call-overload]
    if occurrence:
        body["occurrence"] = occurrence
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass
class CacheStats:
    """Counts for one run (reported in results.json under ``cache``)."""

    hits: int = 0  # requests answered from the cache
    misses: int = 0  # requests sent to the model (= model calls this run)


class ResponseCache:
    """One SQLite file of responses; safe to share between processes and threads."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / DB_NAME
        try:
            directory.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=60, check_same_thread=False,
                                       isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT NOT NULL,"
                " method TEXT NOT NULL, request TEXT NOT NULL, response TEXT NOT NULL,"
                " created REAL NOT NULL)"
            )
        except (OSError, sqlite3.Error) as e:
            raise HarnessError(f"--cache-dir: cannot use {self.path}: {e}") from e
        self._lock = threading.Lock()

    @staticmethod
    def key(model: str, request_json: str) -> str:
        """The row key: sha256 of the model key and the request JSON."""
        return hashlib.sha256(f"{model}\n{request_json}".encode()).hexdigest()

    def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        """Stored responses (JSON text) for those keys that have one."""
        found: dict[str, str] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                part = list(keys[start : start + 500])
                marks = ",".join("?" * len(part))
                rows = self._db.execute(
                    f"SELECT key, response FROM responses WHERE key IN ({marks})", part
                )
                found.update(dict(rows.fetchall()))
        return found

    def put(self, key: str, model: str, method: str, request: str, response: str) -> None:
        """Store one response and commit at once (it survives the process being killed)."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?)",
                (key, model, method, request, response, time.time()),
            )

    def info(self) -> dict[str, Any]:
        """Path, size, and response counts per model and method."""
        with self._lock:
            rows = self._db.execute(
                "SELECT model, method, COUNT(*) FROM responses GROUP BY model, method"
            ).fetchall()
        size = sum(p.stat().st_size for p in self.path.parent.glob(DB_NAME + "*"))
        return {"path": str(self.path), "bytes": size,
                "entries": [{"model": json.loads(m), "method": k, "count": n}
                            for m, k, n in rows]}

    def clear(self, model_substring: str | None = None) -> int:
        """Delete all responses, or those whose model key contains *model_substring*."""
        with self._lock:
            if model_substring is None:
                cur = self._db.execute("DELETE FROM responses")
            else:
                cur = self._db.execute("DELETE FROM responses WHERE instr(model, ?) > 0",
                                       (model_substring,))
            n = cur.rowcount
            self._db.execute("VACUUM")
        return n

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()


class CachedLM(WrapperLM):
    """Wraps a backend: answers what the cache holds, sends the rest, stores each as it ends."""

    def __init__(self, inner: LM, cache: ResponseCache) -> None:
        super().__init__(inner)
        self.cache = cache
        self.stats = CacheStats()
        self._model = model_key(inner.identity)

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
        stored = self.cache.get_many(keys)
        out: list[Res | None] = [None] * len(requests)
        todo: dict[str, list[int]] = {}  # key → positions waiting for it (greedy duplicates)
        for i, k in enumerate(keys):
            if k in stored:
                out[i] = decode(json.loads(stored[k]))
                if on_done:
                    on_done(i, out[i])  # type: ignore[arg-type]
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

    def generate(
        self, requests: Sequence[GenerateRequest], on_done: OnDone[GenerateResponse] | None = None
    ) -> list[GenerateResponse]:
        return self._call("generate", requests,
                          lambda rs, cb: call_inner(self.inner.generate, rs, cb),
                          dataclasses.asdict, lambda d: GenerateResponse(**d), on_done)

    def loglikelihood(
        self,
        requests: Sequence[LoglikelihoodRequest],
        on_done: OnDone[LoglikelihoodResponse] | None = None,
    ) -> list[LoglikelihoodResponse]:
        return self._call("loglikelihood", requests,
                          lambda rs, cb: call_inner(self.inner.loglikelihood, rs, cb),
                          dataclasses.asdict, lambda d: LoglikelihoodResponse(**d), on_done)

    def loglikelihood_rolling(
        self, requests: Sequence[RollingRequest], on_done: OnDone[float] | None = None
    ) -> list[float]:
        return self._call("loglikelihood_rolling", requests,
                          lambda rs, cb: call_inner(self.inner.loglikelihood_rolling, rs, cb),
                          lambda x: x, float, on_done)

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
