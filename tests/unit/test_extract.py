"""Answer extraction: every kind, with its edge cases."""

from __future__ import annotations

import pytest

from harness.answers.extract import extract
from harness.errors import TaskSpecError
from harness.spec.patterns import compile_pattern
from harness.spec.scoring import ExtractSpec


def ex(text: str, kind: str, pattern: str | None = None) -> str:
    return extract(text, ExtractSpec.model_validate({"kind": kind, "pattern": pattern}))


def test_strip() -> None:
    assert ex("  42 \n", "strip") == "42"
    assert ex("", "strip") == ""
    assert extract("\t a b \n", ExtractSpec()) == "a b"  # strip is the default


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("first\nsecond", "first"),
        ("\n\n   \n  answer  \nmore", "answer"),
        ("only", "only"),
        ("", ""),
        ("   \n\t\n", ""),
        ("a\r\nb", "a"),
    ],
)
def test_first_line(text: str, want: str) -> None:
    assert ex(text, "first_line") == want


def test_regex_group_and_whole_match() -> None:
    assert ex("Answer: 17 (final)", "regex", r"Answer:\s*(\d+)") == "17"
    assert ex("Answer: 17 (final)", "regex", r"\d+") == "17"  # no group: the whole match
    assert ex("x=1, y=2", "regex", r"(\w)=(\d)") == "x"  # the first group of the first match
    assert ex("no digits here", "regex", r"(\d+)") == ""
    assert ex("b", "regex", r"(a)?b") == ""  # the group did not take part


def test_regex_errors() -> None:
    with pytest.raises(TaskSpecError, match="pattern"):
        ex("x", "regex")
    with pytest.raises(TaskSpecError, match="invalid regex"):
        ex("x", "regex", "(unclosed")


def test_regex_compiled_once() -> None:
    compile_pattern.cache_clear()
    for _ in range(5):
        ex("a1", "regex", r"a(\d)")
    info = compile_pattern.cache_info()
    assert info.misses == 1 and info.hits == 4


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("The answer is 1,234.", "1234"),
        ("1 + 2 = 3", "3"),
        ("It is -5", "-5"),
        ("It is \u22125", "-5"),  # Unicode minus sign
        ("+7 degrees", "7"),
        ("pi is about 3.14159.", "3.14159"),
        ("so 12,345,678 people", "12345678"),
        ("10-3", "3"),  # a hyphen after a digit is not a sign
        ("step-2", "2"),
        ("costs .5 dollars", ".5"),
        ("no numbers", ""),
        ("", ""),
        ("values 1,2,3", "3"),  # not a thousands group: three numbers
        ("1,000 then 2.50", "2.50"),
    ],
)
def test_last_number(text: str, want: str) -> None:
    assert ex(text, "last_number") == want
