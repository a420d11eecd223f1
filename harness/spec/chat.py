"""Chat turns: a prompt as messages, for ``--apply-chat-template`` (built in
``harness.outputs.prompts``, rendered by a backend's ``LM.apply_chat_template``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ChatTurn(BaseModel):
    """One message of a chat-formatted prompt."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: str  # "system", "user" or "assistant"
    content: str  # message text
