"""Many sequences through one llama.cpp context, each fed what it does not already hold.

A ``Job`` is one sequence's ``entries`` of (token, position, logits wanted) and a consumer of
those logits (pick the next token, or add up log-probabilities). An entry whose position lies
before the end of what the sequence holds rewinds it there first: the choices of a multiple-
choice item are one job that feeds the context once, then each choice from where it leaves the
one before (the cells of the shared part are kept, the rest dropped).

The engine keeps up to ``rows`` jobs in flight, each in its own sequence of one KV cache of
``rows * max_length`` cells. Every ``llama_decode`` call carries one token of each generating
job and as many prompt tokens of the others as fit in ``n_batch``; a finished job frees its
sequence at once and the next job starts in it (continuous batching). A freed sequence keeps
its cells for the rest of the call: the next job placed in it (the free sequence holding the
longest common opening is chosen) feeds only what comes after that opening, so prompts that
share a token prefix (a template's instruction, shared exemplars) do not feed it again. Reused
cells hold exactly the tokens and positions the job would have fed; the position whose logits
it needs first is always fed.
"""

from __future__ import annotations

import ctypes
import os
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

import numpy as np

from harness.errors import HarnessError

OUTPUT_BYTES = 1 << 28  # logits (4 bytes x vocabulary per wanted position) one call may return
#: (token, position, logits wanted after it)
Entry: TypeAlias = "tuple[int, int, bool]"


class Consumer(Protocol):
    """What a job does with its logits."""

    def take(self, rows: np.ndarray) -> list[int]:
        """The wanted logits of one call (one row each, in entry order; a view valid until the
        next call) to the tokens to feed next (each with its logits wanted), or []."""


@dataclass
class Job:
    """``entries`` of one sequence and the ``consumer`` of their wanted logits; the job is done
    when nothing is left to feed."""

    key: int  # the caller's index
    entries: list[Entry]
    consumer: Consumer
    seq: int = -1
    queue: deque[Entry] = field(default_factory=deque)

    def opening(self) -> list[int]:
        """The tokens the job starts with, up to its first rewind or its first wanted logits."""
        out: list[int] = []
        for tok, pos, want in self.entries:
            if pos != len(out):
                break
            out.append(tok)
            if want:
                break
        return out


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
        # weights stay in plain CPU buffers: on a CPU that lists AMX, ggml puts quantized
        # weights (Q8_0, Q4_K, ...) in AMX buffers whose kernels died here with an illegal
        # instruction (a tile used unconfigured, even with the tile permission granted)
        mparams.use_extra_bufts = False
        self._model = llama_cpp.llama_model_load_from_file(path.encode(), mparams)
        if not self._model:
            raise HarnessError(f"{label}: llama.cpp could not load {path}")
        self.vocab = int(llama_cpp.llama_vocab_n_tokens(llama_cpp.llama_model_get_vocab(
            self._model)))
        self.n_ctx_train = int(llama_cpp.llama_model_n_ctx_train(self._model))
        self.rows = 0
        self.n_batch = 0
        self._held: list[list[int]] = []  # the tokens each sequence holds in the cache
        self.fed = 0  # tokens fed so far (for tests and benches)

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
        # one pool of cells for all sequences: llama.cpp then cuts a call into ubatches of up to
        # n_batch tokens; with a stream per sequence it cut a call into one ubatch per distinct
        # number of tokens a sequence had in it (each reading all weights: twice the CPU on
        # 0-shot multiple choice, bench/RESULTS.md)
        cparams.kv_unified = True
        cparams.swa_full = True  # sliding-window layers keep every cell: no position games
        cparams.no_perf = True
        self._ctx = llama_cpp.llama_init_from_model(self._model, cparams)
        if not self._ctx:
            raise HarnessError(f"{label}: llama.cpp could not create a context of "
                               f"{rows} x {max_length} tokens (use a smaller --batch-size "
                               "or --model-args max_length)")
        self._mem = llama_cpp.llama_get_memory(self._ctx)
        self._batch = llama_cpp.llama_batch_init(self.n_batch, 0, 1)
        self._held = [[] for _ in range(rows)]

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
        """Run every job to its end, calling ``done(job)`` as each one finishes. Cells are
        reused within a call only: what a call answers never depends on the calls before it."""
        self._clear()
        pending = deque(jobs)
        free = list(range(self.rows))
        live: list[Job] = []
        try:
            while pending or live:
                while pending and free:
                    job = pending.popleft()
                    self._place(job, free)
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
                        pos = job.entries[-1][1]
                        for tok in job.consumer.take(rows):
                            pos += 1
                            job.entries.append((tok, pos, True))
                            job.queue.append(job.entries[-1])
                for job, _ in taken:
                    if not job.queue:
                        free.append(job.seq)
                        live.remove(job)
                        done(job)
        finally:
            self._clear()

    def _clear(self) -> None:
        """Empty the KV cache."""
        self._ll.llama_memory_clear(self._mem, False)  # the cells, not their bytes
        self._held = [[] for _ in range(self.rows)]

    def _place(self, job: Job, free: list[int]) -> None:
        """Give *job* the free sequence whose cells hold most of its opening, drop from it what
        the job does not share, and queue the rest of its entries."""
        opening = job.opening()
        best = max(range(len(free)), key=lambda i: _common(self._held[free[i]], opening))
        job.seq = free.pop(best)
        # cells before the first position whose logits are wanted are reused; that one is fed
        first = next((e[1] for e in job.entries if e[2]), len(opening))
        keep = min(first, _common(self._held[job.seq], opening))
        self._rewind(job.seq, keep)
        job.queue = deque(job.entries[keep:])

    def _rewind(self, seq: int, pos: int) -> None:
        """Drop what *seq* holds from position *pos* on."""
        if len(self._held[seq]) > pos:
            self._ll.llama_memory_seq_rm(self._mem, seq, pos, -1)
            del self._held[seq][pos:]

    def _fill(self, live: list[Job]) -> list[tuple[Job, int]]:
        """Put the next tokens of the live jobs into the batch; (job, logits wanted) each. A job
        that rewinds waits for the next call when it already has tokens in this one."""
        b = self._batch
        n = 0
        taken: list[tuple[Job, int]] = []
        for job in live:
            if n == self.n_batch:
                break
            held = self._held[job.seq]
            wants = fed = 0
            while job.queue and n < self.n_batch:
                tok, pos, want = job.queue[0]
                if pos != len(held):
                    if fed:
                        break
                    self._rewind(job.seq, pos)
                job.queue.popleft()
                b.token[n] = tok
                b.pos[n] = pos
                b.n_seq_id[n] = 1
                b.seq_id[n][0] = job.seq
                b.logits[n] = want
                held.append(tok)
                wants += want
                fed += 1
                n += 1
            if fed:
                taken.append((job, wants))
        b.n_tokens = n
        self.fed += n
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


def _common(a: list[int], b: list[int]) -> int:
    """Length of the common prefix of two token lists."""
    return len(os.path.commonprefix([a, b]))


def log_softmax_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's log-sum-exp (float64) and argmax."""
    x = rows.astype(np.float64)
    top = x.max(axis=1)
    return top + np.log(np.exp(x - top[:, None]).sum(axis=1)), x.argmax(axis=1)
