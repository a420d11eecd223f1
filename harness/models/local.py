"""The base of the backends that run the model here and tokenize prompts themselves (hf, vllm),
so that both feed a model the same tokens.

Text is tokenized without special tokens and BOS is put in front when the tokenizer would add it
by default (or ``add_bos_token=true``), unless the text already starts with it (chat-template
output). Scoring conditions the first token on BOS when the tokenizer has one; without BOS the
first token of a text with empty context cannot be scored and is skipped. A loglikelihood request
scores the tokens from the first one whose end offset lies past the context, so a token that
merges the end of the context with the start of the continuation is scored. Importing this
module imports neither torch nor a model library.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from harness.errors import HarnessError
from harness.lm import LM, OnDone, render_chat
from harness.models.support import first_line
from harness.requests import (
    GenerateRequest,
    LoglikelihoodRequest,
    LoglikelihoodResponse,
    RollingRequest,
)
from harness.spec.chat import ChatTurn

log = logging.getLogger(__name__)

Row = tuple[list[int], int]  # token ids, number of tokens at the end to score


class LocalLM(LM):
    """An ``LM`` holding a Hugging Face tokenizer: tokenization, BOS handling, prompt cutting,
    scoring rows, token counts and the chat template, the same for every local backend.

    A subclass sets ``max_length`` and calls :meth:`_init_tokens` once it has its tokenizer."""

    _label: str  # how messages name the model, e.g. "hf:smollm2-135m"
    max_length: int  # most tokens the model takes (prompt and continuation)

    def _describe(self, e: BaseException) -> str:
        """An exception from the tokenizer in one line."""
        return first_line(e)

    def _init_tokens(self, tok: Any, gen_eos: Any, add_bos_token: bool | None) -> None:
        """Take *tok*; *gen_eos* is the generation config's ``eos_token_id`` (an id, a list of
        ids or None), *add_bos_token* the user's choice (None: what the tokenizer does)."""
        self._tok: Any = tok
        self._bos: int | None = tok.bos_token_id
        eos: set[int] = {tok.eos_token_id} if tok.eos_token_id is not None else set()
        eos |= set(gen_eos if isinstance(gen_eos, list) else [] if gen_eos is None else [gen_eos])
        self._eos = eos
        # does the tokenizer put BOS in front by itself? (then so do we)
        bos = [self._bos] if self._bos is not None else []
        default_bos = (
            bool(bos)
            and tok("a").input_ids[:1] == bos != tok("a", add_special_tokens=False).input_ids[:1]
        )
        self._add_bos = default_bos if add_bos_token is None else add_bos_token
        self._cache: dict[str, tuple[list[int], list[tuple[int, int]]]] = {}
        self._prompts: dict[tuple[str, int], list[int]] = {}

    # -- tokenization -------------------------------------------------------------------------

    def _encode(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """Token ids (no special tokens added) and character offsets, cached per string (no
        offsets from a slow tokenizer)."""
        if text not in self._cache:
            fast = bool(getattr(self._tok, "is_fast", True))
            enc = self._tok(text, add_special_tokens=False, return_offsets_mapping=fast)
            offsets = [(int(a), int(b)) for a, b in enc["offset_mapping"]] if fast else []
            self._cache[text] = (list(enc["input_ids"]), offsets)
        return self._cache[text]

    def _with_bos(self, ids: list[int], force: bool = False) -> list[int]:
        if self._bos is not None and (force or self._add_bos) and ids[:1] != [self._bos]:
            return [self._bos, *ids]
        return ids

    def _decode(self, ids: list[int]) -> str:
        return str(self._tok.decode(ids, skip_special_tokens=True))

    def count_tokens(self, text: str) -> int | None:
        """Tokens of ``text`` without special tokens."""
        return len(self._tok(text, add_special_tokens=False)["input_ids"])

    def context_length(self) -> int | None:
        """The engine's context window (``max_length``, set by each backend)."""
        value = getattr(self, "max_length", None)
        return value if isinstance(value, int) else None

    def apply_chat_template(self, turns: Sequence[ChatTurn]) -> str:
        """Render *turns* with the tokenizer's chat template, opening the assistant's turn."""
        return render_chat(self._tok, turns, self._label, self._describe)

    # -- generation ---------------------------------------------------------------------------

    def _start_generate(self, requests: Sequence[GenerateRequest]) -> None:
        """Forget the last call's tokenizations and check every request's ``max_tokens``."""
        self._cache.clear()
        self._prompts.clear()
        for r in requests:
            if not 1 <= r.max_tokens < self.max_length:
                raise HarnessError(
                    f"max_tokens must be in 1..{self.max_length - 1}: {r.max_tokens}"
                )

    def _prompt_ids(self, req: GenerateRequest) -> list[int]:
        """The prompt's tokens, cut from the left (BOS kept) to leave room for ``max_tokens``."""
        key = (req.prompt, req.max_tokens)
        if key not in self._prompts:
            ids = self._encode(req.prompt)[0]
            ids = self._with_bos(ids, force=not ids)
            if not ids:
                raise HarnessError(f"{self._label}: cannot generate from an empty prompt")
            limit = self.max_length - req.max_tokens
            if len(ids) > limit:
                log.warning("prompt of %d tokens cut from the left to %d", len(ids), limit)
                keep = ids[:1] if ids[:1] == [self._bos] and limit > 1 else []
                ids = keep + ids[len(ids) - limit + len(keep) :]
            self._prompts[key] = ids
        return self._prompts[key]

    # -- scoring ------------------------------------------------------------------------------

    def _window(self) -> int:
        """Most tokens one row can score."""
        return self.max_length

    def loglikelihood(
        self,
        requests: Sequence[LoglikelihoodRequest],
        on_done: OnDone[LoglikelihoodResponse] | None = None,
    ) -> list[LoglikelihoodResponse]:
        """Sum of log-probabilities of the tokens that carry continuation characters (the
        first scored token is the first whose end offset lies past the context, so a token that
        merges the end of the context with the start of the continuation is scored). Each
        distinct request is scored once, by the engine's ``_score``."""
        unique, rows, where = self._loglikelihood_rows(requests)
        by_req: dict[LoglikelihoodRequest, LoglikelihoodResponse] = {}

        def done(j: int, lp: float, greedy: bool) -> None:
            resp = LoglikelihoodResponse(logprob=lp, is_greedy=greedy, n_tokens=rows[j][1])
            by_req[unique[j]] = resp
            if on_done:
                for i in where[unique[j]]:
                    on_done(i, resp)

        self._score(rows, done)
        return [by_req[r] for r in requests]

    def _score(self, rows: list[Row], done: Callable[[int, float, bool], None]) -> None:
        """Score each row (its last tokens' summed log-probability and whether they are the
        greedy ones), calling ``done(row index, logprob, is_greedy)`` as each finishes."""
        raise NotImplementedError(f"{type(self).__name__} scores through its own loglikelihood")

    def _loglikelihood_rows(
        self, requests: Sequence[LoglikelihoodRequest]
    ) -> tuple[list[LoglikelihoodRequest], list[Row], dict[LoglikelihoodRequest, list[int]]]:
        """The distinct requests (sorted), the row of each, and where each one stands in
        *requests*."""
        self._cache.clear()
        if requests and not getattr(self._tok, "is_fast", True):
            raise HarnessError(f"{self._label}: loglikelihood needs a fast tokenizer (offsets)")
        unique = sorted(set(requests), key=lambda r: (r.context, r.continuation))
        where: dict[LoglikelihoodRequest, list[int]] = {}
        for i, r in enumerate(requests):
            where.setdefault(r, []).append(i)
        return unique, [self._ll_row(r) for r in unique], where

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

    def _rolling_rows(self, requests: Sequence[RollingRequest]) -> tuple[list[Row], list[int]]:
        """Each text's tokens (after BOS) in disjoint windows of ``_window()`` predictions, each
        fed the token just before it; and the request each row belongs to."""
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
        return rows, owners
