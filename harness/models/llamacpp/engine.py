"""Many sequences through one llama.cpp context at a time.

A ``Job`` is one sequence: tokens to feed, which of their logits it wants, and what it does
with them (pick the next token, or add up log-probabilities). The engine keeps up to ``rows``
jobs in flight, each in its own sequence of the KV cache (``max_length`` cells each, so any
job fits), and every ``llama_decode`` call carries one token of each generating job and as many
prompt tokens of the others as fit in ``n_batch``: a finished job frees its sequence at once
and the next job starts in it (continuous batching), so a step costs what its live rows need.
The weights are read once per step for all of them.
"""

from __future__ import annotations

import ctypes
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from harness.errors import HarnessError

OUTPUT_BYTES = 1 << 28  # logits (4 bytes x vocabulary per wanted position) one call may return


class Consumer(Protocol):
    """What a job does with its logits."""

    def take(self, rows: np.ndarray) -> list[int]:
        """The wanted logits of one call (one row each, in order; a view valid until the next
        call) to the tokens to feed next (each with its logits wanted), or []."""


@dataclass
class Job:
    """One sequence: ``feed`` tokens with ``want`` flags (logits wanted after that token), and
    the ``consumer`` of those logits; the job is done when nothing is left to feed."""

    key: int  # the caller's index
    feed: list[int]
    want: list[bool]
    consumer: Consumer
    pos: int = 0
    seq: int = -1
    queue: deque[tuple[int, bool]] = field(default_factory=deque)


class Engine:
    """A loaded GGUF model; :meth:`start` gives it a context of ``rows`` sequences."""

    def __init__(self, llama_cpp: Any, path: str, label: str) -> None:
        self._ll = llama_cpp
        self._label = label
        self._ctx: Any = None
        self._batch: Any = None
        llama_cpp.llama_backend_init()
        mparams = llama_cpp.llama_model_default_params()
        mparams.n_gpu_layers = 0
        self._model = llama_cpp.llama_model_load_from_file(path.encode(), mparams)
        if not self._model:
            raise HarnessError(f"{label}: llama.cpp could not load {path}")
        self.vocab = int(llama_cpp.llama_vocab_n_tokens(llama_cpp.llama_model_get_vocab(
            self._model)))
        self.n_ctx_train = int(llama_cpp.llama_model_n_ctx_train(self._model))
        self.rows = 0
        self.n_batch = 0

    def meta(self, key: str) -> str | None:
        """A GGUF metadata value as text (None when the file has no such key)."""
        buf = ctypes.create_string_buffer(256)
        n = self._ll.llama_model_meta_val_str(self._model, key.encode(), buf, len(buf))
        return buf.value.decode("utf-8", "replace") if n >= 0 else None

    def start(self, rows: int, max_length: int, threads: int) -> None:
        """Make the context: ``rows`` sequences of ``max_length`` tokens, ``threads`` threads."""
        llama_cpp, label = self._ll, self._label
        self.rows = rows
        # tokens per call: the logits a call returns stay under OUTPUT_BYTES
        self.n_batch = max(32, min(512, OUTPUT_BYTES // (4 * self.vocab)))
        cparams = llama_cpp.llama_context_default_params()
        cparams.n_ctx = rows * -(-max_length // 256) * 256  # llama.cpp pads to 256 cells
        cparams.n_seq_max = rows
        cparams.n_batch = cparams.n_ubatch = self.n_batch
        cparams.n_threads = cparams.n_threads_batch = threads
        cparams.kv_unified = False  # each sequence attends to its own cells only
        cparams.swa_full = True  # sliding-window layers keep every cell: no position games
        cparams.no_perf = True
        self._ctx = llama_cpp.llama_init_from_model(self._model, cparams)
        if not self._ctx:
            raise HarnessError(f"{label}: llama.cpp could not create a context of "
                               f"{rows} x {max_length} tokens (use a smaller --batch-size "
                               "or --model-args max_length)")
        self._mem = llama_cpp.llama_get_memory(self._ctx)
        self._batch = llama_cpp.llama_batch_init(self.n_batch, 0, 1)

    def close(self) -> None:
        """Free the batch, the context and the model."""
        ll = self._ll
        if self._batch is not None:
            ll.llama_batch_free(self._batch)
            self._batch = None
        if self._ctx:
            ll.llama_free(self._ctx)
            self._ctx = None
        if self._model:
            ll.llama_model_free(self._model)
            self._model = None

    def run(self, jobs: Iterable[Job], done: Callable[[Job], None]) -> None:
        """Run every job to its end, calling ``done(job)`` as each one finishes."""
        pending = deque(jobs)
        free = list(range(self.rows - 1, -1, -1))
        live: list[Job] = []
        try:
            while pending or live:
                while pending and free:
                    job = pending.popleft()
                    job.seq, job.pos = free.pop(), 0
                    job.queue = deque(zip(job.feed, job.want, strict=True))
                    if not job.queue:
                        free.append(job.seq)
                        done(job)
                        continue
                    live.append(job)
                if not live:
                    continue
                # one token for each job that generates, then prompt tokens while they fit
                live.sort(key=lambda j: len(j.queue) > 1)
                taken = self._fill(live)
                self._decode()
                out = 0
                for job, wants in taken:
                    if wants:
                        rows = self._logits(out, wants)
                        out += wants
                        job.queue.extend((t, True) for t in job.consumer.take(rows))
                for job, _ in taken:
                    if not job.queue:
                        self._ll.llama_memory_seq_rm(self._mem, job.seq, -1, -1)
                        free.append(job.seq)
                        live.remove(job)
                        done(job)
        finally:
            for job in live:  # an error or interrupt: leave the cache empty for the next call
                self._ll.llama_memory_seq_rm(self._mem, job.seq, -1, -1)

    def _fill(self, live: list[Job]) -> list[tuple[Job, int]]:
        """Put the next tokens of the live jobs into the batch; (job, logits wanted) each."""
        b = self._batch
        n = 0
        taken: list[tuple[Job, int]] = []
        for job in live:
            if n == self.n_batch:
                break
            wants = 0
            while job.queue and n < self.n_batch:
                tok, want = job.queue.popleft()
                b.token[n] = tok
                b.pos[n] = job.pos
                b.n_seq_id[n] = 1
                b.seq_id[n][0] = job.seq
                b.logits[n] = want
                job.pos += 1
                wants += want
                n += 1
            taken.append((job, wants))
        b.n_tokens = n
        return taken

    def _decode(self) -> None:
        code = self._ll.llama_decode(self._ctx, self._batch)
        if code != 0:
            raise HarnessError(f"{self._label}: llama_decode failed (code {code}); try a "
                               "smaller --batch-size or --model-args max_length")

    def _logits(self, first: int, count: int) -> np.ndarray:
        """Rows ``first .. first+count-1`` of this call's logits (a view: use before the next
        call)."""
        ptr = self._ll.llama_get_logits(self._ctx)
        base = ctypes.cast(ptr, ctypes.c_void_p).value or 0
        start = ctypes.cast(base + 4 * first * self.vocab, ctypes.POINTER(ctypes.c_float))
        return np.ctypeslib.as_array(start, shape=(count, self.vocab))


def log_softmax_at(rows: np.ndarray, targets: list[int]) -> tuple[float, bool]:
    """Sum of the log-probabilities of *targets* under *rows* (float64), and whether each is
    its row's argmax."""
    x = rows.astype(np.float64)
    top = x.max(axis=1)
    lse = top + np.log(np.exp(x - top[:, None]).sum(axis=1))
    idx = np.arange(len(targets))
    picked = x[idx, targets]
    greedy = bool(np.all(x.argmax(axis=1) == np.asarray(targets)))
    return float((picked - lse).sum()), greedy
