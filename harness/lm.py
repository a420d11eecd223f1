"""The model contract: three methods over batches of typed requests, plus the model's identity."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from harness.requests import (
    AskedItem,
    GenerateRequest,
    GenerateResponse,
    LoglikelihoodRequest,
    LoglikelihoodResponse,
    RollingRequest,
)
from harness.spec.chat import ChatTurn as ChatTurn  # re-exported: the LM contract's type

Res = TypeVar("Res")

#: Called by a backend with ``(index into the requests list, final response)`` as soon as that
#: response is final, at most once per index. The response cache writes each one to disk there,
#: so a run killed part-way keeps what finished. Backends may call it late or never: whatever
#: the method returns counts as finished too.
OnDone: TypeAlias = Callable[[int, Res], None]


class ModelIdentity(BaseModel):
    """Everything that pins down which model produced a response (goes into results.json)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    backend: str  # registry prefix, e.g. "hf"
    name: str  # what the user asked for, e.g. "smollm2-135m" or a hub id
    path: str | None = None  # resolved local path or hub id that was loaded
    revision: str | None = None  # hub commit / revision, where known
    weights_sha256: str | None = None  # hash of the weight file(s), where computed
    dtype: str | None = None  # parameter dtype, e.g. "float32"
    device: str | None = None  # where the model runs, e.g. "cpu", "cuda:0"
    args: dict[str, Any] = {}  # backend arguments as given (--model-args)
    engine: str | None = Field(  # the inference engine and its version where it decides the
        default=None, exclude_if=lambda v: v is None)  # answers, e.g. "llama-cpp-python 0.3.36"


def render_chat(tokenizer: Any, turns: Sequence[ChatTurn], label: str,
                describe: Callable[[BaseException], str]) -> str:
    """Render *turns* with a Hugging Face *tokenizer*'s chat template, opening the assistant's
    turn; *label* (``hf:NAME``) names the model in errors, *describe* words the exception."""
    from harness.errors import HarnessError

    if not getattr(tokenizer, "chat_template", None):
        raise HarnessError(f"--apply-chat-template: {label} has no chat template")
    try:
        text = tokenizer.apply_chat_template(
            [t.model_dump() for t in turns], tokenize=False, add_generation_prompt=True
        )
    except Exception as e:
        raise HarnessError(f"--apply-chat-template: {label}: {describe(e)}") from e
    return str(text)


class LM(ABC):
    """A language model backend.

    Each method takes a list of requests and returns one response per request, in the same
    order. Backends batch internally (see ``harness.requests.Collator``) and report each
    response through ``on_done`` as it completes (see :data:`OnDone`).
    """

    @property
    @abstractmethod
    def identity(self) -> ModelIdentity:
        """Identity of the loaded model."""

    @abstractmethod
    def generate(
        self, requests: Sequence[GenerateRequest], on_done: OnDone[GenerateResponse] | None = None
    ) -> list[GenerateResponse]:
        """Continue each prompt; output trimmed at the first stop sequence."""

    @abstractmethod
    def loglikelihood(
        self,
        requests: Sequence[LoglikelihoodRequest],
        on_done: OnDone[LoglikelihoodResponse] | None = None,
    ) -> list[LoglikelihoodResponse]:
        """Score each continuation given its context."""

    @abstractmethod
    def loglikelihood_rolling(
        self, requests: Sequence[RollingRequest], on_done: OnDone[float] | None = None
    ) -> list[float]:
        """Total log-probability of each text."""

    def count_tokens(self, text: str) -> int | None:
        """Number of tokens of ``text`` in the model's own tokenizer (None when unknown).

        Tasks whose difficulty is a length in model tokens (passkey retrieval) use it."""
        return None

    def context_length(self) -> int | None:
        """Most tokens of prompt and answer together (None when unknown); the horizon search
        stops where its items no longer fit."""
        return None

    def apply_chat_template(self, turns: Sequence[ChatTurn]) -> str:
        """Render chat turns as the prompt string the model expects (ending with the
        assistant's turn opened). Backends without a chat template raise ``HarnessError``."""
        from harness.errors import HarnessError

        raise HarnessError(
            f"--apply-chat-template: backend {self.identity.backend!r} has no chat template"
        )

    def announce(self, items: Sequence[AskedItem]) -> None:  # noqa: B027 - optional hook
        """Told by the runner before it asks ``items`` (each chunk of a task's prompts, each
        batch of a horizon search): their prompts, targets, difficulties and conditions. A real
        model ignores it (the default); the planted-truth backend answers from it."""

    def loaded_as(self, prefix: str) -> None:  # noqa: B027 - optional hook
        """Called by ``load_model`` with the ``--model`` prefix the model was loaded under: a
        factory that may be registered under any name (``scripted_backend``) names that prefix
        as its ``identity.backend``, so runs of two such backends are not confused."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (engines, server connections)."""


class WrapperLM(LM):
    """Base for layers in front of a model (cache, progress): everything but the three request
    methods goes straight to ``inner``."""

    def __init__(self, inner: LM) -> None:
        self.inner = inner  # the wrapped model

    @property
    def identity(self) -> ModelIdentity:
        return self.inner.identity

    def count_tokens(self, text: str) -> int | None:
        return self.inner.count_tokens(text)

    def context_length(self) -> int | None:
        return self.inner.context_length()

    def apply_chat_template(self, turns: Sequence[ChatTurn]) -> str:
        return self.inner.apply_chat_template(turns)

    def announce(self, items: Sequence[AskedItem]) -> None:
        hook = getattr(self.inner, "announce", None)  # (a plugin's duck-typed model has none)
        if hook is not None:
            hook(items)

    def close(self) -> None:
        self.inner.close()
