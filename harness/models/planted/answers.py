"""How the planted model writes an answer, right or wrong, as a capable chat model would.

- **Right**: the first of the target, the target as the metric compares it (``AskedItem.answer``)
  and that answer in ``\\boxed{}`` that the task's own extraction and metric score 1: the exact
  string for plain tasks, the worked solution ending in ``\\boxed{…}`` for MATH (its target is
  one), the worked scratchpad for scratchpad templates. A target its own task does not score 1
  is written as it is.
- **Wrong**: the compared answer replaced, inside the right text, by a near miss (one digit or
  letter changed, or one item of a list dropped) or by the most common other answer of the
  items announced with it (same task, template and bucket; only where an answer is given more
  than once), whichever the item's draw picks first; a candidate must score below 1 under the
  task's metric (for a metric with partial credit, 0 where one does), the next is tried
  otherwise. The most common answer depends on the chunk the item was announced in
  (``--chunk-size``); the same seeds and chunks give the same bytes.
- **Chain of thought** (``--strategy cot``): the reasoning call gets ``REASONING`` and the worked
  text on one paragraph; the answer call, recognised by that opening in its prompt, gets the
  answer alone (`` 42``) or boxed (`` \\boxed{42}``), whichever the task's extraction reads.
"""

from __future__ import annotations

import random
import re
import string
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from harness.requests import AskedItem

REASONING = " Working it through:"  # how the planted model's reasoning opens (cot)
DONT_KNOW = "I don't know."
_BLANK_LINES = re.compile(r"\n\s*\n")


@lru_cache(maxsize=64)
def _extract_spec(kind: str, pattern: str | None) -> Any:
    from harness.spec.scoring import ExtractSpec

    return ExtractSpec(kind=kind, pattern=pattern)


def extracted(item: AskedItem, text: str) -> str:
    """The answer the task's extraction takes out of ``text``."""
    from harness.answers.extract import extract

    return extract(text, _extract_spec(item.extract, item.pattern))


def score(item: AskedItem, text: str) -> float:
    """What the task's extraction and metric give ``text`` as an answer to ``item``."""
    from harness.answers.metrics import checked_metric

    return float(checked_metric(item.metric)(extracted(item, text), item.target))


def right_text(item: AskedItem) -> str:
    """The right answer as the model writes it (see module)."""
    for text in dict.fromkeys((item.target, item.answer, f"\\boxed{{{item.answer}}}")):
        if score(item, text) >= 1.0:
            return text
    return item.target


def written(item: AskedItem, right: str, form: str) -> str:
    """``right`` with its compared answer replaced by ``form``: the whole text for a plain
    task; inside a worked solution, the last occurrence of the answer that the task's
    extraction then reads as ``form`` (the one in the last box, not a later check of it),
    else the last occurrence."""
    a = item.answer
    if form == a:
        return right
    if right.strip() == a.strip():
        return form
    if not a or a not in right:
        return form
    at = [i for i in range(len(right)) if right.startswith(a, i)]
    texts = [right[:i] + form + right[i + len(a):] for i in reversed(at)]
    return next((t for t in texts if extracted(item, t).strip() == form.strip()), texts[0])


def near_miss(answer: str, rng: random.Random) -> str:
    """One digit or letter changed, or (a list, half the time) one item dropped."""
    parts = answer.split()
    if len(parts) >= 2 and rng.random() < 0.5:
        del parts[rng.randrange(len(parts))]
        return ("\n" if "\n" in answer else " ").join(parts)
    digits = [i for i, ch in enumerate(answer) if ch.isdigit()]
    if digits:
        i = rng.choice(digits)
        new = str((int(answer[i]) + rng.randint(1, 9)) % 10) if answer[i] in string.digits \
            else "0"
        return answer[:i] + new + answer[i + 1:]
    letters = [i for i, ch in enumerate(answer) if ch.isalpha()]
    if letters:
        i = rng.choice(letters)
        ch = answer[i]
        new = rng.choice([c for c in string.ascii_lowercase if c != ch.lower()])
        return answer[:i] + (new.upper() if ch.isupper() else new) + answer[i + 1:]
    return answer + "0"


def most_common(answer: str, others: Sequence[str]) -> str | None:
    """The most frequent of ``others`` that is not ``answer`` (ties: the first in text order),
    where one is common (given twice or more; unique answers have none)."""
    counts = Counter(o for o in others if o.strip() != answer.strip())
    if not counts:
        return None
    best = min(counts, key=lambda o: (-counts[o], o))
    return best if counts[best] > 1 else None


def wrong_form(item: AskedItem, right: str, rng: random.Random, others: Sequence[str]) -> str:
    """A wrong answer in the compared form (see module)."""
    from harness.answers.metrics import is_binary

    a = item.answer
    first = [near_miss(a, rng), most_common(a, others)]
    if rng.random() < 0.5:
        first.reverse()
    tried = [*first, *(near_miss(a, rng) for _ in range(4)), "0", DONT_KNOW]
    candidates = [w for w in dict.fromkeys(t for t in tried if t is not None) if w != a]
    scores: dict[str, float] = {}  # each candidate scored once, when first looked at
    for zero in ((False,) if is_binary(item.metric) else (True, False)):
        for w in candidates:
            if w not in scores:
                scores[w] = score(item, written(item, right, w))
            if scores[w] == 0.0 or (not zero and scores[w] < 1.0):
                return w
    return candidates[0]  # nothing scores below 1: the task takes any answer


def reasoning(item: AskedItem, right: str, form: str) -> str:
    """The reasoning call's text: ``REASONING``, then the worked text (or the answer) on one
    paragraph (the cot chain stops its reasoning at a blank line)."""
    body = written(item, right, form).strip()
    if body == form.strip():
        body = f"the answer comes to {form.strip()}."
    return f"{REASONING} {_BLANK_LINES.sub(chr(10), body)}"


def final(item: AskedItem, right: str, form: str, good: bool) -> str:
    """The answer call's text: the answer alone, boxed or in the worked text, whichever the
    task's extraction reads as ``form`` (right: scores 1; wrong: below 1)."""
    options = (f" {form}", f" \\boxed{{{form}}}", f" {written(item, right, form)}")
    fits = []
    for text in options:
        if (score(item, text) >= 1.0) == good:
            if extracted(item, text).strip() == form.strip():
                return text
            fits.append(text)
    return fits[0] if fits else options[0]
