"""HF transformers backend: ``hf:NAME``, NAME an alias, a local folder or .gguf file, or a hub id.

Tokenization and BOS handling are those of every local backend (:mod:`harness.models.local`).
"""

from __future__ import annotations

import gc
import inspect
import logging
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeAlias, TypeVar

import torch
import transformers

from harness.errors import HarnessError, ModelLoadError, did_you_mean
from harness.lm import LM, ModelIdentity, OnDone
from harness.models.aliases import ALIASES, ModelSource, resolve_source
from harness.models.gguf import dtype_kwargs, quiet_progress
from harness.models.hf.batching import AUTO_BATCH_START, BatchingMixin
from harness.models.hf.generate import greedy, sample
from harness.models.hf.prefix import SharedPrefix
from harness.models.hf.score import plan, prefix_key, score_batch
from harness.models.hf.support import DTYPES, HFOptions, resolve_device
from harness.models.hf.tree import TREE_ATTENTION, tree_agrees
from harness.models.hub import check_hub_model
from harness.models.local import LocalLM, Row
from harness.models.support import first_line, trim_at_stop
from harness.requests import (
    GenerateRequest,
    GenerateResponse,
    LoglikelihoodRequest,
    RollingRequest,
)
from harness.requests import LoglikelihoodResponse as LLResponse

log = logging.getLogger(__name__)
_hf: Any = transformers  # loosely typed handle for the auto classes

MAX_LENGTH_CAP = 8192  # default max_length is the model's context size, at most this

Res = TypeVar("Res")
Args: TypeAlias = "dict[str, str]"
Size: TypeAlias = "int | Literal['auto']"


class HFModel(BatchingMixin, LocalLM):
    """A causal LM loaded with transformers (AutoModelForCausalLM + fast AutoTokenizer)."""

    def __init__(self, name: str, model_args: Args | None = None, batch_size: Size = 1) -> None:
        if batch_size != "auto" and (not isinstance(batch_size, int) or batch_size < 1):
            raise HarnessError(
                f"--batch-size: expected a positive integer or 'auto': {batch_size!r}"
            )
        self._args = dict(model_args or {})
        opts = HFOptions.parse(self._args)
        self._batch_size = batch_size
        self._auto_size = AUTO_BATCH_START
        self._name = name
        self._label = f"hf:{name}"
        device = resolve_device(opts.device)
        try:
            src = resolve_source(name, opts.gguf_file)
        except HarnessError:
            raise
        except Exception as e:  # unreadable files, a GGUF that does not convert, ...
            raise ModelLoadError(f"hf:{name}: {first_line(e)}") from e
        self._model, self._tok = self._load(name, src, opts, device)
        tok, model = self._tok, self._model
        tok.padding_side = "left"
        if tok.pad_token is None and tok.eos_token is not None:
            tok.pad_token = tok.eos_token
        gen_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
        self._init_tokens(tok, gen_eos, opts.add_bos_token)
        self._pad: int = (tok.pad_token_id if tok.pad_token_id is not None
                          else min(self._eos, default=0))
        cfg = model.config
        self._text_config: Any = cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg
        self.max_length = opts.max_length or self._config_max_length()
        self._vocab = int(getattr(self._text_config, "vocab_size", None) or 32000)
        params = inspect.signature(model.forward).parameters
        self._keep_arg = "logits_to_keep" in params
        # the cache-reusing paths (greedy loop, shared-context scoring) feed positions and a
        # cache explicitly; models that take neither use model.generate / plain scoring
        self._fast = {"position_ids", "past_key_values"} <= set(params) and not getattr(
            model.config, "is_encoder_decoder", False)
        # a batch scored as one token trie with a custom attention mask (hf.tree), when the
        # attention takes one and a probe shows the model honours it
        self._tree = (self._fast and getattr(model.config, "_attn_implementation", None)
                      in TREE_ATTENTION and tree_agrees(model, self._keep_arg, self._vocab))
        if self._fast and not self._tree:
            log.info("hf:%s: choices scored in two passes (no custom attention masks)", name)
        # a prompt prefix every row of a batch shares runs once (and is kept for the next batch)
        self._prefix = SharedPrefix(model, self._keep_arg) if self._fast else None
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
    def _load(name: str, src: ModelSource, opts: HFOptions, device: str) -> tuple[Any, Any]:
        kw: dict[str, Any] = {
            "revision": opts.revision,
            "trust_remote_code": opts.trust_remote_code,
        }
        kw.update({"gguf_file": src.gguf_file} if src.gguf_file else {})
        if not src.local and check_hub_model(name, opts.revision, src.gguf_file):
            kw["local_files_only"] = True  # the hub cannot be used: the cached copy, no requests
        cpu = not device.startswith("cuda")
        dtype: Any = DTYPES.get(opts.dtype) or (torch.float32 if cpu else "auto")
        try:
            with quiet_progress():
                tok = _hf.AutoTokenizer.from_pretrained(src.load_path, **kw)
                kw.update(dtype_kwargs(dtype))
                model = _hf.AutoModelForCausalLM.from_pretrained(src.load_path, **kw)
            model.to(device).eval()
        except HarnessError:
            raise
        except Exception as e:
            if src.local:
                hint = ("; its folder holds model code: --model-args trust_remote_code=true runs "
                        "it" if "custom code" in str(e) and not opts.trust_remote_code else "")
                raise ModelLoadError(f"hf:{name}: could not load the model from "
                                     f"{src.load_path}: {first_line(e)}{hint}") from e
            raise ModelLoadError(
                f"hf:{name}: not a local file or folder{did_you_mean(name, ALIASES)}, and loading "
                f"it from the Hugging Face hub failed: {first_line(e)}"
            ) from e
        return model, tok

    def _config_max_length(self) -> int:
        for attr in ("max_position_embeddings", "n_positions", "max_sequence_length", "n_ctx"):
            value = getattr(self._text_config, attr, None)
            if isinstance(value, int) and value > 0:
                return min(value, MAX_LENGTH_CAP)
        return 2048

    @property
    def identity(self) -> ModelIdentity:
        """Identity of the loaded model."""
        return self._identity

    # -- generation ---------------------------------------------------------------------------

    def generate(
        self, requests: Sequence[GenerateRequest], on_done: OnDone[GenerateResponse] | None = None
    ) -> list[GenerateResponse]:
        """Continue each prompt (greedy when temperature is 0); each row stops on its own."""
        self._start_generate(requests)
        # the prefill keeps only the last position's logits where the model takes logits_to_keep
        # (the greedy loop asks for it, model.generate does too)
        return self._run(requests, lambda r: len(self._prompt_ids(r)), self._generate_batch,
                         _each(on_done), kept="last" if self._keep_arg else "all")

    def _generate_batch(self, reqs: list[GenerateRequest]) -> list[GenerateResponse]:
        out: dict[int, GenerateResponse] = {}
        for temp in sorted({r.temperature for r in reqs}):
            idx = [i for i, r in enumerate(reqs) if r.temperature == temp]
            out.update(zip(idx, self._generate_group([reqs[i] for i in idx], temp), strict=True))
        return [out[i] for i in range(len(reqs))]

    def _generate_group(self, reqs: list[GenerateRequest], temp: float) -> list[GenerateResponse]:
        prompts = [self._prompt_ids(r) for r in reqs]
        stops = [[s for s in r.stop if s] for r in reqs]
        limits = [r.max_tokens for r in reqs]
        if temp == 0 and self._fast:
            rows = greedy(self._model, prompts, limits, stops, self._eos, self._pad, self._decode,
                          self._keep_arg, self._prefix, [r.until for r in reqs])
        else:
            rows = sample(self._model, prompts, limits, stops, self._eos, self._pad, self._decode,
                          temp)
        return [GenerateResponse(trim_at_stop(self._decode(toks), r.stop), len(toks))
                for r, toks in zip(reqs, rows, strict=True)]

    # -- scoring ------------------------------------------------------------------------------

    def loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest], on_done: OnDone[LLResponse] | None = None
    ) -> list[LLResponse]:
        """Sum of log-probabilities of the tokens that carry continuation characters.

        The scored tokens start at the first token whose end offset lies past the context, so a
        token that merges the end of the context with the start of the continuation is scored.
        """
        unique, rows, where = self._loglikelihood_rows(requests)

        def done(idx: list[int], out: list[tuple[float, bool]]) -> None:
            if on_done:
                for j, (lp, g) in zip(idx, out, strict=True):
                    resp = LLResponse(logprob=lp, is_greedy=g, n_tokens=rows[j][1])
                    for i in where[unique[j]]:
                        on_done(i, resp)

        # share context passes when it pays over the whole request list (multiple choice)
        live = [i for i, r in enumerate(rows) if r[1]]
        share = self._fast and (self._tree or plan(rows, live) is not None)
        scores = self._run(rows, lambda row: len(row[0]),
                           lambda batch: self._score_batch(batch, share), done, prefix_key)
        by_req = {
            r: LLResponse(logprob=lp, is_greedy=g, n_tokens=n)
            for r, (_, n), (lp, g) in zip(unique, rows, scores, strict=True)
        }
        return [by_req[r] for r in requests]

    def loglikelihood_rolling(
        self, requests: Sequence[RollingRequest], on_done: OnDone[float] | None = None
    ) -> list[float]:
        """Log-probability of each whole text (first token conditioned on BOS when there is one).

        Tokens are scored in disjoint windows of ``max_length`` predictions; each window is fed
        the token just before it, so context does not carry over between windows.
        """
        rows, owners = self._rolling_rows(requests)
        totals = [0.0] * len(requests)
        scores = self._run(rows, lambda row: len(row[0]), self._score_batch)  # never shared
        for k, (lp, _) in zip(owners, scores, strict=True):
            totals[k] += lp
        return totals

    def _score_batch(self, rows: list[Row], share: bool = False) -> list[tuple[float, bool]]:
        return score_batch(self._model, rows, self._pad, self._keep_arg, share, self._prefix,
                           self._tree)

    def close(self) -> None:
        """Drop the model and free accelerator memory."""
        self._model, self._prefix = None, None
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def _each(on_done: OnDone[Res] | None) -> Callable[[list[int], list[Res]], None] | None:
    """Adapt a per-request callback to ``_run``'s per-batch one."""
    if on_done is None:
        return None

    def call(idx: list[int], out: list[Res]) -> None:
        for i, r in zip(idx, out, strict=True):
            on_done(i, r)

    return call


def create(name: str, model_args: Args, batch_size: Size) -> LM:
    """Registry factory for ``hf:NAME``."""
    return HFModel(name, model_args, batch_size)
