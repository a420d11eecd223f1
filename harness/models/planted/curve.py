"""The planted model's arguments (``--model-args``) and the accuracy it plants on an item.

Two ways to declare the truth:

- ``d50=D,sigma=S,top=T``: the horizon model's ``normal`` curve
  (``scoring/horizon_model.fitted_accuracy``), accuracy ``base + (top − base) · Φ(−(ln d −
  ln D) / S)`` at difficulty ``d`` in the task's own units: ``top`` on easy items (default 1),
  halfway at ``D``, σ ``S`` in ln units (default 0.3), falling to the item's baseline ``base``;
- ``acc=A1/A2/…``: one accuracy per bucket, in the task's bucket order (a horizon search's item
  takes its nearest bucket's, by ln distance).

The baseline is what the planted model scores when it knows nothing: for multiple choice a
uniform guess among the k choices (1/k), for generated answers 0 (every answer it does not know
is wrong), unless ``base=B`` says otherwise. ``shift=X`` lowers the accuracy of OOD items asked
with ID exemplars by X (not under the matched-exemplar control, and not without exemplars), so
the control (``gaps/shift``) has an exemplar shift of X to find. Also ``tokenizer=``
(``planted/tokens``), ``context=N`` (the context length it reports, default 32768) and
``seed=N`` (with the run's seed, the item, template and target: which items it knows).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from harness.errors import HarnessError
from harness.models.support import bad_arg
from harness.requests import AskedItem

KNOWN = ("d50", "sigma", "top", "acc", "base", "shift", "tokenizer", "context", "seed")
DEFAULT_SIGMA = 0.3
DEFAULT_CONTEXT = 32768


@dataclass(frozen=True)
class Curve:
    """The planted truth (see module)."""

    d50: float | None = None  # the curve's midpoint, in the task's difficulty units
    sigma: float = DEFAULT_SIGMA  # its width, in ln units
    top: float = 1.0  # accuracy on easy items
    acc: tuple[float, ...] | None = None  # or: one accuracy per bucket
    base: float | None = None  # accuracy knowing nothing (None: 1/k, or 0 for generation)
    shift: float = 0.0  # lower by this on OOD items under ID exemplars
    tokenizer: str | None = None  # tokenizer= as given
    context: int = DEFAULT_CONTEXT  # context length in tokens
    seed: int = 0  # the model's own seed

    def describe(self) -> str:
        """The truth in the ``--model-args`` form, e.g. ``d50=20,sigma=0.3,top=0.95``."""
        if self.acc is not None:
            parts = ["acc=" + "/".join(f"{a:g}" for a in self.acc)]
        else:
            parts = [f"d50={self.d50:g}", f"sigma={self.sigma:g}", f"top={self.top:g}"]
        if self.base is not None:
            parts.append(f"base={self.base:g}")
        if self.shift:
            parts.append(f"shift={self.shift:g}")
        return ",".join(parts)

    def floor(self, item: AskedItem) -> float:
        """The item's baseline: ``base``, else a uniform guess's (1/k) or 0."""
        if self.base is not None:
            return self.base
        return 1.0 / len(item.choices) if item.choices else 0.0

    def accuracy(self, item: AskedItem) -> float:
        """The accuracy planted on ``item``: the curve (or its bucket's value), less ``shift``
        where the item is OOD and asked with ID exemplars."""
        if self.acc is not None:
            p = self.acc[bucket_of(self.acc, item)]
        elif item.difficulty <= 0:
            p = self.top  # no ln d: the easiest there is
        else:
            assert self.d50 is not None
            p = _normal(item.difficulty, self.d50, self.sigma, self.top, self.floor(item))
        if self.shift and item.role == "OOD" and item.shots > 0 and not item.matched:
            p -= self.shift
        return min(1.0, max(0.0, p))


@lru_cache(maxsize=4096)
def _normal(d: float, d50: float, sigma: float, top: float, floor: float) -> float:
    """The horizon model's normal curve at ``d`` (each difficulty computed once)."""
    from harness.scoring.horizon_model import fitted_accuracy

    return fitted_accuracy(d, d50, sigma, top, floor)


def bucket_of(acc: tuple[float, ...], item: AskedItem) -> int:
    """The bucket whose ``acc=`` value ``item`` takes: its own, or for a horizon search's item
    the fixed bucket nearest its difficulty (by ln distance)."""
    if len(acc) != len(item.buckets):
        raise HarnessError(f"--model-args: acc gives {len(acc)} accuracies but task {item.task} "
                           f"has {len(item.buckets)} buckets (one per bucket, in order, "
                           "separated by /)")
    if not item.searched:
        return item.bucket_index

    def ln(x: float) -> float:
        return math.log(max(x, 1e-9))

    d = ln(item.difficulty)
    return min(range(len(item.buckets)), key=lambda i: (
        0.0 if ln(item.buckets[i][0]) <= d <= ln(item.buckets[i][1])
        else min(abs(d - ln(item.buckets[i][0])), abs(d - ln(item.buckets[i][1]))), i))


def _number(key: str, value: str, lo: float, hi: float, what: str,
            open_lo: bool = False) -> float:
    try:
        x = float(value)
    except ValueError:
        raise bad_arg(key, what, value) from None
    if not math.isfinite(x) or x < lo or x > hi or (open_lo and x == lo):
        raise bad_arg(key, what, value)
    return x


def _integer(key: str, value: str, lo: int, what: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise bad_arg(key, what, value) from None
    if n < lo:
        raise bad_arg(key, what, value)
    return n


def parse_curve(args: Mapping[str, str]) -> Curve:
    """The ``--model-args`` of ``planted:``; every problem one ``HarnessError`` line naming the
    key and what it expects."""
    unknown = sorted(set(args) - set(KNOWN))
    if unknown:
        raise HarnessError(f"--model-args: planted: unknown key {unknown[0]!r}; known keys: "
                           f"{', '.join(KNOWN)}")
    if ("d50" in args) == ("acc" in args):
        raise HarnessError("--model-args: planted: give d50=D (with sigma=S, top=T) or acc=A/B/... "
                           "(one accuracy per bucket), one of the two")
    if "acc" in args and ({"sigma", "top"} & set(args)):
        raise HarnessError("--model-args: planted: sigma and top belong to the d50 curve, not to "
                           "acc=A/B/... (per-bucket accuracies)")
    prob = "a number from 0 to 1"
    acc = None
    if "acc" in args:
        acc = tuple(_number("acc", a.strip(), 0.0, 1.0,
                            "accuracies from 0 to 1 separated by / (one per bucket)")
                    for a in args["acc"].split("/"))
    return Curve(
        d50=_number("d50", args["d50"], 0.0, math.inf,
                    "a positive number (the difficulty where accuracy is halfway down)",
                    open_lo=True) if "d50" in args else None,
        sigma=_number("sigma", args["sigma"], 0.0, math.inf,
                      "a positive number (the fall's width in ln units)", open_lo=True)
        if "sigma" in args else DEFAULT_SIGMA,
        top=_number("top", args["top"], 0.0, 1.0, prob) if "top" in args else 1.0,
        acc=acc,
        base=_number("base", args["base"], 0.0, 1.0, prob) if "base" in args else None,
        shift=_number("shift", args["shift"], 0.0, 1.0, prob) if "shift" in args else 0.0,
        tokenizer=args.get("tokenizer") or None,
        context=_integer("context", args["context"], 1, "a positive integer (tokens)")
        if "context" in args else DEFAULT_CONTEXT,
        seed=_integer("seed", args["seed"], 0, "a non-negative integer")
        if "seed" in args else 0,
    )
