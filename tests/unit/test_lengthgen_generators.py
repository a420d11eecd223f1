"""lengthgen generators: determinism, difficulty control and answers checked independently."""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Any

import pytest

from harness.generators.passkey import FILLER
from harness.generators.registry import get_generator, run_generator

NAMES = ["addition", "multiplication", "parity", "sort", "count", "mode", "variable_chain",
         "passkey", "copy", "reverse"]


def gen(name: str, seed: int, difficulty: int, **params: Any) -> dict[str, Any]:
    return run_generator(get_generator(name), seed, difficulty, params)


@pytest.mark.parametrize("name", NAMES)
def test_deterministic_and_seed_dependent(name: str) -> None:
    d = 256 if name == "passkey" else 6
    a = [gen(name, s, d) for s in range(20)]
    assert a == [gen(name, s, d) for s in range(20)]
    assert len({repr(r) for r in a}) > 10  # different seeds give different items


def test_generators_use_only_their_rng() -> None:
    random.seed(1)
    x = gen("variable_chain", 3, 5, distractors=2)
    random.seed(2)
    assert gen("variable_chain", 3, 5, distractors=2) == x


@pytest.mark.parametrize("digits", [1, 2, 5, 9, 15])
def test_addition_digits_answer_and_scratchpad(digits: int) -> None:
    for s in range(30):
        r = gen("addition", s, digits)
        assert len(str(r["a"])) == digits and len(str(r["b"])) == digits
        assert int(r["target"]) == r["a"] + r["b"]
        rev = gen("addition", s, digits, reverse_output=True)
        assert (rev["a"], rev["b"]) == (r["a"], r["b"])
        assert rev["target"] == str(r["a"] + r["b"])[::-1]
        # the scratchpad, replayed: each step x+y+c=s uses the operands' digits from the right
        # and the previous carry; the sums' last digits (plus a final carry) give the answer
        steps = re.findall(r"(\d)\+(\d)\+(\d)=(\d+)", r["scratchpad"])
        assert len(steps) == digits
        carry, out = 0, ""
        for i, (x, y, c, total) in enumerate(steps):
            assert x == str(r["a"])[-1 - i] and y == str(r["b"])[-1 - i]
            assert int(c) == carry and int(total) == int(x) + int(y) + carry
            out = str(int(total) % 10) + out
            carry = int(total) // 10
        assert int(("1" if carry else "") + out) == r["a"] + r["b"]


def test_addition_scratchpad_hand_case() -> None:
    from harness.generators.arithmetic import addition_steps

    assert addition_steps(457, 168) == "7+8+0=15, 5+6+1=12, 4+1+1=6."
    assert addition_steps(9, 9) == "9+9+0=18."


@pytest.mark.parametrize("n,m", [(1, None), (3, None), (6, None), (4, 2)])
def test_multiplication(n: int, m: int | None) -> None:
    for s in range(30):
        r = gen("multiplication", s, n, b_digits=m)
        assert len(str(r["a"])) == n and len(str(r["b"])) == (m or n)
        assert int(r["target"]) == r["a"] * r["b"]


@pytest.mark.parametrize("n", [1, 2, 8, 32])
def test_parity(n: int) -> None:
    seen = set()
    for s in range(40):
        r = gen("parity", s, n)
        bits = r["text"].split(" ")
        assert len(bits) == n and set(bits) <= {"0", "1"}
        assert r["target"] == str(bits.count("1") % 2)
        running = r["scratchpad"].split(" ")
        assert running == [str(bits[: i + 1].count("1") % 2) for i in range(n)]
        seen.add(r["target"])
    assert seen == {"0", "1"}


@pytest.mark.parametrize("n", [1, 4, 32])
def test_sort(n: int) -> None:
    for s in range(20):
        r = gen("sort", s, n)
        letters = r["text"].split(" ")
        assert len(letters) == n and r["target"] == " ".join(sorted(letters))


@pytest.mark.parametrize("n", [1, 5, 32])
def test_count(n: int) -> None:
    for s in range(20):
        r = gen("count", s, n)
        nums = [int(x) for x in r["target"].split(" ")]
        assert len(nums) == n and nums[0] == r["start"] and nums[-1] == r["end"]
        assert nums == list(range(r["start"], r["start"] + n)) and 0 <= r["start"] < 100


@pytest.mark.parametrize("n", [1, 2, 3, 8, 32])
def test_mode_is_unique_most_frequent(n: int) -> None:
    for s in range(40):
        r = gen("mode", s, n)
        letters = r["text"].split(" ")
        assert len(letters) == n and set(letters) <= set("abcdef")
        (top, c1), *rest = Counter(letters).most_common()
        assert r["target"] == top and all(c < c1 for _, c in rest)


def resolve(program: str, query: str) -> str:
    """An independent interpreter: apply assignments until nothing changes."""
    env: dict[str, str] = {}
    stmts = [s.split("=") for s in program.split(", ")]
    for _ in range(len(stmts) + 1):
        for name, expr in stmts:
            if expr.isdigit():
                env[name] = expr
            elif expr in env:
                env[name] = env[expr]
    return env[query]


@pytest.mark.parametrize("n,distractors,shuffle", [(1, 0, False), (4, 2, False), (16, 2, False),
                                                   (12, 3, True)])
def test_variable_chain(n: int, distractors: int, shuffle: bool) -> None:
    for s in range(20):
        r = gen("variable_chain", s, n, distractors=distractors, shuffle=shuffle)
        stmts = r["text"].split(", ")
        assert len(stmts) == n * (distractors + 1)
        names = [x.split("=")[0] for x in stmts]
        assert len(set(names)) == len(names)  # every variable is assigned once
        assert r["target"] == resolve(r["text"], r["query"])
        # chain length: the number of hops from the query to its literal
        env = dict(x.split("=") for x in stmts)
        hops, v = 1, env[r["query"]]
        while not v.isdigit():
            v, hops = env[v], hops + 1
        assert hops == n
        assert r["trace"].split(", ")[0].startswith(r["query"] + "=")
        assert r["trace"].endswith("=" + r["target"])


def words(text: str) -> int:
    return len(text.split())


@pytest.mark.parametrize("length", [64, 128, 512, 1024])
def test_passkey_length_depth_and_key(length: int) -> None:
    for s in range(10):
        r = run_generator(get_generator("passkey"), s, length, {"reserve": 5}, words)
        prompt = f"{r['instruction']}\n{r['context']}\n{r['question']}"
        assert r["context_tokens"] == words(r["context"])
        assert r["prompt_tokens"] == words(prompt)
        assert length - 5 - 10 <= r["prompt_tokens"] <= length - 5  # within one filler sentence
        key = r["passkey"]
        assert r["target"] == key and len(key) == 5 and r["context"].count(key) == 2
        sentences = re.split(r"(?<=\.) ", r["context"])
        at = next(i for i, x in enumerate(sentences) if key in x)  # "The pass key is K."
        fillers = len(sentences) - 3  # the needle is three sentences
        assert at == round(r["depth"] * fillers)
        assert r["window_multiple"] == length / 256


def test_passkey_depths_and_fallback_counter() -> None:
    info = get_generator("passkey")
    depths = {run_generator(info, s, 256, {}, None)["depth"] for s in range(60)}
    assert depths == {0.0, 0.25, 0.5, 0.75, 1.0}
    r = run_generator(info, 0, 256, {"depths": [0.5], "instruction": "I", "question": "Q"},
                      lambda t: None)  # a model that cannot count: 4 characters a token
    longest = max(len(x) for x in FILLER) + 1
    assert r["depth"] == 0.5 and r["prompt_tokens"] == -(-len(f"I\n{r['context']}\nQ") // 4)
    assert 0 <= 256 - len(f"I\n{r['context']}\nQ") / 4 <= longest / 4
    short = run_generator(info, 0, 20, {}, words)  # too short for even the needle
    assert short["context"] == f"The pass key is {short['passkey']}. Remember it. " \
        f"{short['passkey']} is the pass key." and short["prompt_tokens"] > 20
