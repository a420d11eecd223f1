"""Two-hop questions over a fictional knowledge base (after Press et al. 2023, "Measuring and
Narrowing the Compositionality Gap in Language Models").

The world (people, cities, countries, companies and the relations between them) is made up from
``kb_seed``, so no answer can be memorized: each item states the facts it needs (plus distractor
facts of the same world) and asks one 2-hop question, together with the two 1-hop sub-questions it
composes. Sub-question 1 asks for the bridge entity; sub-question 2 asks the second relation of
the bridge entity, so its answer is the 2-hop answer. Difficulty: 0 = the composition (pair of
relations) is one of ``id_compositions`` (exemplars show these), 1 = a held-out composition.
Every relation a held-out composition uses must occur in an ID composition (checked), so the
ID−OOD gap measures a new composition of known relations, not a new relation (Press et al.).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from harness.generators.registry import generator

_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "tr", "gl")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou")
_CODAS = ("", "n", "r", "l", "s", "th", "m")
_FIRMS = ("Labs", "Works", "Group")

# relation → (subject kind, object kind, question about {x}, fact sentence about {x} and {y})
RELATIONS: dict[str, tuple[str, str, str, str]] = {
    "born_in": ("person", "city", "In which city was {x} born?", "{x} was born in {y}."),
    "works_for": ("person", "company", "Which company does {x} work for?", "{x} works for {y}."),
    "married_to": ("person", "person", "Who is {x} married to?", "{x} is married to {y}."),
    "country_of": ("city", "country", "In which country is {x}?", "{x} is a city in {y}."),
    "mayor_of": ("city", "person", "Who is the mayor of {x}?", "The mayor of {x} is {y}."),
    "based_in": ("company", "city", "In which city is {x} based?", "{x} is based in {y}."),
    "led_by": ("company", "person", "Who leads {x}?", "{x} is led by {y}."),
}
# composition → (first relation, second relation, 2-hop question about {x})
COMPOSITIONS: dict[str, tuple[str, str, str]] = {
    "birth_country": ("born_in", "country_of", "In which country was {x} born?"),
    "birth_mayor": ("born_in", "mayor_of", "Who is the mayor of the city where {x} was born?"),
    "employer_city": ("works_for", "based_in", "In which city is the company {x} works for based?"),
    "employer_leader": ("works_for", "led_by", "Who leads the company {x} works for?"),
    "spouse_birthplace": ("married_to", "born_in", "In which city was the spouse of {x} born?"),
    "spouse_employer": ("married_to", "works_for",
                        "Which company does the spouse of {x} work for?"),
    "leader_birthplace": ("led_by", "born_in", "In which city was the leader of {x} born?"),
    "hq_country": ("based_in", "country_of", "In which country is the company {x} based?"),
}
# every relation of the held-out compositions is asked in distribution (in an ID composition,
# hence also on its own by the hop1 / hop2 sub-questions), so only the pairing is new
ID_COMPOSITIONS = ("birth_country", "birth_mayor", "employer_city", "employer_leader",
                   "spouse_birthplace")
OOD_COMPOSITIONS = ("spouse_employer", "leader_birthplace", "hq_country")
FIELDS = ("facts", "question", "target", "composition", "entity", "sub_question_1", "answer_1",
          "sub_question_2", "answer_2", "hops")


@dataclass(frozen=True)
class World:
    """A fictional world: entities by kind and one object per (relation, subject)."""

    entities: dict[str, tuple[str, ...]]  # kind → names
    facts: dict[str, dict[str, str]]  # relation → subject → object

    def sentence(self, relation: str, subject: str) -> str:
        """The fact ``relation(subject)`` as a sentence."""
        return RELATIONS[relation][3].format(x=subject, y=self.facts[relation][subject])


def _word(rng: random.Random, syllables: int) -> str:
    return "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)
                   for _ in range(syllables)).capitalize()


def _names(rng: random.Random, n: int, make: Any, taken: set[str]) -> tuple[str, ...]:
    out: list[str] = []
    while len(out) < n:
        name = make()
        if name not in taken:
            taken.add(name)
            out.append(name)
    return tuple(out)


@lru_cache(maxsize=8)
def build_world(kb_seed: int, people: int = 120, cities: int = 30, countries: int = 8,
                companies: int = 25) -> World:
    """The world for ``kb_seed`` (deterministic; names are unique across all kinds)."""
    rng = random.Random(kb_seed)
    taken: set[str] = set()
    ents = {
        "person": _names(rng, people, lambda: f"{_word(rng, 2)} {_word(rng, 2)}", taken),
        "city": _names(rng, cities, lambda: _word(rng, 3), taken),
        "country": _names(rng, countries, lambda: _word(rng, 2) + "ia", taken),
        "company": _names(rng, companies, lambda: f"{_word(rng, 2)} {rng.choice(_FIRMS)}", taken),
    }
    facts: dict[str, dict[str, str]] = {}
    for rel, (subj, obj, _, _) in RELATIONS.items():
        if rel == "married_to":
            ppl = list(ents["person"])
            rng.shuffle(ppl)
            pairs = {a: b for a, b in zip(ppl[::2], ppl[1::2], strict=True)}
            facts[rel] = {**pairs, **{b: a for a, b in pairs.items()}}
        else:
            facts[rel] = {s: rng.choice(ents[obj]) for s in ents[subj]}
    return World(ents, facts)


def two_hop(world: World, composition: str, entity: str) -> dict[str, Any]:
    """The 2-hop question about ``entity`` and its linked sub-questions (no facts text)."""
    r1, r2, q = COMPOSITIONS[composition]
    bridge = world.facts[r1][entity]
    answer = world.facts[r2][bridge]
    return {
        "question": q.format(x=entity), "target": answer, "composition": composition,
        "entity": entity, "sub_question_1": RELATIONS[r1][2].format(x=entity),
        "answer_1": bridge, "sub_question_2": RELATIONS[r2][2].format(x=bridge),
        "answer_2": answer, "hops": 2,
    }


def check_split(ids: list[str], oods: list[str]) -> None:
    """A clean compositional split: no composition on both sides, and every relation of an OOD
    composition asked by some ID composition."""
    both = sorted(set(ids) & set(oods))
    if both:
        raise ValueError(f"composition(s) {both} are both ID and OOD")
    seen = {r for c in ids for r in COMPOSITIONS[c][:2]}
    for c in oods:
        new = [r for r in COMPOSITIONS[c][:2] if r not in seen]
        if new:
            raise ValueError(f"OOD composition {c!r} needs relation(s) {new} that no ID "
                             f"composition asks: its gap would mix a new relation with a new "
                             f"composition")


@generator("kb_two_hop", difficulty="0: composition seen in exemplars, 1: held-out composition",
           fields=FIELDS)
def kb_two_hop(rng: random.Random, difficulty: int, *, kb_seed: int = 0,
               id_compositions: list[str] | None = None,
               ood_compositions: list[str] | None = None, distractors: int = 4) -> dict[str, Any]:
    """One 2-hop item: the two needed facts plus ``distractors`` other facts, shuffled."""
    ids = id_compositions or list(ID_COMPOSITIONS)
    oods = ood_compositions or list(OOD_COMPOSITIONS)
    unknown = [c for c in (*ids, *oods) if c not in COMPOSITIONS]
    if unknown:
        raise ValueError(f"unknown composition(s) {unknown}; known: {sorted(COMPOSITIONS)}")
    check_split(ids, oods)
    if difficulty not in (0, 1):
        raise ValueError(f"difficulty must be 0 (seen) or 1 (held out), got {difficulty}")
    world = build_world(kb_seed)
    comp = rng.choice(ids if difficulty == 0 else oods)
    r1, r2, _ = COMPOSITIONS[comp]
    entity = rng.choice(world.entities[RELATIONS[r1][0]])
    item = two_hop(world, comp, entity)
    needed = [(r1, entity), (r2, item["answer_1"])]
    room = sum(len(world.entities[RELATIONS[rel][0]]) for rel in RELATIONS) - len(set(needed))
    if distractors > room:  # the draw below would never finish
        raise ValueError(f"distractors: the knowledge base of kb_seed {kb_seed} holds {room} "
                         f"other facts, fewer than {distractors}")
    others: list[tuple[str, str]] = []
    taken = set(needed)
    while len(others) < distractors:
        rel = rng.choice(sorted(RELATIONS))
        cand = (rel, rng.choice(world.entities[RELATIONS[rel][0]]))
        if cand not in taken:
            others.append(cand)
            taken.add(cand)
    lines = [world.sentence(r, s) for r, s in needed + others]
    rng.shuffle(lines)
    return {"facts": "\n".join(lines), **item}
