"""Per-sample metrics: ``(extracted, target) -> score`` (1.0 correct, 0.0 wrong, or between).

Register one with ``@metric("name")``. Other packages can add metrics without importing the
harness first: an entry point named after the metric in group ``harness.metrics``, pointing at
the function, is loaded the first time ``get_metric`` is asked for that name.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable
from fractions import Fraction
from typing import cast

from harness import plugins
from harness.errors import HarnessError
from harness.registry import Registry

MetricFn = Callable[[str, str], float]

ENTRY_POINT_GROUP = plugins.METRICS


def _from_object(name: str, obj: object) -> MetricFn:
    """A plugin's metric function (the registry checked that it is callable)."""
    return cast(MetricFn, obj)

METRICS: Registry[MetricFn] = Registry(
    "metric", ENTRY_POINT_GROUP, from_object=_from_object, list_known=True)
_REGISTRY = METRICS.items  # registered metrics by name


_BINARY: set[str] = set()  # metrics declared to give only 0.0 and 1.0


def metric(name: str, *, binary: bool = False) -> Callable[[MetricFn], MetricFn]:
    """Decorator registering a metric under ``name`` (a name may not be taken twice).
    ``binary``: it gives only 0.0 and 1.0, so its mean is an accuracy (tables say ``acc %``;
    other metrics give partial credit, and their mean is shown as ``score %``)."""

    def register(fn: MetricFn) -> MetricFn:
        METRICS.add(name, fn)
        if binary:
            _BINARY.add(name)
        return fn

    return register


def is_binary(name: str) -> bool:
    """Whether the registered metric ``name`` was declared binary (only 0.0 and 1.0)."""
    return name in _BINARY


def metric_names() -> list[str]:
    """Every metric name that ``get_metric`` accepts: registered ones and entry points."""
    return METRICS.names()


def get_metric(name: str) -> MetricFn:
    """The metric called ``name``; unknown names raise ``UnknownNameError`` with a hint."""
    return METRICS.get(name)


def checked_metric(name: str) -> MetricFn:
    """``get_metric(name)`` whose every answer is checked: a number from 0.0 to 1.0 (a bool
    counts as 0.0 or 1.0); anything else (text, None, NaN, 2.5) is one ``HarnessError`` line
    naming the metric and where it comes from, never a silently wrong score."""
    fn = get_metric(name)

    def score(extracted: str, target: str) -> float:
        value = fn(extracted, target)
        if isinstance(value, numbers.Real) and 0.0 <= float(value) <= 1.0:
            return float(value)
        shown = repr(value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise HarnessError(f"metric {name!r} ({METRICS.origin(name)}) returned {shown} "
                           f"({type(value).__name__}), not a score: a metric returns a number "
                           "from 0.0 (wrong) to 1.0 (right)")

    return score


# --- built-ins ---------------------------------------------------------------------------------

_ARTICLES = frozenset({"a", "an", "the"})
# Punctuation stripped from the ends of an answer. Signs, "$", "%" and "#" are kept: they change
# what the answer means.
_SURROUNDING = "\"'`\u201c\u201d\u2018\u2019()[]{}<>*_.,;:!?"
_WS = re.compile(r"\s+")


def normalize_answer(s: str) -> str:
    """Lowercase, collapse whitespace, strip surrounding punctuation, drop articles.

    Articles are dropped only when something else remains, so the answer "a" (a choice letter)
    stays "a" and an empty output never matches it.
    """
    text = _WS.sub(" ", s.lower()).strip()
    prev = None
    while prev != text:  # quotes inside brackets inside a trailing period, etc.
        prev = text
        text = text.strip(_SURROUNDING).strip()
    words = text.split(" ") if text else []
    kept = [w for w in words if w not in _ARTICLES]
    return " ".join(kept if kept else words)


def parse_number(s: str) -> Fraction | None:
    """An integer, decimal or fraction ("3/4") with commas removed; None when unparseable."""
    text = s.strip().replace(",", "").replace("\u2212", "-").replace(" ", "")
    if text.endswith(".") and not text.endswith(".."):
        text = text[:-1]
    if not text:
        return None
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        return None


_REL_TOL = Fraction(1, 10**6)


@metric("exact_match", binary=True)
def exact_match(extracted: str, target: str) -> float:
    """1.0 when the answer equals the target after stripping whitespace."""
    return 1.0 if extracted.strip() == target.strip() else 0.0


@metric("normalized_match", binary=True)
def normalized_match(extracted: str, target: str) -> float:
    """1.0 when both are equal after ``normalize_answer``."""
    return 1.0 if normalize_answer(extracted) == normalize_answer(target) else 0.0


@metric("numeric_match", binary=True)
def numeric_match(extracted: str, target: str) -> float:
    """1.0 when both parse as the same number: integers must be equal exactly (a 16-digit sum
    that is off by one is wrong); other values may differ by a relative 1e-6 (rounded decimals)."""
    a, b = parse_number(extracted), parse_number(target)
    if a is None or b is None:
        return 0.0
    if a.denominator == 1 and b.denominator == 1:
        return 1.0 if a == b else 0.0
    return 1.0 if abs(a - b) <= _REL_TOL * max(abs(a), abs(b)) else 0.0


@metric("string_match_all")
def string_match_all(extracted: str, target: str) -> float:
    """RULER's ``string_match_all``: the fraction of references (the target's non-empty lines)
    that occur in the answer, case-insensitively (1.0: every reference is there)."""
    refs = [r.strip().lower() for r in target.splitlines() if r.strip()]
    if not refs:
        return 0.0
    pred = extracted.lower()
    return sum(1.0 for r in refs if r in pred) / len(refs)


@metric("last_number_match", binary=True)
def last_number_match(extracted: str, target: str) -> float:
    """``numeric_match`` of the last number in the answer and the last number in the target:
    for scratchpad templates, whose reference is a worked solution ending in the answer."""
    from harness.answers.extract import extract
    from harness.spec.scoring import ExtractSpec

    last = ExtractSpec(kind="last_number")
    return numeric_match(extract(extracted, last), extract(target, last))


@metric("math_equiv", binary=True)
def math_equiv_metric(extracted: str, target: str) -> float:
    """1.0 when the answer is equivalent to the target under ``harness.answers.math_equiv``; a
    target holding a worked solution is first reduced to its last ``\\boxed{}`` (MATH format)."""
    from harness.answers.extract import last_boxed
    from harness.answers.math_equiv import math_equiv

    reference = last_boxed(target) if "\\boxed" in target or "\\fbox" in target else target
    if not extracted.strip() or not reference.strip():
        return 0.0
    return 1.0 if math_equiv(extracted, reference) else 0.0
