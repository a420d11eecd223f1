"""Small helpers every backend uses: ``--model-args`` errors and booleans, an exception in one
line, and cutting generated text at its stop strings. Imports nothing heavy."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from harness.errors import HarnessError

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def bad_arg(key: str, expected: str, value: str) -> HarnessError:
    """The one-line error for a ``--model-args`` value of the wrong kind."""
    return HarnessError(f"--model-args: {key} must be {expected}, got {value!r}")


def parse_bool(key: str, value: str) -> bool:
    """A ``--model-args`` boolean: 1/true/yes/on or 0/false/no/off (any case)."""
    v = value.strip().lower()
    if v not in (*_TRUE, *_FALSE):
        raise bad_arg(key, "true or false", value)
    return v in _TRUE


def first_line(e: BaseException) -> str:
    """``Type: first line of the message`` (just ``Type`` for an empty message)."""
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__


def settled(tokens: list[int], until: str, decode: Callable[[list[int]], str]) -> bool:
    """Whether the answer a row's ``tokens`` hold is settled (``GenerateRequest.until``; ""
    never is): looked for only where the newest tokens could have closed it (a brace or a
    dollar), so the whole text is decoded rarely; a point missed here is cut to by
    ``BoundedLM`` all the same."""
    if not until or not any(c in decode(tokens[-2:]) for c in "}$"):
        return False
    from harness.answers.extract import answer_end  # the extractors load on first use

    return answer_end(decode(tokens), until) is not None


def trim_at_stop(text: str, stops: Sequence[str]) -> str:
    """Cut *text* before the first occurrence of any stop sequence."""
    cuts = [i for i in (text.find(s) for s in stops if s) if i >= 0]
    return text[: min(cuts)] if cuts else text
