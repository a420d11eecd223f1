"""Data parallelism: N replicas of a model in N worker processes share each call's requests.

``harness eval --data-parallel N`` loads the model once per worker (worker *r* sees GPU *r* when
GPUs are present: it gets the r-th entry of ``CUDA_VISIBLE_DEVICES``, or ``r``), splits every
call's requests between them, and gathers the responses in the caller's order. Requests are
dealt round-robin in length order, so every worker gets a similar mix of long and short ones.
Each response is reported through ``on_done`` as soon as its worker sends it, so the response
cache keeps finished work even if a worker dies.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
from collections.abc import Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, Literal

from harness.errors import HarnessError
from harness.lm import LM, ModelIdentity, OnDone
from harness.process import end_process
from harness.requests import (
    AskedItem,
    GenerateRequest,
    GenerateResponse,
    LoglikelihoodRequest,
    LoglikelihoodResponse,
    RollingRequest,
)
from harness.spec.chat import ChatTurn


def _visible_device(rank: int) -> str:
    visible = [d for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    return visible[rank % len(visible)] if visible else str(rank)


def _worker(spec: str, model_args: dict[str, str], batch_size: int | Literal["auto"],
            rank: int, world: int, conn: Connection) -> None:
    """Load the model, then answer ``(method, payload)`` messages until told to stop."""
    os.environ["CUDA_VISIBLE_DEVICES"] = _visible_device(rank)
    try:
        import torch

        torch.set_num_threads(max(1, (os.cpu_count() or 1) // world))
    except ImportError:
        pass
    from harness.models.backends import load_model

    try:
        model = load_model(spec, model_args, batch_size)
    except HarnessError as e:
        conn.send(("error", str(e)))
        return
    conn.send(("ready", model.identity.model_dump(mode="json")))
    while True:
        try:
            method, payload = conn.recv()
        except (EOFError, OSError):  # the parent is gone
            break
        if method == "stop":
            break
        try:
            if method == "count_tokens":
                conn.send(("value", model.count_tokens(payload)))
            elif method == "context_length":
                conn.send(("value", model.context_length()))
            elif method == "apply_chat_template":
                conn.send(("value", model.apply_chat_template(payload)))
            elif method == "announce":  # every worker is told every item (LM.announce)
                model.announce(payload)
                conn.send(("value", None))
            elif method == "listens":  # whether the backend uses announce (else not sent)
                hook = getattr(type(model), "announce", None)
                conn.send(("value", hook is not None and hook is not LM.announce))
            else:
                def report(i: int, res: Any) -> None:
                    conn.send(("done", i, res))

                conn.send(("value", getattr(model, method)(payload, on_done=report)))
        except HarnessError as e:
            conn.send(("error", str(e)))
        except Exception as e:  # anything else: one line back to the parent, worker stays up
            conn.send(("error", f"{type(e).__name__}: {e}"))
    model.close()
    end_process(0)  # as the harness command does: no interpreter teardown after a model


def _length(req: object) -> int:
    if isinstance(req, GenerateRequest):
        return len(req.prompt)
    if isinstance(req, LoglikelihoodRequest):
        return len(req.context) + len(req.continuation)
    return len(getattr(req, "text", ""))


class DataParallelLM(LM):
    """A model replicated in ``world`` worker processes."""

    def __init__(self, spec: str, model_args: dict[str, str],
                 batch_size: int | Literal["auto"], world: int) -> None:
        ctx = mp.get_context("spawn")
        self._conns: list[Connection] = []
        self._procs: list[Any] = []
        for rank in range(world):
            parent, child = ctx.Pipe()
            # not daemonic: backends such as vLLM start processes of their own
            proc = ctx.Process(target=_worker, daemon=False,
                               args=(spec, model_args, batch_size, rank, world, child))
            proc.start()
            child.close()
            self._conns.append(parent)
            self._procs.append(proc)
        identities = [self._receive(r, "ready") for r in range(world)]
        self._identity = ModelIdentity.model_validate(identities[0])
        self._listens: bool | None = None  # the backend uses LM.announce (asked on first use)

    def _receive(self, rank: int, want: str) -> Any:
        try:
            msg = self._conns[rank].recv()
        except (EOFError, OSError):
            code = self._procs[rank].exitcode
            self.close()
            raise HarnessError(
                f"--data-parallel: worker {rank} died (exit code {code}); "
                "out of memory? try fewer workers or a smaller --batch-size"
            ) from None
        if msg[0] == "error":
            self.close()
            raise HarnessError(msg[1])
        if msg[0] != want:  # pragma: no cover - protocol bug
            raise HarnessError(f"--data-parallel: worker {rank} sent {msg[0]!r}, not {want!r}")
        return msg[1]

    @property
    def identity(self) -> ModelIdentity:
        return self._identity

    def _call(self, method: str, requests: Sequence[Any], on_done: OnDone[Any] | None) -> list[Any]:
        world = len(self._conns)
        order = sorted(range(len(requests)), key=lambda i: (-_length(requests[i]), i))
        shards = [order[r::world] for r in range(world)]
        for r, shard in enumerate(shards):
            self._conns[r].send((method, [requests[i] for i in shard]))
        out: list[Any] = [None] * len(requests)
        waiting = set(range(world))
        while waiting:
            ready = wait([self._conns[r] for r in waiting])
            for r in [r for r in waiting if self._conns[r] in ready]:
                try:
                    msg = self._conns[r].recv()
                except (EOFError, OSError):
                    msg = None
                if msg is None or msg[0] == "error":
                    code = self._procs[r].exitcode
                    self.close()
                    why = msg[1] if msg else f"worker {r} died (exit code {code})"
                    raise HarnessError(f"--data-parallel: {why}")
                if msg[0] == "done":
                    i = shards[r][msg[1]]
                    out[i] = msg[2]
                    if on_done:
                        on_done(i, msg[2])
                else:
                    results: list[Any] = msg[1]
                    for j, res in enumerate(results):
                        out[shards[r][j]] = res
                    waiting.discard(r)
        return out

    def generate(
        self, requests: Sequence[GenerateRequest], on_done: OnDone[GenerateResponse] | None = None
    ) -> list[GenerateResponse]:
        return self._call("generate", requests, on_done)

    def loglikelihood(
        self,
        requests: Sequence[LoglikelihoodRequest],
        on_done: OnDone[LoglikelihoodResponse] | None = None,
    ) -> list[LoglikelihoodResponse]:
        return self._call("loglikelihood", requests, on_done)

    def loglikelihood_rolling(
        self, requests: Sequence[RollingRequest], on_done: OnDone[float] | None = None
    ) -> list[float]:
        return self._call("loglikelihood_rolling", requests, on_done)

    def _ask(self, method: str, payload: Any) -> Any:
        self._conns[0].send((method, payload))
        return self._receive(0, "value")

    def count_tokens(self, text: str) -> int | None:
        value: int | None = self._ask("count_tokens", text)
        return value

    def context_length(self) -> int | None:
        value: int | None = self._ask("context_length", None)
        return value

    def apply_chat_template(self, turns: Sequence[ChatTurn]) -> str:
        return str(self._ask("apply_chat_template", list(turns)))

    def announce(self, items: Sequence[AskedItem]) -> None:
        """Every worker is told every item: any of them may be asked any of its prompts (only
        where the backend uses them: most ignore the hook, and are spared the copies)."""
        if self._listens is None:
            self._listens = bool(self._ask("listens", None))
        if not self._listens:
            return
        payload = list(items)
        for conn in self._conns:
            conn.send(("announce", payload))
        for r in range(len(self._conns)):
            self._receive(r, "value")

    def close(self) -> None:
        for conn, proc in zip(self._conns, self._procs, strict=True):
            if proc.is_alive():
                with contextlib.suppress(OSError):
                    conn.send(("stop", None))
        for proc in self._procs:
            proc.join(timeout=30)
            if proc.is_alive():
                proc.terminate()
        self._procs = [p for p in self._procs if p.is_alive()]
        self._conns = self._conns[: len(self._procs)]
