"""Every OOD item carries the shift that defines it, and no ID item does (issue 17, item 4).

One test per generator (and shift kind): each task's items (exemplar pool included) are built as a
run builds them, at several run seeds, and checked against the shift its card declares, computed
here without the generator; the generators are also swept directly over many seeds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.generators.registry import get_generator, run_generator
from harness.generators.scan import SPLITS, all_pairs, split_side
from harness.items import Instance, build_instances
from harness.spec.sources import GeneratorSource
from harness.spec.task import TaskSpec
from harness.tasks.index import TaskIndex

RUN_SEEDS = range(4)  # run seeds at which each task's items are built
SWEEP = range(300)  # seeds of the direct generator sweeps


def test_ladder_sign_ood_items_always_hold_a_negative_number() -> None:
    gen = get_generator("ladder")
    for level in range(1, 6):
        for seed in range(400):
            ood = run_generator(gen, seed, 10 + level, {"shift": "sign"})
            assert any(v < 0 for v in ood["values"]), (seed, level, ood["list"])
            idd = run_generator(gen, seed, level, {"shift": "sign"})
            assert all(v > 0 for v in idd["values"])


def test_ladder_range_and_length_ood_items_carry_their_shift() -> None:
    gen = get_generator("ladder")
    for seed in range(200):
        assert all(v >= 10 for v in run_generator(gen, seed, 13, {"shift": "range"})["values"])
        assert len(run_generator(gen, seed, 13, {"shift": "length", "ood_n": 8})["values"]) == 8


# --- the built-in tasks each test below checks (passkey and kb_two_hop: their own test files) ---
CHECKED = {
    "addition": {f"lengthgen/addition{s}" for s in ("", "_reversed", "_scratchpad")},
    "multiplication": {"lengthgen/multiplication"},
    **{g: {f"lengthgen/{g}"} for g in ("copy", "reverse", "sort", "count", "mode")},
    "parity": {"lengthgen/parity", "lengthgen/parity_scratchpad"},
    "variable_chain": {"lengthgen/variable_chain"},
    "ladder": {f"easy2hard/ladder_{s}" for s in ("length", "range", "sign")},
    "scan_length": {"compgen/scan_length"},
    "scan_addprim": {"compgen/scan_addprim_jump", "compgen/scan_addprim_turn_left"},
    "scan_file": {"compgen/scan_simple"},
    "pcfgset_functions": {"compgen/pcfgset_productivity"},
    "pcfgset_pairs": {"compgen/pcfgset_systematicity"},
    "lmentry": {f"instructdiv/{t}" for t in ("first_alphabetically", "homophones", "less_letters",
                                            "more_letters", "rhyming_word", "word_before")},
    "string_rewriting": {"instructdiv/string_rewriting"},
    "string_rewriting_domains": {"instructdiv/string_rewriting_domains"},
}
OWN_TESTS = {"passkey", "kb_two_hop"}  # tests/unit/test_passkey_grid.py, test_kb.py


@pytest.fixture(scope="module")
def index() -> TaskIndex:
    return TaskIndex.build([], providers=[])


@pytest.fixture(scope="module")
def data_index(shared_data: Path) -> TaskIndex:
    """Tasks whose specs are read with GENHARNESS_DATA set (data files, paraphrase tables)."""
    return TaskIndex.build([], providers=[])


def _spec(index: TaskIndex, address: str) -> TaskSpec:
    return index.spec(index.refs[address])


def _items(index: TaskIndex, address: str) -> tuple[list[Instance], list[Instance]]:
    """The task's evaluation items and its exemplar pool, over every run seed."""
    ref, items, pool = index.refs[address], [], []
    for seed in RUN_SEEDS:
        inst = build_instances(index.spec(ref), address, seed, ref.base_dir)
        items += list(inst.items)
        pool += inst.pool
    return items, pool


def _by_role(index: TaskIndex, address: str) -> tuple[list[Instance], list[Instance]]:
    """(ID items and every exemplar, OOD items); all three exist."""
    items, pool = _items(index, address)
    assert pool and all(p.bucket.role == "ID" for p in pool), address
    ood = [it for it in items if it.bucket.role == "OOD"]
    assert ood and len(ood) < len(items), address
    return [it for it in items if it.bucket.role == "ID"] + pool, ood


def _declares(index: TaskIndex, address: str, *phrases: str) -> None:
    """The task card states the shift these checks hold the items to."""
    shift = _spec(index, address).card.shift  # type: ignore[union-attr]
    assert all(p in shift for p in phrases), (address, phrases, shift)


def _bins(index: TaskIndex, address: str) -> dict[int, int]:
    """Top -> bottom of each bin of the task's ``source.params.bins``."""
    return {hi: lo for lo, hi in _spec(index, address).source.params["bins"]}  # type: ignore[union-attr]


def test_every_generator_task_is_checked(index: TaskIndex) -> None:
    used: dict[str, set[str]] = {}
    for address in index.refs:
        src = _spec(index, address).source
        if isinstance(src, GeneratorSource) and src.name not in OWN_TESTS:
            used.setdefault(src.name, set()).add(address)
    assert used == CHECKED  # a new task with a generator needs its shift checked here


# --- arithmetic ----------------------------------------------------------------------------------

ARITHMETIC = {  # task: (most ID digits, fewest OOD digits, most OOD digits), as its card says
    "lengthgen/addition": (5, 6, 15), "lengthgen/addition_reversed": (5, 8, 15),
    "lengthgen/addition_scratchpad": (5, 8, 10), "lengthgen/multiplication": (3, 4, 6),
}


def _digits(n: object) -> int:
    assert isinstance(n, int) and n >= 0
    return len(str(n))


def test_arithmetic_ood_operands_have_the_declared_number_of_digits(index: TaskIndex) -> None:
    for address, (id_max, lo, hi) in ARITHMETIC.items():
        _declares(index, address, f"at most {id_max} digits (ID)", f"{lo}-{hi} digits (OOD)")
        idd, ood = _by_role(index, address)
        for it in ood:  # no leading zero may make an operand shorter than its bucket says
            d = int(it.difficulty)
            assert lo <= d <= hi and _digits(it.record["a"]) == _digits(it.record["b"]) == d, (
                address, it.id, it.record)
        for it in idd:
            assert max(_digits(it.record["a"]), _digits(it.record["b"])) <= id_max, it.record
    add, mul = get_generator("addition"), get_generator("multiplication")
    for d in range(2, 16):
        for seed in SWEEP:
            rec = run_generator(add, seed, d, {"reverse_output": seed % 2 == 1})
            assert _digits(rec["a"]) == _digits(rec["b"]) == d
            rec = run_generator(mul, seed, d, {"b_digits": 1 + seed % 7})
            assert _digits(rec["a"]) == d and _digits(rec["b"]) == 1 + seed % 7


# --- sequences -----------------------------------------------------------------------------------

SEQUENCES = ("copy", "reverse", "sort", "parity", "parity_scratchpad", "count", "mode")


def _length(rec: dict[str, object] | object) -> int:
    """Symbols in the item's input, or for count the numbers its answer writes."""
    assert isinstance(rec, dict)
    if "start" in rec:
        numbers = str(rec["target"]).split(" ")
        assert numbers[0] == str(rec["start"]) and numbers[-1] == str(rec["end"])
        assert [int(x) for x in numbers] == list(range(int(numbers[0]), int(numbers[-1]) + 1))
        return len(numbers)
    return len(str(rec["text"]).split(" "))


def test_sequence_ood_items_have_exactly_their_bucket_length(index: TaskIndex) -> None:
    for task in SEQUENCES:
        address = f"lengthgen/{task}"
        _declares(index, address, "at most 8", "(ID) to 12-32")
        idd, ood = _by_role(index, address)
        for it in ood:
            assert 12 <= it.difficulty <= 32 and _length(it.record) == it.difficulty, (
                address, it.id, it.record)
        for it in idd:
            assert _length(it.record) == it.difficulty <= 8, (address, it.id, it.record)
    for name in ("copy", "reverse", "sort", "parity", "count", "mode"):
        gen = get_generator(name)
        for n in range(9, 41):
            for seed in SWEEP[:100]:
                assert _length(run_generator(gen, seed, n, {})) == n, (name, n, seed)


# --- assignment ----------------------------------------------------------------------------------

def _chain_steps(text: str, query: str) -> tuple[int, str]:
    """Assignments followed from ``query`` to a literal value, and that value."""
    binding: dict[str, str] = {}
    for stmt in text.split(", "):
        name, value = stmt.split("=")
        assert name not in binding, f"{name} assigned twice in {text!r}"
        binding[name] = value
    steps, cur = 1, binding[query]
    while not cur.isdigit():
        cur, steps = binding[cur], steps + 1
    return steps, cur


def test_variable_chain_ood_items_follow_exactly_their_chain_length(index: TaskIndex) -> None:
    address = "lengthgen/variable_chain"
    _declares(index, address, "at most 4 steps (ID) to 8-16 steps (OOD)")
    idd, ood = _by_role(index, address)
    for it in ood + idd:
        steps, value = _chain_steps(str(it.record["text"]), str(it.record["query"]))
        assert steps == it.difficulty and value == it.record["target"], (it.id, it.record)
        assert 8 <= steps <= 16 if it.bucket.role == "OOD" else steps <= 4
    gen = get_generator("variable_chain")
    for n in range(5, 17):
        for seed in SWEEP[:100]:
            rec = run_generator(gen, seed, n, {"distractors": seed % 3, "shuffle": seed % 2 == 0})
            assert _chain_steps(rec["text"], rec["query"]) == (n, rec["target"]), (n, seed)


# --- SCAN: checked against the official files (tasks.txt holds every command's actions) ---------

Scan = tuple[dict[str, list[str]], dict[str, set[str]]]


@pytest.fixture(scope="module")
def scan(shared_data: Path) -> Scan:
    """(command -> official actions from ``tasks.txt``, split file -> its commands), e.g.
    ``"train_length"`` -> the commands of ``tasks_train_length.txt``."""
    actions: dict[str, list[str]] = {}
    files: dict[str, set[str]] = {}
    for f in sorted((shared_data / "scan").glob("tasks*.txt")):
        pairs = [line[4:].split(" OUT: ") for line in f.read_text().splitlines() if line]
        files[f.stem.removeprefix("tasks_")] = {c for c, _ in pairs}
        if f.stem == "tasks":
            actions = {c: a.split() for c, a in pairs}
    return actions, files


def _scan_check(it: Instance, scan: Scan, split: str) -> int:
    """The item's official action count; its actions are the official ones and it lies on the
    side of the official ``split`` files its role says (ID: train, OOD: test)."""
    actions, files = scan
    cmd = str(it.record["command"])
    assert it.record["actions"] == " ".join(actions[cmd]), cmd
    assert cmd in files[f"{'train' if it.bucket.role == 'ID' else 'test'}_{split}"], (cmd, split)
    return len(actions[cmd])


def test_scan_split_sides_are_the_official_files(scan: Scan) -> None:
    """What each SCAN generator draws OOD items from (the test side of its split rule) is the
    official test file: a command that lacks the shift (e.g. the bare primitive) is too rare in
    a sample to be caught there."""
    for split in SPLITS:
        test_side = {c for c, a in all_pairs() if split_side(c, a, split) == "test"}
        assert test_side == scan[1][f"test_{split}"], split


def test_scan_length_ood_items_have_24_to_48_actions(data_index: TaskIndex, scan: Scan) -> None:
    address = "compgen/scan_length"
    _declares(data_index, address, "at most 22 actions (ID) to 24-48 actions (OOD)")
    bins = _bins(data_index, address)
    idd, ood = _by_role(data_index, address)
    for it in ood:
        n = _scan_check(it, scan, "length")
        assert 24 <= bins[int(it.difficulty)] <= n <= it.difficulty <= 48, (it.id, it.record)
    for it in idd:
        assert bins[int(it.difficulty)] <= _scan_check(it, scan, "length") <= 22
    gen, tops = get_generator("scan_length"), [hi for hi in bins if hi > 22]
    for seed in SWEEP:
        hi = tops[seed % len(tops)]
        rec = run_generator(gen, seed, hi, {"bins": [[lo, hi] for hi, lo in bins.items()]})
        assert 24 <= bins[hi] <= len(scan[0][rec["command"]]) <= hi, (seed, rec)


HELD_OUT = {"addprim_jump": ("jump",), "addprim_turn_left": ("turn", "left")}


def _holds(command: str, phrase: tuple[str, ...]) -> bool:
    w, n = command.split(), len(phrase)
    return any(tuple(w[i:i + n]) == phrase for i in range(len(w) - n + 1))


def test_scan_addprim_ood_items_compose_the_held_out_primitive(
        data_index: TaskIndex, scan: Scan) -> None:
    gen = get_generator("scan_addprim")
    for split, phrase in HELD_OUT.items():
        address, bare = f"compgen/scan_{split}", " ".join(phrase)
        _declares(data_index, address, f"'{bare}'", "only in isolation", "compose")
        idd, ood = _by_role(data_index, address)
        for it in ood:
            _scan_check(it, scan, split)
            assert _holds(str(it.record["command"]), phrase) and it.record["command"] != bare
        for it in idd:  # exemplars and ID items show the primitive alone or not at all
            _scan_check(it, scan, split)
            assert it.record["command"] == bare or not _holds(str(it.record["command"]), phrase)
        assert any(it.record["command"] == bare for it in idd), address
        for seed in SWEEP:
            cmd = run_generator(gen, seed, 1, {"split": split})["command"]
            assert _holds(cmd, phrase) and cmd != bare, (split, seed, cmd)
            cmd = run_generator(gen, seed, 0, {"split": split})["command"]
            assert cmd == bare or not _holds(cmd, phrase), (split, seed, cmd)


def test_scan_simple_is_all_id_and_no_test_command_is_an_exemplar(
        data_index: TaskIndex, scan: Scan) -> None:
    address = "compgen/scan_simple"
    _declares(data_index, address, "none by design")
    items, pool = _items(data_index, address)
    assert items and pool and all(it.bucket.role == "ID" for it in items)
    assert all(it.record["command"] in scan[1]["test_simple"] for it in items)
    assert {p.record["command"] for p in pool} <= scan[1]["train_simple"]
    assert not {p.record["command"] for p in pool} & {it.record["command"] for it in items}


# --- PCFG SET ------------------------------------------------------------------------------------

FUNCTIONS = {"copy", "reverse", "shift", "echo", "swap_first_last", "repeat",
             "append", "prepend", "remove_first", "remove_second"}
# the pairs held out of the systematicity train set (data/pcfgset/systematicity/README.md)
PAIRS = {("swap_first_last", "repeat"), ("append", "remove_second"),
         ("repeat", "remove_second"), ("append", "swap_first_last")}


def _sources(root: Path, stem: str) -> set[str]:
    return {s.strip() for s in (root / "pcfgset" / f"{stem}.src").read_text().splitlines()}


def _functions(source: object) -> int:
    return sum(w in FUNCTIONS for w in str(source).split())


def _pair(source: object) -> bool:
    w = str(source).split()
    return any((f, g) in PAIRS for f, g in zip(w, w[1:], strict=False))


def test_pcfgset_productivity_ood_items_nest_9_to_35_functions(
        data_index: TaskIndex, shared_data: Path) -> None:
    address = "compgen/pcfgset_productivity"
    _declares(data_index, address, "at most 8 (ID) vs 9-35 (OOD)")
    base, prod = _sources(shared_data, "pcfgset/test"), _sources(shared_data, "productivity/test")
    bins = _bins(data_index, address)
    idd, ood = _by_role(data_index, address)
    for it in ood:
        n = _functions(it.record["source"])
        assert 9 <= bins[int(it.difficulty)] <= n <= it.difficulty <= 35, (it.id, it.record)
        assert it.record["source"] in prod
    for it in idd:
        n = _functions(it.record["source"])
        assert bins[int(it.difficulty)] <= n <= 8 and it.record["source"] in base


def test_pcfgset_systematicity_ood_items_apply_a_held_out_pair(
        data_index: TaskIndex, shared_data: Path) -> None:
    address = "compgen/pcfgset_systematicity"
    _declares(data_index, address, "absent from every exemplar")
    base, syst = _sources(shared_data, "pcfgset/test"), _sources(shared_data, "systematicity/test")
    idd, ood = _by_role(data_index, address)
    for it in ood:
        assert _pair(it.record["source"]) and it.record["source"] in syst, it.record
    for it in idd:  # ID items and every exemplar
        assert not _pair(it.record["source"]) and it.record["source"] in base, it.record
    assert all(_functions(it.record["source"]) <= 8 for it in idd + ood)


# --- LMentry: the items are not shifted, the instruction is ------------------------------------

LMENTRY = ("first_alphabetically", "homophones", "less_letters", "more_letters",
           "rhyming_word", "word_before")


def _norm(prompt: str) -> str:
    return " ".join(re.sub(r"\{\{\s*(\w+)\s*\}\}", r"{\1}", prompt).lower().split())


def _lmentry_difficulty(rec: object, kind: str) -> int | None:
    assert isinstance(rec, dict)
    if kind == "length_gap":
        return min(abs(len(rec["word1"]) - len(rec["word2"])), 2)
    if kind == "position":
        words = [w.strip(".,;:!?\"'") for w in str(rec["sentence"]).split()]
        return min(words.index(rec["word"]), 3)
    return {"none": 0}.get(kind)  # distractor: not visible in the record


def test_lmentry_unseen_templates_differ_from_every_seen_one(data_index: TaskIndex) -> None:
    for task in LMENTRY:
        address = f"instructdiv/{task}"
        _declares(data_index, address, "official LMentry prompts (seen)", "paraphrases")
        spec = _spec(data_index, address)
        seen = {_norm(t.prompt) for t in spec.templates if t.seen}
        unseen = [_norm(t.prompt) for t in spec.templates if not t.seen]
        assert len(seen) == 3 and len(unseen) == len(set(unseen)) >= 1, address
        assert not seen & set(unseen), address  # an unseen prompt is never a seen one
        kind = spec.source.params["difficulty_kind"]  # type: ignore[union-attr]
        for it in _items(data_index, address)[0]:
            assert it.bucket.role == "ID"  # every item is ID: only the instruction shifts
            want = _lmentry_difficulty(it.record, kind)
            assert want is None or want == it.difficulty, (address, it.id, it.record)


# --- string rewriting ----------------------------------------------------------------------------

def _rule_set(rec: object) -> frozenset[str]:
    assert isinstance(rec, dict)
    return frozenset(str(rec["rules"]).splitlines())


def test_string_rewriting_ood_rule_sets_are_never_seen(index: TaskIndex) -> None:
    address = "instructdiv/string_rewriting"
    _declares(index, address, "seen pool (ID, exemplars drawn from it)", "never shown (OOD)")
    idd, ood = _by_role(index, address)
    seen = {_rule_set(it.record) for it in idd}
    assert {it.record["rule_set"] for it in idd} == set(range(32))  # the whole seen pool shows
    for it in ood:
        assert 32 <= it.record["rule_set"] < 64 and _rule_set(it.record) not in seen, it.record
    gen = get_generator("string_rewriting")
    for rule_seed in range(8):  # other rule seeds keep seen and unseen rule sets apart too
        sets = [_rule_set(run_generator(gen, 0, i, {"rule_seed": rule_seed})) for i in range(64)]
        assert not set(sets[:32]) & set(sets[32:]), rule_seed


def _symbols(rec: object) -> set[str]:
    """Every symbol of an item's rules, input and answer (words, or single characters)."""
    assert isinstance(rec, dict)
    text = " ".join(str(rec[k]) for k in ("rules", "input", "target"))
    tokens = [t for t in text.split() if t not in {"->", "->.", "(empty)"}]
    return set(tokens) if rec["domain"] in {"animals", "colors"} else set("".join(tokens))


def test_string_rewriting_domains_ood_items_use_only_unseen_domain_symbols(
        index: TaskIndex) -> None:
    address = "instructdiv/string_rewriting_domains"
    _declares(index, address, "seen domains (letters, animals)", "unseen domains (digits, colors)")
    idd, ood = _by_role(index, address)
    id_symbols = set().union(*(_symbols(it.record) for it in idd))
    assert {it.record["domain"] for it in idd} == {"letters", "animals"}
    for it in ood:
        assert it.record["domain"] in {"digits", "colors"} and not _symbols(it.record) & id_symbols
    assert {it.record["domain"] for it in ood} == {"digits", "colors"}
    gen = get_generator("string_rewriting_domains")
    domains = ["letters", "digits", "animals", "colors"]
    for seed in SWEEP[:100]:
        recs = [run_generator(gen, seed, i, {"domains": domains}) for i in range(4)]
        assert not (_symbols(recs[0]) | _symbols(recs[2])) & (_symbols(recs[1]) | _symbols(recs[3]))
