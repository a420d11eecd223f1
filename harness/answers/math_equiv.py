"""Are two MATH-style answers the same? LaTeX normalization first, then sympy where it helps.

``math_equiv(a, b)`` is the check behind the ``math_equiv`` metric:

1. Both sides are normalized (``normalize_latex``): dollar signs, ``\\left``/``\\right``, spacing
   commands, ``\\dfrac``/``\\tfrac``, degree and percent signs, trailing units written as
   ``\\text{…}`` / ``\\mbox{…}``, a leading ``x =``, thousands separators, ``\\frac12`` and
   ``\\sqrt2`` shorthand, ``.5`` → ``0.5``, ``a/b`` → ``\\frac{a}{b}``, all whitespace.
2. Equal strings are equivalent.
3. Bracketed tuples / intervals compare element by element (same brackets, same length);
   unbracketed comma lists ("all solutions") compare as multisets.
4. Otherwise both sides are translated to sympy (fractions, roots, π, powers, implicit products);
   numbers must agree to a relative 1e-6, expressions with symbols must simplify to a zero
   difference. Anything that fails to translate is simply not equivalent.

Model output is untrusted: only a small alphabet reaches ``sympy.parse_expr``, exponents are
bounded, and long strings skip the symbolic step.
"""

from __future__ import annotations

import re
from typing import Any

_MAX_SYMBOLIC = 80  # longest translated string given to sympy
_SPACING = re.compile(r"\\[,;:! ]|\\q?quad|~")
_UNIT = re.compile(r"(?<=[0-9}])\\(?:text|mbox|mathrm)\{\s*[A-Za-z][A-Za-z .^0-9]*\}$")
_TEXT = re.compile(r"\\(?:text|textbf|mbox|mathrm|mathbf)\{([^{}]*)\}")
_LEAD_VAR = re.compile(r"^[A-Za-z](?:_\{?\w+\}?)?=(?!=)")
_THOUSANDS = re.compile(r"^-?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_SIMPLE_FRAC = re.compile(r"^(-?\d+)/(\d+)$")


def _fix_shorthand(s: str) -> str:
    """``\\frac12`` and ``\\frac1{2}`` → ``\\frac{1}{2}``; ``\\sqrt3`` → ``\\sqrt{3}``."""
    s = re.sub(r"\\sqrt(\w)", r"\\sqrt{\1}", s)
    s = re.sub(r"\\frac(\w)(\w)", r"\\frac{\1}{\2}", s)
    s = re.sub(r"\\frac(\w)\{", r"\\frac{\1}{", s)
    return re.sub(r"\\frac\{([^{}]*)\}(\w)", r"\\frac{\1}{\2}", s)


def normalize_latex(answer: str) -> str:
    """A canonical string form of a LaTeX answer (see the module docstring for the rules)."""
    s = answer.strip().replace("\n", "")
    s = s.rstrip(".").strip()
    s = s.replace("\\$", "").replace("$", "")
    s = s.replace("\\left", "").replace("\\right", "")
    s = s.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    s = _SPACING.sub("", s)
    for deg in ("^{\\circ}", "^\\circ", "°"):
        s = s.replace(deg, "")
    s = s.replace("\\%", "").replace("%", "")
    s = _UNIT.sub("", s.strip())
    s = _TEXT.sub(r"\1", s)
    s = re.sub(r"\s+", "", s)
    s = _LEAD_VAR.sub("", s) or s
    if _THOUSANDS.match(s):
        s = s.replace(",", "")
    s = s.replace("{,}", "")
    s = _fix_shorthand(s)
    s = re.sub(r"(?<![\d])\.(\d)", r"0.\1", s)
    m = _SIMPLE_FRAC.match(s)
    if m:
        s = f"\\frac{{{m.group(1)}}}{{{m.group(2)}}}"
    if re.fullmatch(r"-?\d+\.\d*?0+", s):  # 2.50 → 2.5, 3.0 → 3
        s = s.rstrip("0").rstrip(".")
    return s


def _split_top(s: str) -> list[str]:
    """Split at commas that are not inside (), [], {}."""
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def _group(s: str, i: int) -> tuple[str, int]:
    """The argument starting at ``s[i]``: a ``{…}`` group (content) or one character."""
    if i >= len(s):
        raise ValueError("missing argument")
    if s[i] != "{":
        return s[i], i + 1
    depth = 0
    for j in range(i, len(s)):
        depth += {"{": 1, "}": -1}.get(s[j], 0)
        if depth == 0:
            return s[i + 1 : j], j + 1
    raise ValueError("unbalanced braces")


_WORDS = {"\\pi": "pi", "\\cdot": "*", "\\times": "*", "\\div": "/", "\\infty": "oo"}


def latex_to_expr(s: str) -> str:
    """Translate a normalized LaTeX answer into sympy syntax; ValueError when it cannot."""
    out, i = [], 0
    while i < len(s):
        if s.startswith("\\frac", i):
            num, i = _group(s, i + 5)
            den, i = _group(s, i)
            out.append(f"(({latex_to_expr(num)})/({latex_to_expr(den)}))")
        elif s.startswith("\\sqrt", i):
            i += 5
            index = "2"
            if i < len(s) and s[i] == "[":
                close = s.index("]", i)
                index, i = latex_to_expr(s[i + 1 : close]), close + 1
            arg, i = _group(s, i)
            out.append(f"(({latex_to_expr(arg)})**(1/({index})))")
        elif s[i] == "\\":
            word = next((w for w in _WORDS if s.startswith(w, i)), None)
            if word is None:
                raise ValueError(f"unsupported command at {s[i:i + 8]!r}")
            out.append(f" {_WORDS[word]} ")
            i += len(word)
        elif s[i] == "^":
            arg, i = _group(s, i + 1)
            out.append(f"**({latex_to_expr(arg)})")
        else:
            out.append({"{": "(", "}": ")"}.get(s[i], s[i]))
            i += 1
    text = "".join(out)
    if not re.fullmatch(r"[0-9a-z+\-*/(). ]*", text):
        raise ValueError("unsupported characters")
    if any(w not in {"sqrt", "pi", "oo"} and len(w) > 1 for w in re.findall(r"[a-z]+", text)):
        raise ValueError("unsupported name")
    return text


def _sympy(s: str) -> Any:
    """A sympy expression for a normalized answer, or None."""
    try:
        text = latex_to_expr(s)
    except ValueError:
        return None
    if not text.strip() or len(text) > _MAX_SYMBOLIC or text.count("**") > 3:
        return None
    if re.search(r"\*\*\(?\d{4,}", text):  # 9**99999: refuse rather than hang
        return None
    from sympy.parsing.sympy_parser import (
        convert_xor,
        implicit_multiplication_application,
        parse_expr,
        standard_transformations,
    )

    transforms = (*standard_transformations, implicit_multiplication_application, convert_xor)
    try:
        return parse_expr(text, transformations=transforms)
    except Exception:  # sympy raises many kinds (SyntaxError, TokenError, TypeError, …)
        return None


def _symbolic_equal(a: str, b: str) -> bool:
    ea, eb = _sympy(a), _sympy(b)
    if ea is None or eb is None:
        return False
    import sympy

    try:
        if not ea.free_symbols and not eb.free_symbols:
            va, vb = complex(sympy.N(ea)), complex(sympy.N(eb))
            return abs(va - vb) <= 1e-6 * max(1.0, abs(va), abs(vb))
        return bool(sympy.simplify(ea - eb) == 0)
    except Exception:  # non-numeric values (oo - oo, comparisons), overflow, …
        return False


def _equiv_normalized(a: str, b: str) -> bool:
    if a == b:
        return True
    if not a or not b:
        return False
    brackets = "([", ")]"
    if a[0] in brackets[0] and a[-1] in brackets[1] and "," in a:
        if (a[0], a[-1]) != (b[0], b[-1]):
            return False
        pa, pb = _split_top(a[1:-1]), _split_top(b[1:-1])
        if len(pa) != len(pb):
            return False
        return all(_equiv_normalized(x, y) for x, y in zip(pa, pb, strict=True))
    pa, pb = _split_top(a), _split_top(b)
    if len(pa) > 1 or len(pb) > 1:
        if len(pa) != len(pb):
            return False
        rest = list(pb)
        for x in pa:
            hit = next((j for j, y in enumerate(rest) if _equiv_normalized(x, y)), None)
            if hit is None:
                return False
            rest.pop(hit)
        return True
    return _symbolic_equal(a, b)


def math_equiv(answer: str, reference: str) -> bool:
    """Whether ``answer`` and ``reference`` denote the same MATH answer."""
    return _equiv_normalized(normalize_latex(answer), normalize_latex(reference))
