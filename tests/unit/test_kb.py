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
          "spouse_employer": ("married_to", "works_for"),
          "leader_birthplace": ("led_by", "born_in"), "hq_country": ("based_in", "country_of")}


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
    ids = ["birth_country", "birth_mayor", "employer_city", "employer_leader",
           "spouse_birthplace"]
    for seed in range(60):
        rec = kb_two_hop(random.Random(seed), difficulty)
        assert (rec["composition"] in ids) == (difficulty == 0)
        facts = parse(rec["facts"])
        assert len(facts) == 6  # 2 needed + 4 distractors, all distinct
        r1, r2 = CHAINS[rec["composition"]]
        bridge = facts[(r1, rec["entity"])]
        assert bridge == rec["answer_1"] and facts[(r2, bridge)] == rec["target"] == rec["answer_2"]
        assert rec["entity"] in rec["question"] and rec["entity"] in rec["sub_question_1"]
        assert re.search(re.escape(rec["entity"]) + r"\b", rec["question"])
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


def test_bad_split_is_refused() -> None:
    with pytest.raises(ValueError, match=r"needs relation\(s\) \['mayor_of'\] that no ID"):
        kb_two_hop(random.Random(0), 1, id_compositions=["birth_country", "employer_city"],
                   ood_compositions=["birth_mayor"])
    with pytest.raises(ValueError, match="both ID and OOD"):
        kb_two_hop(random.Random(0), 0, id_compositions=["birth_country"],
                   ood_compositions=["birth_country"])


def test_every_ood_relation_is_asked_in_distribution_by_the_shipped_task() -> None:
    """Issue 17 item 6: two of the three held-out compositions needed relations (mayor_of,
    led_by) that no ID question or exemplar asked; now every relation an OOD item needs is asked
    by ID items, in a 2-hop question and on its own (the hop1 / hop2 sub-questions)."""
    from harness.items import build_instances
    from harness.tasks.index import TaskIndex

    index = TaskIndex.build([])
    ref = index.resolve(["compgen/kb_two_hop"])[0]
    inst = build_instances(index.spec(ref), ref.address, 0, ref.base_dir, None)
    asked: dict[str, set[str]] = {"ID": set(), "OOD": set()}
    comps: dict[str, set[str]] = {"ID": set(), "OOD": set()}
    for it in inst.items:
        comp = str(it.record["composition"])
        comps[it.bucket.role].add(comp)
        asked[it.bucket.role].update(CHAINS[comp])
    assert asked["OOD"] <= asked["ID"], asked["OOD"] - asked["ID"]
    assert asked["ID"] == {rel for _, rel in PATTERNS}  # all seven relations asked in ID
    assert not comps["ID"] & comps["OOD"] and len(comps["OOD"]) == 3
    assert all(not inst.pool or p.bucket.role == "ID" for p in inst.pool)
