"""Fictional-KB two-hop items: the facts in the prompt alone determine every answer (checked by
parsing them back), difficulty picks seen vs held-out compositions, and generation is seeded."""

from __future__ import annotations

import random
import re

import pytest

from harness.generators.kb import COMPOSITIONS, build_world, kb_two_hop

PATTERNS = [  # fact sentence → (relation, subject, object), written independently of the module
    (re.compile(r"^(.+) was born in (.+)\.$"), "born_in"),
    (re.compile(r"^(.+) works for (.+)\.$"), "works_for"),
    (re.compile(r"^(.+) is married to (.+)\.$"), "married_to"),
    (re.compile(r"^(.+) is a city in (.+)\.$"), "country_of"),
    (re.compile(r"^The mayor of (.+) is (.+)\.$"), "mayor_of"),
    (re.compile(r"^(.+) is based in (.+)\.$"), "based_in"),
    (re.compile(r"^(.+) is led by (.+)\.$"), "led_by"),
]
CHAINS = {"birth_country": ("born_in", "country_of"), "birth_mayor": ("born_in", "mayor_of"),
          "employer_city": ("works_for", "based_in"), "employer_leader": ("works_for", "led_by"),
          "spouse_birthplace": ("married_to", "born_in"),
          "spouse_employer": ("married_to", "works_for")}


def parse(facts: str) -> dict[tuple[str, str], str]:
    out = {}
    for line in facts.splitlines():
        hits = [(rel, m) for rx, rel in PATTERNS if (m := rx.match(line))]
        assert len(hits) == 1, line
        rel, m = hits[0]
        out[(rel, m.group(1))] = m.group(2)
    return out


@pytest.mark.parametrize("difficulty", [0, 1])
def test_answers_follow_from_the_stated_facts(difficulty: int) -> None:
    ids = ["birth_country", "employer_city", "spouse_birthplace"]
    for seed in range(60):
        rec = kb_two_hop(random.Random(seed), difficulty)
        assert (rec["composition"] in ids) == (difficulty == 0)
        facts = parse(rec["facts"])
        assert len(facts) == 6  # 2 needed + 4 distractors, all distinct
        r1, r2 = CHAINS[rec["composition"]]
        bridge = facts[(r1, rec["entity"])]
        assert bridge == rec["answer_1"] and facts[(r2, bridge)] == rec["target"] == rec["answer_2"]
        assert rec["entity"] in rec["question"] and rec["entity"] in rec["sub_question_1"]
        assert bridge in rec["sub_question_2"]
        assert rec == kb_two_hop(random.Random(seed), difficulty)


def test_world_is_deterministic_and_names_unique() -> None:
    w = build_world(0)
    assert w == build_world(0) and w != build_world(1)
    names = [n for kind in w.entities.values() for n in kind]
    assert len(names) == len(set(names))
    spouse = w.facts["married_to"]
    assert all(spouse[spouse[p]] == p and spouse[p] != p for p in spouse)
    assert set(COMPOSITIONS) == set(CHAINS)


def test_bad_params() -> None:
    with pytest.raises(ValueError, match="unknown composition"):
        kb_two_hop(random.Random(0), 0, id_compositions=["nope"])
    with pytest.raises(ValueError, match="difficulty"):
        kb_two_hop(random.Random(0), 2)
