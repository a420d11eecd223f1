"""SCAN (Lake & Baroni 2018): the command grammar, its interpreter, and the split rules.

Grammar (from the paper): C → S | S and S | S after S; S → V | V twice | V thrice;
V → D | D opposite {left,right} | D around {left,right} | U; D → U {left,right} | turn {left,right};
U ∈ {walk, look, run, jump}. It yields exactly 20,910 commands (``enumerate_commands``).

``interpret`` runs a command: "x and y" runs x then y, "x after y" runs y then x.

Split rules (``split_side``): ``length``: output of at most 22 actions is train, at least 24 is test
(no command has 23); ``addprim_jump`` / ``addprim_turn_left``: every command holding the primitive
("jump" / "turn left") goes to test, except the bare primitive itself, which is in train.

Generators draw one command at random from a (split side, difficulty) pool of the enumeration.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from harness.generators.registry import generator

PRIMITIVES = ("walk", "look", "run", "jump")
DIRECTIONS = ("left", "right")
ACTION = {"walk": "I_WALK", "look": "I_LOOK", "run": "I_RUN", "jump": "I_JUMP",
          "left": "I_TURN_LEFT", "right": "I_TURN_RIGHT"}
# compact action names: ``short`` as in the SCAN README table; ``words`` one lowercase word per
# action (left = I_TURN_LEFT), one token each in common BPE vocabularies (I_TURN_LEFT costs 4)
STYLES = {
    "short": {"I_WALK": "WALK", "I_LOOK": "LOOK", "I_RUN": "RUN", "I_JUMP": "JUMP",
              "I_TURN_LEFT": "LTURN", "I_TURN_RIGHT": "RTURN"},
    "words": {"I_WALK": "walk", "I_LOOK": "look", "I_RUN": "run", "I_JUMP": "jump",
              "I_TURN_LEFT": "left", "I_TURN_RIGHT": "right"},
}
Split = Literal["length", "addprim_jump", "addprim_turn_left"]
SPLITS: tuple[Split, ...] = ("length", "addprim_jump", "addprim_turn_left")
HELD_OUT = {"addprim_jump": "jump", "addprim_turn_left": "turn left"}


def _verb_phrases() -> list[str]:
    """Every V: U, D, D opposite dir, D around dir (34 phrases)."""
    out = list(PRIMITIVES)
    for head in (*PRIMITIVES, "turn"):
        for d in DIRECTIONS:
            out += [f"{head} {d}", f"{head} opposite {d}", f"{head} around {d}"]
    return out


def enumerate_commands() -> list[str]:
    """All 20,910 SCAN commands, in a fixed order."""
    simple = [f"{v}{rep}" for v in _verb_phrases() for rep in ("", " twice", " thrice")]
    out = list(simple)
    for conj in ("and", "after"):
        out += [f"{a} {conj} {b}" for a in simple for b in simple]
    return out


def _verb(words: Sequence[str]) -> list[str]:
    if len(words) == 1:
        if words[0] not in PRIMITIVES:
            raise ValueError(f"not a SCAN primitive: {words[0]!r}")
        return [ACTION[words[0]]]
    head, *mods = words
    act = [] if head == "turn" else [ACTION[head]]
    turn = ACTION[mods[-1]]
    if len(mods) == 1:
        return [turn, *act]
    if mods[0] == "opposite":
        return [turn, turn, *act]
    if mods[0] == "around":
        return [turn, *act] * 4
    raise ValueError(f"not a SCAN phrase: {' '.join(words)!r}")


def _simple(words: Sequence[str]) -> list[str]:
    times = {"twice": 2, "thrice": 3}.get(words[-1], 1)
    return _verb(words[:-1] if times > 1 else words) * times


def interpret(command: str) -> list[str]:
    """The action sequence of a SCAN command (official action names)."""
    words = command.split()
    for conj in ("and", "after"):
        if conj in words:
            i = words.index(conj)
            first, second = _simple(words[:i]), _simple(words[i + 1 :])
            return first + second if conj == "and" else second + first
    return _simple(words)


def subcommands(command: str) -> list[str]:
    """The command's simple parts in execution order ("x after y" → [y, x])."""
    words = command.split()
    for conj in ("and", "after"):
        if conj in words:
            i = words.index(conj)
            a, b = " ".join(words[:i]), " ".join(words[i + 1 :])
            return [a, b] if conj == "and" else [b, a]
    return [command]


def split_side(command: str, actions: Sequence[str], split: Split) -> Literal["train", "test"]:
    """Which side of an official split a command falls on (by the paper's rule)."""
    if split == "length":
        return "train" if len(actions) <= 22 else "test"
    prim = HELD_OUT[split]
    holds = f" {prim} " in f" {command} "
    return "test" if holds and command != prim else "train"


@lru_cache(maxsize=1)
def all_pairs() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Every (command, actions) pair of the grammar."""
    return tuple((c, tuple(interpret(c))) for c in enumerate_commands())


@lru_cache(maxsize=64)
def _pool(split: str, side: str, lo: int, hi: int) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple(
        (c, a) for c, a in all_pairs()
        if (split == "none" or split_side(c, a, split) == side) and lo <= len(a) <= hi  # type: ignore[arg-type]
    )


def render_actions(actions: Sequence[str], style: str) -> str:
    """Actions as text: ``official`` (I_TURN_LEFT I_JUMP), ``short`` (LTURN JUMP) or ``words``
    (left jump)."""
    if style == "official":
        return " ".join(actions)
    if style in STYLES:
        return " ".join(STYLES[style][a] for a in actions)
    raise ValueError(f"style must be 'official', 'short' or 'words', got {style!r}")


def make_record(command: str, style: str) -> dict[str, Any]:
    """The fields every SCAN item carries."""
    actions = interpret(command)
    parts = subcommands(command)
    return {
        "command": command, "actions": " ".join(actions), "target": render_actions(actions, style),
        "length": len(actions), "subcommands": parts,
        "subtargets": [render_actions(interpret(p), style) for p in parts],
    }


def _bin_for(difficulty: int, bins: Sequence[Sequence[int]] | None) -> tuple[int, int]:
    if bins is None:
        return difficulty, difficulty
    for b in bins:
        if len(b) != 2 or b[0] > b[1]:
            raise ValueError(f"bins: each bin is [lowest, highest], got {list(b)}")
        if b[1] == difficulty:
            return int(b[0]), int(b[1])
    raise ValueError(f"difficulty {difficulty} is not the upper end of any of bins {bins}")


@generator("scan_length", difficulty="most output actions of the length bin",
           fields=("command", "actions", "target", "length", "subcommands", "subtargets"))
def scan_length(rng: random.Random, difficulty: int, *, bins: list[list[int]] | None = None,
                style: str = "words", split: str = "length") -> dict[str, Any]:
    """A SCAN command whose output length lies in the bin ending at ``difficulty`` (without
    ``bins``: exactly ``difficulty`` actions), drawn uniformly from the commands of that side of
    the length split (≤ 22 actions: train, ≥ 24: test). ``split: none`` draws from all commands."""
    lo, hi = _bin_for(difficulty, bins)
    side = "train" if hi <= 22 else "test"
    if lo <= 22 < hi:
        raise ValueError(f"bin [{lo}, {hi}] straddles the length split (train <= 22 < test)")
    pool = _pool(split, side, lo, hi)
    if not pool:
        raise ValueError(f"no SCAN command has {lo}-{hi} output actions")
    return make_record(rng.choice(pool)[0], style)


@generator("scan_addprim", difficulty="0: train side (no held-out primitive), 1: composed with it",
           fields=("command", "actions", "target", "length", "subcommands", "subtargets"))
def scan_addprim(rng: random.Random, difficulty: int, *, split: str = "addprim_jump",
                 style: str = "words", primitive_rate: float = 0.1) -> dict[str, Any]:
    """A command of an add-primitive split. Difficulty 0: the train side, where the bare
    primitive is over-represented at ``primitive_rate`` (10% in the paper); 1: the test side
    (every composition that uses the held-out primitive)."""
    if split not in HELD_OUT:
        raise ValueError(f"split must be one of {sorted(HELD_OUT)}, got {split!r}")
    if difficulty not in (0, 1):
        raise ValueError(f"difficulty must be 0 (train side) or 1 (test side), got {difficulty}")
    if difficulty == 0 and rng.random() < primitive_rate:
        return make_record(HELD_OUT[split], style)
    pool = _pool(split, "train" if difficulty == 0 else "test", 0, 10**6)
    return make_record(rng.choice(pool)[0], style)


@lru_cache(maxsize=8)
def read_scan_file(path: str, url: str | None = None, sha256: str | None = None) -> tuple[str, ...]:
    """Commands of an official SCAN file (``IN: … OUT: …`` lines), in file order; ``path`` may
    hold ``$VARS``; when it is absent the file is downloaded from ``url`` once and cached."""
    from harness.sources.files import exists, fetch_file, read_data, resolve_path, shown

    local = fetch_file(resolve_path(path, Path.cwd()), url, sha256)
    if not exists(local):
        raise ValueError(f"SCAN file not found: {shown(local)} (and no url to download it from)")
    out = []
    for n, line in enumerate(read_data(local, "SCAN file").splitlines(), 1):
        if not line.strip():
            continue
        if not line.startswith("IN: ") or " OUT: " not in line:
            raise ValueError(f"{local}:{n}: not a SCAN line ('IN: … OUT: …')")
        out.append(line[4:].split(" OUT: ", 1)[0])
    return tuple(out)


@lru_cache(maxsize=64)
def _file_pool(path: str, url: str | None, sha256: str | None, lo: int, hi: int) -> tuple[str, ...]:
    return tuple(c for c in read_scan_file(path, url, sha256) if lo <= len(interpret(c)) <= hi)


@generator("scan_file", difficulty="most output actions of the length bin",
           fields=("command", "actions", "target", "length", "subcommands", "subtargets"))
def scan_file(rng: random.Random, difficulty: int, *, path: str, url: str | None = None,
              sha256: str | None = None, bins: list[list[int]] | None = None,
              style: str = "words") -> dict[str, Any]:
    """A command drawn uniformly from an official SCAN split file (e.g. the random ``simple``
    split) among those whose output length lies in the bin ending at ``difficulty``."""
    lo, hi = _bin_for(difficulty, bins)
    pool = _file_pool(path, url, sha256, lo, hi)
    if not pool:
        raise ValueError(f"{path}: no command has {lo}-{hi} output actions")
    return make_record(rng.choice(pool), style)
