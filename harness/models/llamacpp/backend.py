"""llama.cpp backend: ``llamacpp:NAME``, NAME a built-in alias or a path to a ``.gguf`` file.

The GGUF file runs in llama.cpp (llama-cpp-python's C API, CPU); prompts are tokenized by the
code every local backend shares (:mod:`harness.models.local`) with the model's Hugging Face
tokenizer, so ``hf:`` and ``llamacpp:`` feed the model the same tokens. Which file runs, and
at which weight type: :mod:`harness.models.llamacpp.weights`.

- generation: greedy (argmax of the logits; temperature > 0 samples from them with a seed
  derived from the prompt), each row stopped on its own at eos, its token limit, a stop
  string in its decoded tail or where its answer is settled (``GenerateRequest.until``);
- loglikelihood: the sum of the log-probabilities (float64 log-softmax of llama.cpp's logits)
  of the tokens that carry continuation characters, as in ``hf:``; ``is_greedy`` when each is
  its position's argmax;
- loglikelihood_rolling: disjoint windows of ``max_length`` predictions, as in ``hf:``.

Every call runs its rows through one context of ``--batch-size`` sequences (auto: 8), new rows
taking the place of finished ones (:mod:`harness.models.llamacpp.engine`). The choices of a
multiple-choice item are one sequence: the context is fed once and each choice continues from
where it parts from the one before; a row placed in a sequence that already holds its opening
(a shared instruction or exemplars) feeds only the rest.
``--model-args``: ``threads`` (default: the cores this process may use), ``max_length``
(tokens per sequence; default the model's context, at most 8192), ``dtype`` (``f16``, ``f32``,
``bf16``, ``q8_0``: the weight type an alias is converted to), ``add_bos_token``.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeAlias

import numpy as np

from harness.errors import HarnessError, ModelLoadError, did_you_mean
from harness.lm import LM, ModelIdentity, OnDone
from harness.models.gguf import quiet_progress
from harness.models.llamacpp.engine import Engine, Entry, Job, log_softmax_rows
from harness.models.llamacpp.weights import CONVERTED, import_llama_cpp, resolve
from harness.models.local import LocalLM, Row
from harness.models.support import bad_arg, first_line, parse_bool, settled, trim_at_stop
from harness.requests import (
    GenerateRequest,
    GenerateResponse,
    RollingRequest,
)

log = logging.getLogger(__name__)
Args: TypeAlias = "dict[str, str]"
Size: TypeAlias = "int | Literal['auto']"

ACCEPTED_ARGS = ("threads", "max_length", "dtype", "add_bos_token")
AUTO_ROWS = 8  # sequences in flight when --batch-size is auto
MAX_LENGTH_CAP = 8192  # as hf: the default max_length is the model's context, at most this
# how results label a shipped 4-bit file run as it is (bench/RESULTS.md: 16-20% of the greedy
# texts on a sample of the board's tasks differ from the same weights at full precision)
CHANGES_ANSWERS = " (shipped 4-bit weights: changes answers)"
# the engine's distribution: its version is results.json ``environment.libraries``'s, never the
# model's ``revision`` (results before that put "llama-cpp-python 0.3.36" there)
ENGINE = "llama-cpp-python"


def recorded_engine(model: dict[str, Any]) -> str | None:
    """A recorded model's engine: its ``engine``, or for an older ``llamacpp:`` result the
    engine version it recorded as its revision."""
    rev = model.get("revision")
    if model.get("engine") is None and isinstance(rev, str) and rev.startswith(f"{ENGINE} "):
        return rev
    engine = model.get("engine")
    return engine if isinstance(engine, str) else None


def model_revision(revision: str | None) -> str | None:
    """A recorded ``model.revision`` as a model revision: None for the engine version an older
    ``llamacpp:`` result recorded there (``"llama-cpp-python 0.3.36"``), which names no model."""
    return None if revision is not None and revision.startswith(f"{ENGINE} ") else revision


def _positive(args: Args, key: str, least: int) -> int | None:
    value = args.get(key)
    if value is None:
        return None
    if not (value.isdigit() and int(value) >= least):
        raise bad_arg(key, f"an integer >= {least}", value)
    return int(value)


class LlamaCppModel(LocalLM):
    """A GGUF model run by llama.cpp on the CPU."""

    def __init__(self, name: str, model_args: Args | None = None, batch_size: Size = 1) -> None:
        if batch_size != "auto" and (not isinstance(batch_size, int) or batch_size < 1):
            raise HarnessError(
                f"--batch-size: expected a positive integer or 'auto': {batch_size!r}"
            )
        self._args = dict(model_args or {})
        for key in sorted(set(self._args) - set(ACCEPTED_ARGS)):
            raise HarnessError(
                f"--model-args: unknown key {key!r}{did_you_mean(key, ACCEPTED_ARGS)} for "
                f"llamacpp; accepted: {', '.join(ACCEPTED_ARGS)}"
            )
        dtype = self._args.get("dtype")
        if dtype is not None and dtype not in CONVERTED:
            raise bad_arg("dtype", f"one of {', '.join(CONVERTED)}", dtype)
        threads = _positive(self._args, "threads", 1) or len(os.sched_getaffinity(0))
        max_length = _positive(self._args, "max_length", 2)
        bos = self._args.get("add_bos_token")
        self._name = name
        self._label = f"llamacpp:{name}"
        llama_cpp = import_llama_cpp(name)
        weights = resolve(name, dtype)
        self.changes_answers = weights.changes_answers
        if weights.changes_answers:
            # the figure is SmolLM2's and Gemma's (bench/RESULTS.md); Qwen has no such reference
            log.warning("%s runs the shipped 4-bit file, which changes answers (its kernels "
                        "round activations to 8 bits: 16-20%% of greedy texts differed from full "
                        "precision for SmolLM2 and Gemma); llamacpp:%s runs it at F16",
                        self._label, name.rsplit("-", 1)[0])
        tok = _tokenizer(name, *weights.tokenizer)
        rows = AUTO_ROWS if batch_size == "auto" else batch_size
        self._engine = Engine(llama_cpp, str(weights.gguf), self._label)
        try:
            self.max_length = max_length or min(self._engine.n_ctx_train or 2048,
                                                MAX_LENGTH_CAP)
            self._engine.start(rows, self.max_length, threads)
            self._init_tokens(tok, None,
                              None if bos is None else parse_bool("add_bos_token", bos))
        except BaseException:
            self.close()
            raise
        self._identity = ModelIdentity(
            backend="llamacpp",
            name=name,
            path=weights.path,
            revision=None,  # a local GGUF file has none
            engine=f"{ENGINE} {getattr(llama_cpp, '__version__', '?')}",
            weights_sha256=weights.sha256,
            dtype=_file_type(llama_cpp, self._engine.meta("general.file_type"))
            + (CHANGES_ANSWERS if weights.changes_answers else ""),
            device="cpu",
            args=self._args,
        )

    @property
    def identity(self) -> ModelIdentity:
        """Identity of the loaded model (``dtype`` is the GGUF's weight type, e.g. F16)."""
        return self._identity

    # -- generation ---------------------------------------------------------------------------

    def generate(
        self, requests: Sequence[GenerateRequest], on_done: OnDone[GenerateResponse] | None = None
    ) -> list[GenerateResponse]:
        """Continue each prompt; each row stops on its own (see the module docstring)."""
        self._start_generate(requests)
        out: dict[int, GenerateResponse] = {}
        seen: dict[str, int] = {}
        jobs = []
        for k, r in enumerate(requests):
            seen[r.prompt] = seen.get(r.prompt, -1) + 1
            jobs.append(self._generation(k, r, seen[r.prompt]))

        def finish(job: Job) -> None:
            assert isinstance(job.consumer, _Generation)
            toks = job.consumer.tokens
            resp = GenerateResponse(trim_at_stop(self._decode(toks), requests[job.key].stop),
                                    len(toks))
            out[job.key] = resp
            if on_done:
                on_done(job.key, resp)

        # longest prompts first, as hf: a long prompt does not start last and run alone
        order = sorted(jobs, key=lambda j: -len(j.entries))
        self._engine.run(order, finish)
        return [out[k] for k in range(len(requests))]

    def _generation(self, key: int, req: GenerateRequest, occurrence: int) -> Job:
        prompt = self._prompt_ids(req)
        state = _Generation(req, self._eos, self._decode, occurrence)
        last = len(prompt) - 1
        return Job(key, [(t, p, p == last) for p, t in enumerate(prompt)], state)

    # -- scoring ------------------------------------------------------------------------------

    def loglikelihood_rolling(
        self, requests: Sequence[RollingRequest], on_done: OnDone[float] | None = None
    ) -> list[float]:
        """Log-probability of each whole text, in disjoint windows of ``max_length``."""
        rows, owners = self._rolling_rows(requests)
        totals = [0.0] * len(requests)

        def done(j: int, lp: float, greedy: bool) -> None:
            totals[owners[j]] += lp

        self._score(rows, done)
        return totals

    def _score(self, rows: list[Row], done: Callable[[int, float, bool], None]) -> None:
        """Rows with the same context (a multiple-choice item's choices) run as one job: the
        context is fed once and each choice continues from it."""
        groups: dict[tuple[int, ...], list[int]] = {}
        for j, (toks, n) in enumerate(rows):
            if n == 0:
                done(j, 0.0, True)
            else:
                groups.setdefault(tuple(toks[: len(toks) - n]), []).append(j)
        jobs = [_scoring_job(k, [rows[j] for j in members], members)
                for k, members in enumerate(groups.values())]

        def finish(job: Job) -> None:
            assert isinstance(job.consumer, _Scoring)
            for j, lp, greedy in job.consumer.results():
                done(j, lp, greedy)

        # in token order: a job meets the opening it shares with the one before it
        self._engine.run(sorted(jobs, key=lambda j: [e[0] for e in j.entries]), finish)

    def close(self) -> None:
        """Free llama.cpp's model and context."""
        engine = getattr(self, "_engine", None)
        if engine is not None:
            engine.close()


class _Generation:
    """One generating row: the next token from each step's logits, until a stop."""

    def __init__(self, req: GenerateRequest, eos: set[int], decode: Callable[[list[int]], str],
                 occurrence: int) -> None:
        self.req = req
        self.eos = eos
        self.decode = decode
        self.stops = [s for s in req.stop if s]
        # a stop string ends in the newest token and spans at most ~4 tokens per character
        self.window = 4 * max((len(s) for s in self.stops), default=0) + 8
        self.tokens: list[int] = []
        self.rng = None
        if req.temperature > 0:
            digest = hashlib.sha256(f"{occurrence}\0{req.prompt}".encode()).digest()
            self.rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))

    def take(self, rows: np.ndarray) -> list[int]:
        row = rows[-1]
        if self.rng is None:
            tok = int(row.argmax())
        else:
            x = row.astype(np.float64) / self.req.temperature
            p = np.exp(x - x.max())
            tok = int(self.rng.choice(len(p), p=p / p.sum()))
        if tok in self.eos:
            return []
        self.tokens.append(tok)
        if len(self.tokens) >= self.req.max_tokens or (
            self.stops and any(s in self.decode(self.tokens[-self.window:]) for s in self.stops)
        ) or settled(self.tokens, self.req.until, self.decode):
            return []
        return [tok]


def _scoring_job(key: int, rows: list[Row], owners: list[int]) -> Job:
    """One sequence for rows that share their context, walked as a token trie: the rows in
    token order, each fed from where it parts from the one before (the engine rewinds the
    sequence there), so every distinct prefix is fed once; a row's targets read the logits
    of the entries on its path."""
    order = sorted(range(len(rows)), key=lambda r: rows[r][0])
    entries: list[Entry] = []
    path: list[int] = []  # the entry at each position of the current row
    readers: dict[int, list[tuple[int, int]]] = {}  # entry -> (row, target) it predicts
    prev: list[int] = []
    for r in order:
        toks, n = rows[r]
        feed = toks[:-1]
        start = len(os.path.commonprefix([prev, feed]))
        del path[start:]
        for p in range(start, len(feed)):
            path.append(len(entries))
            entries.append((feed[p], p, False))
        for p in range(len(toks) - n - 1, len(feed)):
            tok, pos, _ = entries[path[p]]
            entries[path[p]] = (tok, pos, True)
            readers.setdefault(path[p], []).append((r, toks[p + 1]))
        prev = feed
    wanted = [readers[i] for i in sorted(readers)]
    return Job(key, entries, _Scoring(wanted, owners))


class _Scoring:
    """The rows of one scoring job: log-probabilities of their targets, summed as their logits
    arrive."""

    def __init__(self, readers: list[list[tuple[int, int]]], owners: list[int]) -> None:
        self.readers = readers
        self.owners = owners
        self.seen = 0
        self.logprob = [0.0] * len(owners)
        self.greedy = [True] * len(owners)

    def take(self, rows: np.ndarray) -> list[int]:
        lse, top = log_softmax_rows(rows)
        for i in range(len(rows)):
            for r, target in self.readers[self.seen + i]:
                self.logprob[r] += float(rows[i, target]) - float(lse[i])
                self.greedy[r] = self.greedy[r] and int(top[i]) == target
        self.seen += len(rows)
        return []

    def results(self) -> list[tuple[int, float, bool]]:
        """(caller's row index, summed log-probability, every target greedy) per row."""
        return list(zip(self.owners, self.logprob, self.greedy, strict=True))


def _tokenizer(name: str, folder: str, gguf_file: str | None) -> Any:
    """The model's Hugging Face tokenizer (from a folder, or read from a GGUF file)."""
    try:
        import transformers

        hf: Any = transformers
        with quiet_progress():
            kw = {"gguf_file": gguf_file} if gguf_file else {}
            return hf.AutoTokenizer.from_pretrained(folder, **kw)
    except ImportError as e:
        raise ModelLoadError(f"llamacpp:{name}: the tokenizer needs transformers ({e}); "
                             "install it with: pip install 'genharness[llamacpp]'") from e
    except Exception as e:
        raise ModelLoadError(f"llamacpp:{name}: could not read the tokenizer of "
                             f"{gguf_file or folder}: {first_line(e)}") from e


def _file_type(llama_cpp: Any, code: str | None) -> str:
    """The GGUF's ``general.file_type`` as llama.cpp names it (``F16``, ``Q4_1``, ``Q4_K_M``)."""
    names = {getattr(llama_cpp, k): k.removeprefix("LLAMA_FTYPE_").removeprefix("MOSTLY_")
             .removeprefix("ALL_") for k in dir(llama_cpp) if k.startswith("LLAMA_FTYPE_")}
    return names.get(int(code), f"file type {code}") if code and code.isdigit() else "unknown"


def create(name: str, model_args: Args, batch_size: Size) -> LM:
    """Registry factory for ``llamacpp:NAME``."""
    return LlamaCppModel(name, model_args, batch_size)
