"""Take the answer out of a model's raw output, as a task's ``scoring.extract`` says.

Kinds:

- ``strip``: the whole output without surrounding whitespace.
- ``first_line``: the first non-empty line, stripped.
- ``regex``: the first match of ``pattern`` (``re.search``); its first capturing group when the
  pattern has one, else the whole match; no match (or a group that did not take part) gives "".
- ``last_number``: the last integer or decimal in the text, with an optional sign, thousands
  commas removed (``"The answer is 1,234."`` gives ``"1234"``); no number gives "".
- ``boxed``: the content of the last ``\\boxed{...}`` or ``\\fbox{...}`` (braces balanced, so
  ``\\boxed{\\frac{1}{2}}`` gives ``\\frac{1}{2}``); also ``\\boxed 5`` (one token, no
  braces); a box left unclosed (cut-off output) is skipped for the one before; none gives "".
"""

from __future__ import annotations

import re

from harness.errors import TaskSpecError
from harness.tasks.patterns import compile_pattern
from harness.tasks.spec import ExtractSpec

# A sign counts only when it does not follow a word character or a dot, so the "-" in "10-3"
# or "x-1" is a hyphen/operator and not a minus sign. "\u2212" is the Unicode minus sign.
_NUMBER = re.compile(
    r"(?:(?<![\w.])[-+\u2212])?"  # optional sign
    r"(?:\d+(?:,\d{3})*(?:\.\d+)?|\.\d+)"  # 1,234.5 | 1234 | .5
)


def _regex(text: str, pattern: str | None) -> str:
    if pattern is None:
        raise TaskSpecError("scoring.extract.pattern: required when kind is 'regex'")
    rx = compile_pattern(pattern)
    m = rx.search(text)
    if m is None:
        return ""
    if rx.groups:
        group = m.group(1)
        return group if group is not None else ""
    return m.group(0)


def _first_line(text: str) -> str:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped:
            return stripped
    return ""


def _last_number(text: str) -> str:
    found = _NUMBER.findall(text)
    if not found:
        return ""
    num: str = found[-1].replace(",", "").replace("\u2212", "-")
    return num[1:] if num.startswith("+") else num


_BOX = re.compile(r"\\(?:boxed|fbox)\b\s*")


def last_boxed(text: str) -> str:
    """Content of the last ``\\boxed{…}`` / ``\\fbox{…}`` in ``text`` ("" when there is none)."""
    starts = [m.end() for m in _BOX.finditer(text)]
    for start in reversed(starts):
        if start < len(text) and text[start] == "{":
            depth = 0
            for i in range(start, len(text)):
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                if depth == 0:
                    return text[start + 1 : i].strip()
            continue  # unclosed: try an earlier box
        m = re.match(r"[^\s$]+", text[start:])  # "\boxed 5$" (no braces)
        if m:
            return m.group(0)
    return ""


def extract(text: str, spec: ExtractSpec) -> str:
    """The answer in ``text`` according to ``spec`` ("" when there is none)."""
    if spec.kind == "strip":
        return text.strip()
    if spec.kind == "first_line":
        return _first_line(text)
    if spec.kind == "regex":
        return _regex(text, spec.pattern)
    if spec.kind == "last_number":
        return _last_number(text)
    if spec.kind == "boxed":
        return last_boxed(text)
    raise TaskSpecError(f"scoring.extract.kind: unknown kind {spec.kind!r}")  # pragma: no cover
