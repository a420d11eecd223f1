"""String rewriting with Markov-algorithm rule sets (instruction diversity).

Following Zhang et al. 2024 ("Instruction Diversity Drives Generalization to Unseen Tasks") and
Only-IF (Zhang et al. 2024), an *instruction* is an ordered set of rewrite rules ``lhs -> rhs``
applied to an input string as a Markov algorithm: find the first rule (in order) whose ``lhs``
occurs in the string, replace its leftmost occurrence by ``rhs``, and start again from the first
rule; stop when no rule applies, when a terminal rule (``lhs ->. rhs``) fired, or (rejected at
generation time) after ``max_steps`` steps. The rewritten string is the answer.

Strings are sequences of symbols from a *semantic domain*: single characters (letters, digits,
symbols; written without separators) or words (animals, colors; written with spaces).

Two generators:

- ``string_rewriting``: difficulty = rule-set id. The rule set depends only on
  (``rule_seed``, domain, id), never on the run seed, so ids below a split are "seen" rule sets
  and ids above it "unseen" ones (the task's buckets/roles say which). The input varies per item.
- ``string_rewriting_domains``: difficulty = index into ``domains``; every item gets a fresh rule
  set over that domain (ID domains vs a held-out domain).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.generators.registry import generator
from harness.seeding import derive_seed

# Symbol vocabularies of the semantic domains (5 symbols each keep rules applicable often).
DOMAINS: dict[str, tuple[str, ...]] = {
    "letters": ("a", "b", "c", "d", "e"),
    "digits": ("1", "2", "3", "4", "5"),
    "symbols": ("#", "@", "%", "&", "*"),
    "animals": ("cat", "dog", "cow", "pig", "hen"),
    "colors": ("red", "blue", "green", "pink", "gray"),
}
WORD_DOMAINS = frozenset({"animals", "colors"})

_FIELDS = ("rules", "input", "target", "rule_set", "domain", "n_rules", "steps")


@dataclass(frozen=True)
class Rule:
    """One rewrite rule: replace the leftmost ``lhs`` by ``rhs``; a terminal rule then halts."""

    lhs: tuple[str, ...]  # non-empty symbol sequence to find
    rhs: tuple[str, ...]  # replacement (may be empty: deletion)
    terminal: bool = False  # halt after applying this rule


def joiner(domain: str) -> str:
    """How symbols of ``domain`` are written: words with spaces, characters without."""
    return " " if domain in WORD_DOMAINS else ""


def _vocab(domain: str) -> tuple[str, ...]:
    if domain not in DOMAINS:
        raise ValueError(f"unknown domain {domain!r} (known: {', '.join(DOMAINS)})")
    return DOMAINS[domain]


def _find(seq: Sequence[str], pat: Sequence[str]) -> int:
    """Index of the leftmost occurrence of ``pat`` in ``seq``, or -1."""
    n = len(pat)
    for i in range(len(seq) - n + 1):
        if tuple(seq[i : i + n]) == tuple(pat):
            return i
    return -1


def apply_rules(
    rules: Sequence[Rule], symbols: Sequence[str], max_steps: int
) -> tuple[tuple[str, ...], int, bool]:
    """Run the Markov algorithm: (final symbols, steps taken, halted within ``max_steps``)."""
    cur = tuple(symbols)
    for step in range(max_steps + 1):
        for rule in rules:
            i = _find(cur, rule.lhs)
            if i >= 0:
                break
        else:
            return cur, step, True
        if step == max_steps:
            return cur, step, False
        cur = cur[:i] + rule.rhs + cur[i + len(rule.lhs) :]
        if rule.terminal:
            return cur, step + 1, True
    raise AssertionError("unreachable")  # pragma: no cover


def format_rules(rules: Sequence[Rule], domain: str) -> str:
    """Rules as the instruction text: one per line, ``lhs -> rhs`` (terminal: ``->.``),
    an empty right-hand side written as ``(empty)``."""
    sep = joiner(domain)
    lines = []
    for r in rules:
        rhs = sep.join(r.rhs) if r.rhs else "(empty)"
        lines.append(f"{sep.join(r.lhs)} {'->.' if r.terminal else '->'} {rhs}")
    return "\n".join(lines)


def check_rule_count(domain: str, n_rules: int) -> None:
    """``ValueError`` when ``domain`` has no room for ``n_rules`` distinct rules (one per left
    side of 1-2 symbols): drawing them would never finish."""
    size = len(_vocab(domain))
    if n_rules > size + size * size:
        raise ValueError(f"n_rules: at most {size + size * size} distinct rules fit domain "
                         f"{domain!r} (left sides of 1-2 of its {size} symbols), not {n_rules}")


def random_rule_set(rng: random.Random, domain: str, n_rules: int) -> list[Rule]:
    """``n_rules`` distinct rules over ``domain``: left sides of 1-2 symbols, right sides of 0-2
    symbols, at most one terminal rule (the last one, with probability 1/4)."""
    if n_rules < 1:
        raise ValueError("n_rules must be >= 1")
    check_rule_count(domain, n_rules)
    vocab = _vocab(domain)
    rules: list[Rule] = []
    seen: set[tuple[str, ...]] = set()
    while len(rules) < n_rules:
        lhs = tuple(rng.choice(vocab) for _ in range(rng.choice((1, 2))))
        if lhs in seen:
            continue
        rhs = tuple(rng.choice(vocab) for _ in range(rng.choice((0, 1, 1, 2))))
        if rhs == lhs:
            continue
        seen.add(lhs)
        rules.append(Rule(lhs, rhs))
    if rng.random() < 0.25:
        last = rules[-1]
        rules[-1] = Rule(last.lhs, last.rhs, terminal=True)
    return rules


def _sample_item(
    rng: random.Random, rules: Sequence[Rule], domain: str, input_length: int, max_steps: int,
    tries: int = 200,
) -> tuple[tuple[str, ...], tuple[str, ...], int] | None:
    """An input on which ``rules`` halt within ``max_steps`` after at least one step."""
    vocab = _vocab(domain)
    for _ in range(tries):
        inp = tuple(rng.choice(vocab) for _ in range(input_length))
        out, steps, halted = apply_rules(rules, inp, max_steps)
        if halted and steps >= 1:
            return inp, out, steps
    return None


def _record(rules: Sequence[Rule], inp: Sequence[str], out: Sequence[str], steps: int,
            domain: str, rule_set: int) -> dict[str, Any]:
    sep = joiner(domain)
    return {
        "rules": format_rules(rules, domain), "input": sep.join(inp),
        "target": sep.join(out) if out else "(empty)", "rule_set": rule_set, "domain": domain,
        "n_rules": len(rules), "steps": steps,
    }


def _check(input_length: int, max_steps: int) -> None:
    if input_length < 1:
        raise ValueError("input_length must be >= 1")
    if max_steps < 1:
        raise ValueError("max_steps must be >= 1")


def rule_set_for(rule_seed: int, domain: str, rule_set: int, n_rules: int, input_length: int,
                 max_steps: int) -> list[Rule]:
    """The fixed rule set number ``rule_set`` (independent of any run seed): the first draw
    from its own stream that halts on random inputs often enough to be usable."""
    rng = random.Random(derive_seed(rule_seed, "rewriting", domain, n_rules, rule_set))
    probe = random.Random(derive_seed(rule_seed, "rewriting-probe", domain, rule_set))
    for _ in range(1000):
        rules = random_rule_set(rng, domain, n_rules)
        if _sample_item(probe, rules, domain, input_length, max_steps, tries=20) is not None:
            return rules
    raise ValueError(f"no usable rule set for domain {domain!r}")  # pragma: no cover


_DRAWS = 20  # inputs one rule set is tried on (rule_set_for); more draws are rare


def work(args: Mapping[str, Any]) -> tuple[float, str]:
    """About how many symbol comparisons one item takes: ``_DRAWS`` runs of the rules, each up
    to ``max_steps`` steps that look for every rule's left side in a string of at most
    ``input_length + max_steps`` symbols. Rule sets that rarely halt need more draws: the
    per-item time budget catches those."""
    n_rules, length, steps = (max(int(args[k]), 0)
                              for k in ("n_rules", "input_length", "max_steps"))
    domains = args["domains"] if "domains" in args else [args["domain"]]
    for domain in domains:
        if domain in DOMAINS:  # an unknown one: the generator says so itself
            check_rule_count(domain, n_rules)
    costs = {"n_rules": n_rules, "input_length": length, "max_steps": steps}
    return (_DRAWS * (steps + 1) * n_rules * 2 * (length + steps),
            max(costs, key=lambda k: costs[k]))


@generator("string_rewriting", difficulty="rule-set id (fixed per id)", fields=_FIELDS,
           work=work)
def string_rewriting(
    rng: random.Random, difficulty: int, *, domain: str = "letters", n_rules: int = 3,
    input_length: int = 6, max_steps: int = 12, rule_seed: int = 0,
) -> dict[str, Any]:
    """Rewrite a random input with rule set number ``difficulty`` of ``domain``."""
    _check(input_length, max_steps)
    if difficulty < 0:
        raise ValueError("rule-set id must be >= 0")
    rules = rule_set_for(rule_seed, domain, difficulty, n_rules, input_length, max_steps)
    item = _sample_item(rng, rules, domain, input_length, max_steps, tries=10_000)
    if item is None:  # pragma: no cover - rule_set_for guarantees some input halts
        raise ValueError(f"rule set {difficulty} halts on no sampled input")
    inp, out, steps = item
    return _record(rules, inp, out, steps, domain, difficulty)


@generator("string_rewriting_domains", difficulty="index into domains", fields=_FIELDS,
           work=work)
def string_rewriting_domains(
    rng: random.Random, difficulty: int, *,
    domains: Sequence[str] = ("letters", "digits", "animals", "symbols"), n_rules: int = 3,
    input_length: int = 6, max_steps: int = 12,
) -> dict[str, Any]:
    """Rewrite a random input with a fresh random rule set over ``domains[difficulty]``."""
    _check(input_length, max_steps)
    if not 0 <= difficulty < len(domains):
        raise ValueError(f"domain index {difficulty} outside domains {list(domains)}")
    domain = domains[difficulty]
    for _ in range(1000):
        rules = random_rule_set(rng, domain, n_rules)
        item = _sample_item(rng, rules, domain, input_length, max_steps, tries=20)
        if item is not None:
            inp, out, steps = item
            return _record(rules, inp, out, steps, domain, -1)
    raise ValueError(f"no usable rule set for domain {domain!r}")  # pragma: no cover
