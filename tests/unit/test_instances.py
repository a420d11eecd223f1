"""Generators, bucketing, item selection and few-shot isolation."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from harness.errors import HarnessError, UnknownNameError
from harness.generators.registry import get_generator, run_generator
from harness.items import build_instances, select_fewshot
from harness.spec.buckets import assign, build_buckets
from harness.spec.task import BucketsSpec, RolesSpec
from harness.tasks.index import TaskIndex
from harness.tasks.loader import load_spec


def test_addition_is_deterministic_and_controls_digits() -> None:
    gen = get_generator("addition")
    for d in (1, 2, 5, 15):
        recs = [run_generator(gen, 1234 + i, d, {}) for i in range(50)]
        assert recs == [run_generator(gen, 1234 + i, d, {}) for i in range(50)]
        for r in recs:
            assert len(str(r["a"])) == d and len(str(r["b"])) == d
            assert int(r["target"]) == r["a"] + r["b"]  # independent check of the answer
    rev = run_generator(gen, 7, 6, {"reverse_output": True})
    assert rev["target"] == str(rev["a"] + rev["b"])[::-1]


def test_addition_pinned_values() -> None:
    # Pinned output: a change here means every published result would change.
    rec = run_generator(get_generator("addition"), 42, 3, {})
    rng = random.Random(42)
    a, b = rng.randrange(100, 1000), rng.randrange(100, 1000)
    assert (rec["a"], rec["b"]) == (a, b)


@pytest.mark.parametrize("name,fn", [("copy", lambda s: s), ("reverse", lambda s: s[::-1])])
def test_sequence_generators(name: str, fn: object) -> None:
    gen = get_generator(name)
    for n in (1, 8, 32):
        rec = run_generator(gen, 99, n, {})
        syms = rec["text"].split(" ")
        assert len(syms) == n == rec["length"]
        assert rec["target"].split(" ") == fn(syms)  # type: ignore[operator]
        assert all(c.isalpha() and c.islower() for c in syms)
    assert run_generator(gen, 5, 4, {"alphabet": "01", "sep": ""})["text"] in {
        f"{i:04b}" for i in range(16)
    }


def test_unknown_generator() -> None:
    with pytest.raises(UnknownNameError, match="did you mean: reverse"):
        get_generator("revers")


def test_value_and_edge_buckets() -> None:
    bs = build_buckets(BucketsSpec(values=[1, 2, 5]), RolesSpec(id_max=2))
    assert [(b.label, b.role) for b in bs] == [("1", "ID"), ("2", "ID"), ("5", "OOD")]
    assert assign(bs, 5).label == "5" and assign(bs, 3) is None  # type: ignore[union-attr]
    es = build_buckets(BucketsSpec(edges=[1, 6, 11, 21]), RolesSpec(id_max=5))
    assert [(b.label, b.role, b.top) for b in es] == [
        ("1-5", "ID", 5), ("6-10", "OOD", 10), ("11-20", "OOD", 20)]
    assert es[1].values() == [6, 7, 8, 9, 10]
    assert assign(es, 10.5).label == "6-10" and assign(es, 21) is None  # type: ignore[union-attr]
    explicit = build_buckets(BucketsSpec(edges=[1, 6, 11]), RolesSpec(id=["6-10"]))
    assert [b.role for b in explicit] == ["OOD", "ID"]


def _addition() -> tuple[object, object]:
    index = TaskIndex.build()
    ref = index.refs["lengthgen/addition"]
    return ref, index.spec(ref)


def test_items_are_seeded_and_limit_is_a_prefix() -> None:
    ref, spec = _addition()
    a = build_instances(spec, ref.address, 0, ref.path.parent, 20)  # type: ignore[arg-type, attr-defined]
    b = build_instances(spec, ref.address, 0, ref.path.parent, 20)  # type: ignore[arg-type, attr-defined]
    big = build_instances(spec, ref.address, 0, ref.path.parent, 50)  # type: ignore[arg-type, attr-defined]
    other = build_instances(spec, ref.address, 1, ref.path.parent, 20)  # type: ignore[arg-type, attr-defined]
    assert [(i.id, dict(i.record)) for i in a.items] == [(i.id, dict(i.record)) for i in b.items]
    big_by_id = {i.id: dict(i.record) for i in big.items}
    assert all(big_by_id[i.id] == dict(i.record) for i in a.items)
    assert [dict(i.record) for i in a.items] != [dict(i.record) for i in other.items]
    counts = {}
    for it in a.items:
        counts[it.bucket.label] = counts.get(it.bucket.label, 0) + 1
        assert len(str(it.record["a"])) == int(it.difficulty)
    assert set(counts.values()) == {20} and len(counts) == 11


def test_fewshot_never_uses_ood_or_the_item_itself() -> None:
    ref, spec = _addition()
    inst = build_instances(spec, ref.address, 3, ref.path.parent, 30)  # type: ignore[arg-type, attr-defined]
    assert inst.pool and all(p.bucket.role == "ID" for p in inst.pool)
    eval_ids = {i.id for i in inst.items}
    for item in inst.items:
        shots = select_fewshot(item, inst.pool, 3, 3, ref.address)  # type: ignore[attr-defined]
        assert len(shots) == 3
        assert all(s.bucket.role == "ID" and s.id not in eval_ids for s in shots)
        assert all(dict(s.record) != dict(item.record) for s in shots)
        # selection depends only on (seed, task, item id), not on order or batch
        again = select_fewshot(item, inst.pool, 3, 3, ref.address)  # type: ignore[attr-defined]
        assert [s.id for s in again] == [s.id for s in shots]


def test_shared_fewshot_is_one_set_for_every_item() -> None:
    ref, spec = _addition()
    inst = build_instances(spec, ref.address, 3, ref.path.parent, 30)  # type: ignore[arg-type, attr-defined]
    sets = [[s.id for s in select_fewshot(item, inst.pool, 3, 3, ref.address, shared=True)]  # type: ignore[attr-defined]
            for item in inst.items]
    assert all(s == sets[0] for s in sets) and len(set(sets[0])) == 3
    other_seed = select_fewshot(inst.items[0], inst.pool, 3, 4, ref.address, shared=True)  # type: ignore[attr-defined]
    assert [s.id for s in other_seed] != sets[0]
    # an item that is one of the shared exemplars gets the next one in its place, same order
    member = next(p for p in inst.pool if p.id == sets[0][1])
    swapped = [s.id for s in select_fewshot(member, inst.pool, 3, 3, ref.address, shared=True)]  # type: ignore[attr-defined]
    assert swapped[:1] == sets[0][:1] and sets[0][1] not in swapped and swapped[1] == sets[0][2]


def test_files_source_fewshot_pool_is_id_only(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text("".join(f'{{"q": "q{i}", "target": "t{i}", "level": {i % 5 + 1}}}\n'
                            for i in range(50)))
    task = tmp_path / "f.yaml"
    task.write_text(
        "name: f\ndescription: d\nsource: {type: files, path: d.jsonl}\n"
        "fields: {difficulty: level}\nbuckets: {values: [1, 2, 3, 4, 5]}\nroles: {id_max: 3}\n"
        "templates: [{id: a, prompt: '{{ q }}'}]\nfewshot: {k: 4}\noutput: {type: generate}\n")
    spec = load_spec(task)
    inst = build_instances(spec, "f", 0, tmp_path, 4)
    assert len(inst.items) == 20 and all(p.bucket.role == "ID" for p in inst.pool)
    assert len(inst.pool) == 30
    for item in inst.items:
        shots = select_fewshot(item, inst.pool, 4, 0, "f")
        assert all(s.record["level"] <= 3 and s.id != item.id for s in shots)
    with pytest.raises(HarnessError, match="only 29 ID exemplars"):
        select_fewshot(inst.pool[0], inst.pool, 30, 0, "f")


def test_shared_fewshot_never_returns_the_item_when_pool_has_exactly_k() -> None:
    """Issue 17 item 1: shared=True, ID pool of exactly k holding the item → raise, never itself."""
    ref, spec = _addition()
    inst = build_instances(spec, ref.address, 3, ref.path.parent, 30)  # type: ignore[arg-type, attr-defined]
    pool = list(inst.pool[:3])
    with pytest.raises(HarnessError, match="k=3 but only 2"):
        select_fewshot(pool[0], pool, 3, 3, ref.address, shared=True)  # type: ignore[attr-defined]
    shots = select_fewshot(pool[0], pool, 2, 3, ref.address, shared=True)  # type: ignore[attr-defined]
    assert pool[0].id not in {s.id for s in shots} and len(shots) == 2
