"""The ``openai:`` backend's request bodies (``harness.models.openai.bodies``), without a
server: what a generation, a scoring and a token-count request carry."""

from __future__ import annotations

import pytest

from harness.errors import HarnessError
from harness.models.openai.bodies import echo_body, generate_body, tokenize_body, tokenize_url
from harness.models.openai.parse import OpenAIOptions, encode_chat
from harness.requests import GenerateRequest

URL = "http://127.0.0.1:8000/v1"


def test_a_generation_body_sends_four_stops_the_seed_and_the_prompt_or_messages() -> None:
    r = GenerateRequest("Q: 2+2\nA:", max_tokens=5, stop=("\n", "", "a", "b", "c", "d"))
    body = generate_body("m", r, OpenAIOptions.parse({"base_url": URL, "seed": "7"}))
    assert body == {"model": "m", "max_tokens": 5, "temperature": 0.0,
                    "stop": ["\n", "a", "b", "c"], "seed": 7, "prompt": "Q: 2+2\nA:"}
    chat = encode_chat([{"role": "user", "content": "hi"}])
    body = generate_body("m", GenerateRequest(chat), OpenAIOptions.parse({"base_url": URL,
                                                                          "api": "chat"}))
    assert body["messages"] == [{"role": "user", "content": "hi"}] and "prompt" not in body
    assert "stop" not in body and "seed" not in body
    with pytest.raises(HarnessError, match="openai:m: max_tokens must be >= 1, got 0"):
        generate_body("m", GenerateRequest("x", max_tokens=0), OpenAIOptions.parse(
            {"base_url": URL}))


def test_scoring_and_token_count_bodies() -> None:
    assert echo_body("m", "abc") == {"model": "m", "prompt": "abc", "max_tokens": 1,
                                     "temperature": 0, "echo": True, "logprobs": 1}
    assert tokenize_body("m", "abc") == {"model": "m", "prompt": "abc",
                                         "add_special_tokens": False}
    assert tokenize_url(URL) == "http://127.0.0.1:8000/tokenize"
    assert tokenize_url("http://h:1/api") == "http://h:1/api/tokenize"
