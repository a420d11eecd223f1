"""Take the answer out of a model's raw output, as a task's ``scoring.extract`` says.

``scoring.extract.kind`` names a registered extractor: a function ``(raw output, pattern) ->
answer`` ("" when there is none), where ``pattern`` is the task's ``scoring.extract.pattern``.
Register one with ``@extractor("name")`` (``needs_pattern=True`` when the task must give a
pattern: the task file is refused without one; ``ends=FN`` when text past a point can no longer
change the answer, ``FN(raw output)`` giving that point or None: see ``answer_end``). Other
packages add extractors with an entry point named after the extractor in group
``harness.extractors``, pointing at the function.
The built-ins are below (``harness extractors list`` shows every one with its origin).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from harness import plugins
from harness.errors import HarnessError, TaskSpecError
from harness.registry import Registry
from harness.spec.patterns import search
from harness.spec.scoring import ExtractSpec

ExtractFn = Callable[[str, str | None], str]
EndFn = Callable[[str], int | None]


@dataclass(frozen=True)
class Extractor:
    """A registered extractor."""

    name: str  # the name task files give as scoring.extract.kind
    fn: ExtractFn  # (raw output, scoring.extract.pattern) -> the answer ("" when none)
    needs_pattern: bool = False  # scoring.extract.pattern is required (checked at task load)
    ends: EndFn | None = None  # where the answer is settled: text past it cannot change it
    reference: ExtractFn | None = None  # how a reference target is read, where not as an answer


def _from_object(name: str, obj: object) -> Extractor:
    return obj if isinstance(obj, Extractor) else Extractor(name, obj)  # type: ignore[arg-type]


EXTRACTORS: Registry[Extractor] = Registry("extractor", plugins.EXTRACTORS,
                                           from_object=_from_object, list_known=True)


# ``@extractor(name, needs_pattern=False)``: register an extractor under ``name`` (a name may
# not be taken twice).
extractor = EXTRACTORS.decorator(Extractor)


def get_extractor(name: str) -> Extractor:
    """The extractor called ``name``; unknown names raise ``UnknownNameError`` with a hint."""
    return EXTRACTORS.get(name)


def extract(text: str, spec: ExtractSpec) -> str:
    """The answer in ``text`` according to ``spec`` ("" when there is none); an extractor that
    returns anything but text is one ``HarnessError`` line naming it."""
    answer = get_extractor(spec.kind).fn(text, spec.pattern)
    if not isinstance(answer, str):
        shown = repr(answer)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise HarnessError(f"extractor {spec.kind!r} ({EXTRACTORS.origin(spec.kind)}) returned "
                           f"{shown} ({type(answer).__name__}), not text: an extractor returns "
                           'the answer as a string ("" when there is none)')
    return answer


def extract_reference(target: str, spec: ExtractSpec) -> str:
    """The answer a reference target states, as the metric compares it: ``extract`` of it, or
    the extractor's own ``reference`` reading (``first_boxed``: a worked reference solution
    states its final answer in its last box, having boxed others on the way)."""
    reads = get_extractor(spec.kind).reference
    return extract(target, spec) if reads is None else reads(target, spec.pattern)


def answer_end(text: str, kind: str) -> int | None:
    """Where the answer of extractor ``kind`` in ``text`` is settled: the end of the text that
    decides it, past which nothing written can change the answer (the first ``\\boxed{}``
    closed: ``first_boxed``); None while it is not, and always for an extractor without
    ``ends``. A generation may stop there (``GenerateRequest.until``), and an answer that ran on
    past it is cut there (``models/answer_bounds``): its score is the same either way."""
    ends = get_extractor(kind).ends if kind else None
    end = ends(text) if ends is not None else None
    return end if end is not None and 0 <= end <= len(text) else None


# --- built-ins ---------------------------------------------------------------------------------

# A sign counts only when it does not follow a word character or a dot, so the "-" in "10-3"
# or "x-1" is a hyphen/operator and not a minus sign. "\u2212" is the Unicode minus sign.
_NUMBER = re.compile(
    r"(?:(?<![\w.])[-+\u2212])?"  # optional sign
    r"(?:\d+(?:,\d{3})*(?:\.\d+)?|\.\d+)"  # 1,234.5 | 1234 | .5
)


@extractor("strip")
def _strip(text: str, pattern: str | None) -> str:
    """The whole output without surrounding whitespace."""
    return text.strip()


@extractor("regex", needs_pattern=True)
def _regex(text: str, pattern: str | None) -> str:
    """The first match of ``pattern`` (a search, stopped after ``MATCH_SECONDS`` of
    ``harness.spec.patterns``): its first capturing group when the pattern has one, else the
    whole match; no match (or a group that did not take part) gives ""."""
    if pattern is None:
        raise TaskSpecError("scoring.extract.pattern: required when kind is 'regex'")
    m = search(pattern, text)
    if m is None:
        return ""
    if m.re.groups:
        group = m.group(1)
        return group if group is not None else ""
    return m.group(0)


@extractor("first_line")
def _first_line(text: str, pattern: str | None) -> str:
    """The first non-empty line, stripped."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped:
            return stripped
    return ""


@extractor("last_number")
def _last_number(text: str, pattern: str | None) -> str:
    """The last integer or decimal in the text, with an optional sign, thousands commas removed
    (``"The answer is 1,234."`` gives ``"1234"``); no number gives ""."""
    found = _NUMBER.findall(text)
    if not found:
        return ""
    num: str = found[-1].replace(",", "").replace("\u2212", "-")
    return num[1:] if num.startswith("+") else num


_BOX = re.compile(r"\\(?:boxed|fbox)\b\s*")


def _box_at(text: str, start: int, settled: bool) -> tuple[str, int] | None:
    """The box whose command ends at ``start``: (its content, where the box ends); None when it
    is left unclosed (an answer cut off inside it), and with ``settled`` also for a bare box
    ending the text (``\\boxed 1`` may still grow to ``\\boxed 12``)."""
    if start < len(text) and text[start] == "{":
        depth = 0
        for i in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                return text[start + 1 : i].strip(), i + 1
        return None
    m = re.match(r"[^\s$]+", text[start:])  # "\boxed 5$" (no braces)
    if m is None or (settled and start + m.end() == len(text)):
        return None
    return m.group(0), start + m.end()


def _boxes(text: str, settled: bool = False) -> list[tuple[str, int]]:
    """Every box of ``text`` that ``_box_at`` reads, in order."""
    return [b for m in _BOX.finditer(text) if (b := _box_at(text, m.end(), settled)) is not None]


def last_boxed(text: str) -> str:
    """Content of the last ``\\boxed{…}`` / ``\\fbox{…}`` in ``text`` ("" when there is none)."""
    boxes = _boxes(text)
    return boxes[-1][0] if boxes else ""


def first_box_end(text: str) -> int | None:
    """Where the first box of ``text`` ends, once nothing written after can change it (None:
    no box yet, or the first still open: a box nested in it must not settle the answer)."""
    m = _BOX.search(text)
    box = _box_at(text, m.end(), settled=True) if m else None
    return box[1] if box else None


@extractor("boxed")
def _boxed(text: str, pattern: str | None) -> str:
    """The content of the last ``\\boxed{...}`` or ``\\fbox{...}`` (braces balanced, so
    ``\\boxed{\\frac{1}{2}}`` gives ``\\frac{1}{2}``); also ``\\boxed 5`` (one token, no braces);
    a box left unclosed (cut-off output) is skipped for the one before; none gives ""."""
    return last_boxed(text)


@extractor("first_boxed", ends=first_box_end, reference=_boxed)
def _first_boxed(text: str, pattern: str | None) -> str:
    """The content of the first closed ``\\boxed{...}`` or ``\\fbox{...}`` (as ``boxed``
    reads a box): for few-shot worked solutions, whose exemplars box their final answer at the
    end. A completion model that goes on past its solution (a second attempt, a new "Human:"
    turn, another problem) boxes other answers after it; the first is the one it gave. The
    answer is settled once that box closes (``answer_end``); none gives "". A reference
    solution is read by its last box (``extract_reference``): some of MATH's box an
    alternative or an intermediate answer before their final one."""
    boxes = _boxes(text)
    return boxes[0][0] if boxes else ""
