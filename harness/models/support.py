"""Small helpers every backend uses: ``--model-args`` errors and booleans, an exception in one
line, and cutting generated text at its stop strings. Imports nothing heavy."""

from __future__ import annotations

from collections.abc import Sequence

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


def trim_at_stop(text: str, stops: Sequence[str]) -> str:
    """Cut *text* before the first occurrence of any stop sequence."""
    cuts = [i for i in (text.find(s) for s in stops if s) if i >= 0]
    return text[: min(cuts)] if cuts else text
