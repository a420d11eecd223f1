"""HF transformers backend: ``hf:NAME`` where NAME is an alias, a local folder or .gguf file, or a hub id.

Tokenization: text is tokenized without special tokens and BOS is put in front when the
tokenizer would add it by default (or ``add_bos_token=true``), unless the text already starts
with it (chat-template output). Scoring (``loglikelihood``, ``loglikelihood_rolling``) always
conditions the first token on BOS when the tokenizer has one; without BOS the first token of
a text with empty context cannot be scored and is skipped.
"""

from __future__ import annotations

import gc
import inspect
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig, StoppingCriteria, StoppingCriteriaList

from harness.errors import HarnessError, ModelLoadError, did_you_mean
from harness.models.aliases import ALIASES, files_sha256, quiet_progress, resolve_alias
from harness.models.base import LM, ChatTurn, ModelIdentity
from harness.models.registry import backend
from harness.requests import (
    Collator,
    GenerateRequest,
    GenerateResponse,
    LoglikelihoodRequest,
    LoglikelihoodResponse,
    RollingRequest,
)

log = logging.getLogger(__name__)

ACCEPTED_ARGS = ("dtype", "device", "revision", "trust_remote_code", "max_length", "gguf_file", "add_bos_token")
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
MAX_LENGTH_CAP = 8192  # default max_length is the model's context size, at most this
AUTO_BATCH_START = 64
CPU_LOGITS_BUDGET = 1 << 30  # bytes of logits per scoring batch when batch_size=auto on CPU
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?")

Req = TypeVar("Req")
Res = TypeVar("Res")
Row = tuple[list[int], int]  # token ids, number of tokens at the end to score


def dtype_kwargs(dtype: Any) -> dict[str, Any]:
    """``from_pretrained`` keyword for the dtype (``torch_dtype`` before transformers 4.56)."""
    import transformers

    major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
    return {"dtype" if (major, minor) >= (4, 56) else "torch_dtype": dtype}


def _bool(key: str, value: str) -> bool:
    v = value.strip().lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off"):
        return False
    raise HarnessError(f"--model-args: {key} must be true or false, got {value!r}")


@dataclass(frozen=True)
class HFOptions:
    """Parsed ``--model-args`` of the hf backend."""

    dtype: str = "auto"
    device: str = "auto"
    revision: str | None = None
    trust_remote_code: bool = False
    max_length: int | None = None
    gguf_file: str | None = None
    add_bos_token: bool | None = None

    @classmethod
    def parse(cls, args: dict[str, str]) -> HFOptions:
        """Validate and convert the string arguments."""
        unknown = sorted(set(args) - set(ACCEPTED_ARGS))
        if unknown:
            hint = did_you_mean(unknown[0], ACCEPTED_ARGS)
            raise HarnessError(
                f"--model-args: unknown key {unknown[0]!r}{hint} for hf; accepted: {', '.join(ACCEPTED_ARGS)}"
            )
        dtype = args.get("dtype", "auto")
        if dtype not in ("auto", *DTYPES):
            raise HarnessError(f"--model-args: dtype must be one of auto, {', '.join(DTYPES)}; got {dtype!r}")
        device = args.get("device", "auto")
        if not re.fullmatch(r"auto|cpu|cuda(:\d+)?", device):
            raise HarnessError(f"--model-args: device must be cpu, cuda, cuda:N or auto; got {device!r}")
        max_length = None
        if "max_length" in args:
            try:
                max_length = int(args["max_length"])
            except ValueError:
                max_length = 0
            if max_length < 2:
                raise HarnessError(f"--model-args: max_length must be an integer >= 2, got {args['max_length']!r}")
        return cls(
            dtype=dtype,
            device=device,
            revision=args.get("revision") or None,
            trust_remote_code=_bool("trust_remote_code", args.get("trust_remote_code", "false")),
            max_length=max_length,
            gguf_file=args.get("gguf_file") or None,
            add_bos_token=_bool("add_bos_token", args["add_bos_token"]) if "add_bos_token" in args else None,
        )


@dataclass(frozen=True)
class _Source:
    load_path: str  # folder or hub id for from_pretrained
    gguf_file: str | None
    path: str  # for the identity
    weights_sha256: str | None
    local: bool


def _resolve_source(name: str, opts: HFOptions) -> _Source:
    alias = resolve_alias(name)
    if alias is not None:
        return _Source(str(alias.load_path), alias.gguf_file, str(alias.source), alias.weights_sha256, True)
    p = Path(name).expanduser()
    if p.is_file():
        if p.suffix != ".gguf":
            raise ModelLoadError(f"hf:{name}: is a file but not a .gguf file; give the model's folder instead")
        return _Source(str(p.parent), p.name, str(p.resolve()), files_sha256([p]), True)
    if p.is_dir():
        gguf = opts.gguf_file
        if gguf is None and not (p / "config.json").is_file():
            found = sorted(f.name for f in p.glob("*.gguf"))
            if len(found) > 1:
                raise ModelLoadError(f"hf:{name}: several .gguf files ({', '.join(found)}); pick one with --model-args gguf_file=NAME")
            if not found:
                raise ModelLoadError(f"hf:{name}: folder has neither config.json nor a .gguf file")
            gguf = found[0]
        if gguf is not None:
            files = [p / gguf]
        else:
            files = sorted(p.glob("*.safetensors")) or sorted(p.glob("*.bin"))
        sha = files_sha256(files) if files and all(f.is_file() for f in files) else None
        return _Source(str(p), gguf, str(p.resolve()), sha, True)
    if not _HUB_ID.fullmatch(name):
        raise ModelLoadError(f"hf:{name}: no such file or folder{did_you_mean(name, ALIASES)}")
    return _Source(name, opts.gguf_file, name, None, False)


def _first_line(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__


def _is_oom(e: BaseException) -> bool:
    oom = getattr(torch, "OutOfMemoryError", torch.cuda.OutOfMemoryError)
    return isinstance(e, oom) or (isinstance(e, RuntimeError) and "out of memory" in str(e).lower())


def _resolve_device(device: str) -> str:
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ModelLoadError(f"--model-args device={device}: CUDA is not available (torch.cuda.is_available() is False)")
        index = int(device.partition(":")[2] or 0)
        if index >= torch.cuda.device_count():
            raise ModelLoadError(f"--model-args device={device}: only {torch.cuda.device_count()} CUDA device(s)")
    return device


def _trim(text: str, stops: Sequence[str]) -> str:
    cuts = [i for i in (text.find(s) for s in stops if s) if i >= 0]
    return text[: min(cuts)] if cuts else text


class _RowStopper(StoppingCriteria):  # type: ignore[misc]
    """Marks each row done on its own stop strings, eos, or its own token limit."""

    def __init__(
        self, decode: Callable[[list[int]], str], width: int, stops: list[list[str]], limits: list[int], eos: set[int]
    ) -> None:
        self.decode, self.width, self.stops, self.limits, self.eos = decode, width, stops, limits, eos
        self.windows = [4 * max(len(s) for s in st) + 8 if st else 1 for st in stops]
        self.finished_at: list[int | None] = [None] * len(stops)

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        n = input_ids.shape[1] - self.width
        tail = input_ids[:, max(self.width, input_ids.shape[1] - max(self.windows)) :].tolist()
        for i, toks in enumerate(tail):
            if self.finished_at[i] is not None:
                continue
            if (
                n >= self.limits[i]
                or (toks and toks[-1] in self.eos)
                or (self.stops[i] and any(s in self.decode(toks[-self.windows[i] :]) for s in self.stops[i]))
            ):
                self.finished_at[i] = n
        return torch.tensor([f is not None for f in self.finished_at], dtype=torch.bool, device=input_ids.device)


class HFModel(LM):
    """A causal LM loaded with transformers (AutoModelForCausalLM + fast AutoTokenizer)."""

    def __init__(self, name: str, model_args: dict[str, str] | None = None, batch_size: int | Literal["auto"] = 1) -> None:
        if batch_size != "auto" and (not isinstance(batch_size, int) or batch_size < 1):
            raise HarnessError(f"--batch-size: expected a positive integer or 'auto', got {batch_size!r}")
        self._args = dict(model_args or {})
        opts = HFOptions.parse(self._args)
        self._batch_size = batch_size
        self._auto_size = AUTO_BATCH_START
        self._name = name
        device = _resolve_device(opts.device)
        src = _resolve_source(name, opts)
        self._model, self._tok = self._load(name, src, opts, device)
        tok, model = self._tok, self._model
        tok.padding_side = "left"
        if tok.pad_token is None and tok.eos_token is not None:
            tok.pad_token = tok.eos_token
        self._bos: int | None = tok.bos_token_id
        eos: set[int] = {tok.eos_token_id} if tok.eos_token_id is not None else set()
        gen_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
        eos |= set(gen_eos if isinstance(gen_eos, list) else [] if gen_eos is None else [gen_eos])
        self._eos = eos
        self._pad: int = tok.pad_token_id if tok.pad_token_id is not None else min(eos, default=0)
        with_special = list(tok("a").input_ids[:1])
        default_bos = self._bos is not None and with_special == [self._bos] != list(tok("a", add_special_tokens=False).input_ids[:1])
        self._add_bos = default_bos if opts.add_bos_token is None else opts.add_bos_token
        config = model.config
        self._text_config: Any = config.get_text_config() if hasattr(config, "get_text_config") else config
        self.max_length = opts.max_length or self._config_max_length()
        self._keep_arg = "logits_to_keep" in inspect.signature(model.forward).parameters
        self._cache: dict[str, tuple[list[int], list[tuple[int, int]]]] = {}
        self._prompts: dict[tuple[str, int], list[int]] = {}
        revision = getattr(model.config, "_commit_hash", None) or opts.revision
        self._identity = ModelIdentity(
            backend="hf",
            name=name,
            path=src.path,
            revision=revision,
            weights_sha256=src.weights_sha256,
            dtype=str(model.dtype).removeprefix("torch."),
            device=str(model.device),
            args=self._args,
        )

    @staticmethod
    def _load(name: str, src: _Source, opts: HFOptions, device: str) -> tuple[Any, Any]:
        kw: dict[str, Any] = {"revision": opts.revision, "trust_remote_code": opts.trust_remote_code}
        if src.gguf_file:
            kw["gguf_file"] = src.gguf_file
        dtype: Any = DTYPES[opts.dtype] if opts.dtype != "auto" else ("auto" if device.startswith("cuda") else torch.float32)
        try:
            with quiet_progress():
                tok = AutoTokenizer.from_pretrained(src.load_path, **kw)
                model = AutoModelForCausalLM.from_pretrained(src.load_path, **kw, **dtype_kwargs(dtype))
            model.to(device)
            model.eval()
        except HarnessError:
            raise
        except Exception as e:
            if src.local:
                raise ModelLoadError(f"hf:{name}: could not load the model from {src.load_path}: {_first_line(e)}") from e
            raise ModelLoadError(
                f"hf:{name}: not a local file or folder{did_you_mean(name, ALIASES)}, and loading it from the "
                f"Hugging Face hub failed: {_first_line(e)}"
            ) from e
        return model, tok

    def _config_max_length(self) -> int:
        for attr in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length", "n_ctx"):
            value = getattr(self._text_config, attr, None)
            if isinstance(value, int) and value > 0:
                return min(value, MAX_LENGTH_CAP)
        return 2048

    @property
    def identity(self) -> ModelIdentity:
        """Identity of the loaded model."""
        return self._identity

    # -- tokenization -------------------------------------------------------------------------

    def _encode(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """Token ids (no special tokens added) and character offsets, cached per string."""
        if text not in self._cache:
            if self._tok.is_fast:
                enc = self._tok(text, add_special_tokens=False, return_offsets_mapping=True)
                self._cache[text] = (list(enc["input_ids"]), [tuple(o) for o in enc["offset_mapping"]])
            else:
                self._cache[text] = (list(self._tok(text, add_special_tokens=False)["input_ids"]), [])
        return self._cache[text]

    def _with_bos(self, ids: list[int], force: bool = False) -> list[int]:
        if self._bos is not None and (force or self._add_bos) and ids[:1] != [self._bos]:
            return [self._bos, *ids]
        return ids

    def _prompt_ids(self, req: GenerateRequest) -> list[int]:
        key = (req.prompt, req.max_tokens)
        if key not in self._prompts:
            ids = self._with_bos(self._encode(req.prompt)[0])
            limit = self.max_length - req.max_tokens
            if len(ids) > limit:
                log.warning("prompt of %d tokens cut from the left to %d (max_length %d - max_tokens %d)",
                            len(ids), limit, self.max_length, req.max_tokens)
                keep_bos = ids[:1] == [self._bos] and limit > 1
                ids = [ids[0], *ids[len(ids) - limit + 1 :]] if keep_bos else ids[len(ids) - limit :]
            self._prompts[key] = ids
        return self._prompts[key]

    # -- batching -----------------------------------------------------------------------------

    def _run(
        self, items: Sequence[Req], length: Callable[[Req], int], fn: Callable[[list[Req]], list[Res]], per_token: int = 0
    ) -> list[Res]:
        """Run *fn* over batches sorted longest-first; with batch_size=auto, halve on OOM."""
        if not items:
            return []
        order = list(next(Collator(items, length=length).batches(len(items))).indices)
        results: dict[int, Res] = {}
        pos = 0
        while pos < len(order):
            size = self._batch_size if isinstance(self._batch_size, int) else self._auto_size
            if self._batch_size == "auto" and per_token and self._model.device.type == "cpu":
                size = min(size, max(1, CPU_LOGITS_BUDGET // (per_token * max(1, length(items[order[pos]])))))
            idx = order[pos : pos + size]
            try:
                out = fn([items[i] for i in idx])
            except Exception as e:
                if not _is_oom(e):
                    raise
                if self._batch_size != "auto" or size == 1:
                    raise HarnessError(f"out of memory at batch size {size}; use a smaller --batch-size or max_length") from e
                log.warning("out of memory at batch size %d; retrying with %d", size, size // 2)
                self._auto_size = size // 2
                out = None
            if out is None:  # free what the failed attempt held, outside the except block
                gc.collect()
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
                continue
            results.update(zip(idx, out, strict=True))
            pos += len(idx)
        return [results[i] for i in range(len(items))]

    # -- generation ---------------------------------------------------------------------------

    def generate(self, requests: Sequence[GenerateRequest]) -> list[GenerateResponse]:
        """Continue each prompt (greedy when temperature is 0); rows stop on their own stop strings."""
        self._cache.clear()
        self._prompts.clear()
        for r in requests:
            if not 1 <= r.max_tokens < self.max_length:
                raise HarnessError(f"max_tokens must be between 1 and max_length - 1 ({self.max_length - 1}), got {r.max_tokens}")
        return self._run(requests, lambda r: len(self._prompt_ids(r)), self._generate_batch)

    def _generate_batch(self, reqs: list[GenerateRequest]) -> list[GenerateResponse]:
        out: dict[int, GenerateResponse] = {}
        for temp in sorted({r.temperature for r in reqs}):
            idx = [i for i, r in enumerate(reqs) if r.temperature == temp]
            out.update(zip(idx, self._generate_group([reqs[i] for i in idx], temp), strict=True))
        return [out[i] for i in range(len(reqs))]

    @torch.inference_mode()
    def _generate_group(self, reqs: list[GenerateRequest], temperature: float) -> list[GenerateResponse]:
        prompts = [self._prompt_ids(r) for r in reqs]
        width = max(len(p) for p in prompts)
        ids = torch.full((len(reqs), width), self._pad, dtype=torch.long)
        mask = torch.zeros((len(reqs), width), dtype=torch.long)
        for i, p in enumerate(prompts):
            ids[i, width - len(p) :] = torch.tensor(p, dtype=torch.long)
            mask[i, width - len(p) :] = 1
        stops = [[s for s in r.stop if s] for r in reqs]
        stopper = _RowStopper(self._decode, width, stops, [r.max_tokens for r in reqs], self._eos)
        sample = temperature > 0
        config = GenerationConfig(
            max_new_tokens=max(r.max_tokens for r in reqs),
            do_sample=sample,
            temperature=temperature if sample else 1.0,
            top_p=1.0,
            top_k=0 if sample else 50,
            typical_p=1.0,
            repetition_penalty=1.0,
            num_beams=1,
            eos_token_id=sorted(self._eos) or None,
            pad_token_id=self._pad,
        )
        device = self._model.device
        seqs = self._model.generate(
            input_ids=ids.to(device),
            attention_mask=mask.to(device),
            generation_config=config,
            stopping_criteria=StoppingCriteriaList([stopper]),
        )
        responses = []
        for i, (r, row) in enumerate(zip(reqs, seqs[:, width:].tolist(), strict=True)):
            done = stopper.finished_at[i]
            toks = row[: min(r.max_tokens, done if done is not None else len(row))]
            toks = toks[: next((k for k, t in enumerate(toks) if t in self._eos), len(toks))]
            responses.append(GenerateResponse(text=_trim(self._decode(toks), r.stop), n_tokens=len(toks)))
        return responses

    def _decode(self, ids: list[int]) -> str:
        return str(self._tok.decode(ids, skip_special_tokens=True))

    # -- scoring ------------------------------------------------------------------------------

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[LoglikelihoodResponse]:
        """Sum of log-probabilities of the tokens that carry continuation characters.

        The scored tokens start at the first token whose end offset lies past the context, so a
        token that merges the end of the context with the start of the continuation is scored.
        """
        self._cache.clear()
        if requests and not self._tok.is_fast:
            raise HarnessError(f"hf:{self._name}: loglikelihood needs a fast tokenizer (for character offsets)")
        unique = sorted(set(requests), key=lambda r: (r.context, r.continuation))
        rows = [self._ll_row(r) for r in unique]
        scores = self._score(rows)
        by_req = {r: LoglikelihoodResponse(logprob=lp, is_greedy=g, n_tokens=n) for r, (_, n), (lp, g) in zip(unique, rows, scores, strict=True)}
        return [by_req[r] for r in requests]

    def _ll_row(self, req: LoglikelihoodRequest) -> Row:
        if not req.continuation:
            return [], 0
        ids, offsets = self._encode(req.context + req.continuation)
        start = next((i for i, (_, end) in enumerate(offsets) if end > len(req.context)), len(ids))
        full = self._with_bos(ids, force=not req.context)
        start = max(1, start + len(full) - len(ids))  # without BOS the first token has no prediction
        n = len(full) - start
        if len(full) - 1 > self.max_length:
            log.warning("loglikelihood input of %d tokens cut from the left to max_length %d", len(full) - 1, self.max_length)
            full, n = full[-(self.max_length + 1) :], min(n, self.max_length)
        return full, n

    def loglikelihood_rolling(self, requests: Sequence[RollingRequest]) -> list[float]:
        """Log-probability of each whole text (first token conditioned on BOS when there is one).

        Tokens are scored in disjoint windows of ``max_length`` predictions; each window is fed
        the token just before it, so context does not carry over between windows.
        """
        self._cache.clear()
        rows: list[Row] = []
        owners: list[int] = []
        for k, r in enumerate(requests):
            toks = self._with_bos(self._encode(r.text)[0], force=True)
            for a in range(1, len(toks), self.max_length):
                b = min(a + self.max_length, len(toks))
                rows.append((toks[a - 1 : b], b - a))
                owners.append(k)
        totals = [0.0] * len(requests)
        for k, (lp, _) in zip(owners, self._score(rows), strict=True):
            totals[k] += lp
        return totals

    def _score(self, rows: list[Row]) -> list[tuple[float, bool]]:
        vocab = int(getattr(self._text_config, "vocab_size", None) or 32000)
        return self._run(rows, lambda row: len(row[0]), self._score_batch, per_token=4 * vocab)

    @torch.inference_mode()
    def _score_batch(self, rows: list[Row]) -> list[tuple[float, bool]]:
        live = [i for i, (_, n) in enumerate(rows) if n > 0]
        out: list[tuple[float, bool]] = [(0.0, True)] * len(rows)
        if not live:
            return out
        lengths = [len(rows[i][0]) - 1 for i in live]
        width = max(lengths)
        ids = torch.full((len(live), width), self._pad, dtype=torch.long)
        mask = torch.zeros((len(live), width), dtype=torch.long)
        for j, i in enumerate(live):
            ids[j, : lengths[j]] = torch.tensor(rows[i][0][:-1], dtype=torch.long)
            mask[j, : lengths[j]] = 1
        first = min(lengths[j] - rows[i][1] for j, i in enumerate(live))
        extra = {"logits_to_keep": width - first} if self._keep_arg else {}
        device = self._model.device
        logits = self._model(input_ids=ids.to(device), attention_mask=mask.to(device), **extra).logits
        offset = width - logits.shape[1]
        for j, i in enumerate(live):
            tokens, n = rows[i]
            lp = logits[j, lengths[j] - n - offset : lengths[j] - offset].float().log_softmax(-1)
            target = torch.tensor(tokens[-n:], dtype=torch.long, device=lp.device)
            picked = lp.gather(-1, target[:, None]).squeeze(-1)
            out[i] = (float(picked.sum()), bool((lp.argmax(-1) == target).all()))
        return out

    # -- chat -----------------------------------------------------------------------------------

    def apply_chat_template(self, turns: Sequence[ChatTurn]) -> str:
        """Render *turns* with the tokenizer's chat template, opening the assistant's turn."""
        if not getattr(self._tok, "chat_template", None):
            raise HarnessError(f"--apply-chat-template: hf:{self._name} has no chat template in its tokenizer")
        try:
            text = self._tok.apply_chat_template(
                [t.model_dump() for t in turns], tokenize=False, add_generation_prompt=True
            )
        except Exception as e:
            raise HarnessError(f"--apply-chat-template: hf:{self._name}: chat template failed: {_first_line(e)}") from e
        return str(text)

    def close(self) -> None:
        """Drop the model and free accelerator memory."""
        self._model = None
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


@backend("hf")
def create(name: str, model_args: dict[str, str], batch_size: int | Literal["auto"]) -> LM:
    """Registry factory for ``hf:NAME``."""
    return HFModel(name, model_args, batch_size)
