"""The regexes of task files (``scoring.extract.pattern``, ``fields.difficulty_pattern``):
compiled once, checked, and every match run under a time bound.

A task file may come from anyone, so its regexes are treated like untrusted code:

- the syntax is Python's ``re`` (parsed by ``re``, so the accepted language is unchanged);
- a pattern that repeats a group which itself repeats, so that one text splits in many ways
  (``(a+)+``, ``(\\w+\\s?)*``), is refused: a failing match of such a pattern backtracks for
  exponential time in a backtracking engine;
- counted repeats may expand to at most ``MAX_EXPANSION`` pattern elements (the engine builds
  ``a{1000000000}`` element by element, for minutes, and that cannot be interrupted);
- matching runs in the ``regex`` engine, which stops a match after ``MATCH_SECONDS``: that is a
  one-line ``TaskSpecError`` naming the key, so the task fails alone instead of hanging;
- ``check_pattern`` also runs the pattern on hostile probe texts (long runs of the characters it
  names and of common classes) when the task file loads, so ``harness tasks validate`` and
  ``harness eval`` report a pattern that exceeds the bound before any model loads.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from harness.errors import TaskSpecError

if TYPE_CHECKING:
    import regex

MATCH_SECONDS = 1.0  # the longest one match (search) of a task-file regex may run
MAX_EXPANSION = 100_000  # pattern elements a regex may expand to through counted repeats
PROBE_CHARS = 2_000  # length of the hostile probe texts check_pattern runs
_EXTRA_PROBE_CHARS = "a0 \n,.-_!éA"  # besides the pattern's own literal characters


class RegexTimeout(TaskSpecError):
    """A match ran over ``MATCH_SECONDS`` and was stopped."""


def _parser() -> Any:
    """Python's own regex parser (``re._parser``; ``sre_parse`` before Python 3.11)."""
    return importlib.import_module("re._parser" if sys.version_info >= (3, 11) else "sre_parse")


@lru_cache(maxsize=256)
def compile_pattern(pattern: str, key: str = "scoring.extract.pattern") -> regex.Pattern[str]:
    """Compile a task-file regex once; a bad or refused pattern is a task-spec error naming
    ``key``."""
    import regex

    p = _parser()
    try:
        re.compile(pattern)  # the accepted syntax is re's, checked in full
        tree = p.parse(pattern)
    except re.error as exc:
        raise TaskSpecError(f"{key}: invalid regex {pattern!r}: {exc}") from None
    if _expansion(p, tree) > MAX_EXPANSION:
        raise TaskSpecError(
            f"{key}: regex {pattern!r} expands to over {MAX_EXPANSION:,} elements through its "
            "counted repeats (like 'a{1000000}'); use smaller counts")
    if _nested_repeat(p, tree):
        raise TaskSpecError(
            f"{key}: regex {pattern!r} repeats a group that itself repeats (like '(a+)+' or "
            "'(\\w+\\s?)*'): a text that fails to match can take the engine exponential time; "
            "repeat at one level only (e.g. '(a+)+' -> 'a+')")
    try:
        return regex.compile(pattern)
    except regex.error as exc:
        raise TaskSpecError(f"{key}: invalid regex {pattern!r}: {exc}") from None


def search(pattern: str, text: str, key: str = "scoring.extract.pattern"
           ) -> regex.Match[str] | None:
    """The first match of ``pattern`` in ``text``, stopped after ``MATCH_SECONDS`` (then a
    ``TaskSpecError`` naming ``key``)."""
    rx = compile_pattern(pattern, key)
    try:
        return rx.search(text, timeout=MATCH_SECONDS)
    except TimeoutError:
        raise RegexTimeout(
            f"{key}: regex {pattern!r} ran over {MATCH_SECONDS:g} s on a {len(text):,}-character "
            "text and was stopped (it backtracks too much); simplify it") from None


@lru_cache(maxsize=256)
def check_pattern(pattern: str, key: str) -> None:
    """Compile ``pattern`` and run it on hostile probe texts; a match over the time bound is a
    ``TaskSpecError`` naming ``key`` and the probe."""
    compile_pattern(pattern, key)
    for probe in _probes(pattern):
        try:
            search(pattern, probe, key)
        except RegexTimeout:
            shown = probe[:12] + ("…" if len(probe) > 12 else "")
            raise TaskSpecError(
                f"{key}: regex {pattern!r} ran over {MATCH_SECONDS:g} s on a {len(probe):,}-"
                f"character probe text ({shown!r}); a text like it would stop the task "
                "at run time; simplify the pattern") from None


def _probes(pattern: str) -> Iterator[str]:
    """Long runs of one character (or of a character and a space), each also followed by a
    character that is unlikely to complete a match: what makes backtracking explode."""
    own = [c for c in dict.fromkeys(pattern) if c.isalnum() or c in " ,.:;!?=#-_'\"/"]
    for c in dict.fromkeys(own[:12] + list(_EXTRA_PROBE_CHARS)):
        for run in (c * PROBE_CHARS, (c + " ") * (PROBE_CHARS // 2)):
            yield run
            yield run + "\x00"


# --- static checks on re's parse tree ---------------------------------------------------------


def _repeat_ops(p: Any) -> tuple[Any, ...]:
    return (p.MAX_REPEAT, p.MIN_REPEAT)


def _children(p: Any, op: Any, av: Any) -> list[Any]:
    """The sub-patterns directly inside one parse-tree item."""
    if op in (*_repeat_ops(p), p.POSSESSIVE_REPEAT if hasattr(p, "POSSESSIVE_REPEAT") else None):
        return [av[2]]
    if op is p.SUBPATTERN:
        return [av[3]]
    if op is p.BRANCH:
        return list(av[1])
    if op in (p.ASSERT, p.ASSERT_NOT):
        return [av[1]]
    if op is p.GROUPREF_EXISTS:
        return [x for x in av[1:] if x is not None]
    if hasattr(p, "ATOMIC_GROUP") and op is p.ATOMIC_GROUP:
        return [av]
    return []


def _expansion(p: Any, seq: Any) -> int:
    """How many elements ``seq`` expands to when counted repeats are written out."""
    total = 0
    for op, av in seq:
        inner = sum(_expansion(p, c) for c in _children(p, op, av)) or 1
        if op in _repeat_ops(p) or op is getattr(p, "POSSESSIVE_REPEAT", None):
            inner *= max(av[0], 1)
        total += inner
        if total > MAX_EXPANSION:  # stop early: the products can be astronomically large
            return total
    return total


def _min_width(p: Any, seq: Any, item: Any) -> int:
    return int(p.SubPattern(seq.state, [item]).getwidth()[0])


def _splits(p: Any, seq: Any) -> bool:
    """Whether ``seq`` can match one text in several ways by cutting an unbounded repeat inside
    it: an unbounded repeat (directly, or in a group or branch) next to only optional items."""
    items = list(seq)
    for i, (op, av) in enumerate(items):
        others = items[:i] + items[i + 1:]
        if op in _repeat_ops(p) and av[1] == p.MAXREPEAT:
            spreads = av[2].getwidth()[0] > 0
        elif op is p.SUBPATTERN:
            spreads = _splits(p, av[3])
        elif op is p.BRANCH:
            spreads = any(_splits(p, b) for b in av[1])
        else:
            spreads = False
        if spreads and all(_min_width(p, seq, o) == 0 for o in others):
            return True
    return False


def _nested_repeat(p: Any, seq: Any) -> bool:
    """Whether some unbounded backtracking repeat of ``seq`` repeats a body that splits."""
    for op, av in seq:
        if op in _repeat_ops(p) and av[1] == p.MAXREPEAT and _splits(p, av[2]):
            return True
        if any(_nested_repeat(p, c) for c in _children(p, op, av)):
            return True
    return False
