"""Fuzzing the harness's readers of untrusted files (issue 15): task files (mutations of every
shipped task, random bytes, random YAML), results.json, samples files and the response cache.

Each case is classified as ``ok``, ``error`` (a ``HarnessError`` whose every line names the file),
``bad_message`` (a ``HarnessError`` with a line that does not), ``traceback`` (any other
exception) or ``hang`` (over ``HANG_SECONDS``, stopped by ``harness.bounds.time_limit``). A
task file that loads is taken further, as ``harness tasks sample`` would: items of its generator
(one per bucket) and every template rendered. Needs ``hypothesis`` (the dev extra); run by
``scripts/fuzz_tasks.py`` and ``tests/unit/test_fuzz.py`` (a dev tool: it lives in tests/, outside
the wheel). Network use is cut off (a data file
is missing, never downloaded).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.bounds import time_limit
from harness.errors import HarnessError

HANG_SECONDS = 5.0
KINDS = ("mutated_task", "random_bytes", "random_yaml", "results", "samples", "cache")
_INTERESTING: list[Any] = [
    None, True, 0, -1, 1, 10**9, 10**30, 1e308, float("inf"), float("nan"), "", "x" * 300,
    "a\x00b", "{{ 1/0 }}", "{% include 'x' %}", "{{ 'x' * 10**10 }}", "(", "[", "../" * 8,
    "/etc/hostname", [], [1, 2], {}, {"bogus": 1}, ["a", None], [[1, 2]], "${HOME}", "é\u2028",
    # issue 26: regex bombs, generator sizes that used to hang, devices, very long names
    "(.+)+!", "(a+)+b", "(a|a)+b", "a{1000000000}", 3000, 5000, 8000, "/dev/zero", "a" * 5000,
]
_TOKENS = [b".inf", b".nan", b"\x00", b"\xff", b"100000000", b"1e308", b"{{", b"}}", b"{%",
           b"include: x.yaml\n", b"name: again\n", b": ", b"- ", b"&a ", b"*a", b"!!python/",
           b"\t", b"\n", b"'", b'"', b"[", b"{", b"-1", b"per_bucket: 100000000\n"]


class Hang(BaseException):
    """A case ran over ``HANG_SECONDS``."""


@dataclass
class Tally:
    """Counts by outcome, with the first few examples of each bad outcome."""

    counts: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    slowest: float = 0.0

    def add(self, outcome: str, detail: str = "", seconds: float = 0.0) -> None:
        """Record one case."""
        self.counts[outcome] += 1
        self.slowest = max(self.slowest, seconds)
        if outcome in ("traceback", "hang", "bad_message") and detail:
            self.examples.setdefault(outcome, [])
            if len(self.examples[outcome]) < 20:
                self.examples[outcome].append(detail)


def classify(run: Callable[[], None], names: list[str], tally: Tally, label: str) -> str:
    """Run one case under the hang alarm and record its outcome; ``names``: strings one of
    which every error line must contain (the file, or the task)."""
    start = time.monotonic()
    try:
        with time_limit(HANG_SECONDS, Hang):
            run()
        outcome, detail = "ok", ""
    except Hang:
        outcome, detail = "hang", label
    except HarnessError as e:
        lines = str(e).splitlines() or [""]
        bad = [x for x in lines if not any(n in x for n in names)]
        outcome, detail = ("bad_message", f"{label}: {bad[0]!r}") if bad else ("error", "")
    except Exception:  # what the fuzzer is looking for
        outcome, detail = "traceback", f"{label}: " + traceback.format_exc(limit=-3)
    tally.add(outcome, detail, time.monotonic() - start)
    return outcome


# --- task files ----------------------------------------------------------------------------


def copy_tasks(dest: Path) -> list[Path]:
    """Copy the shipped task folder to ``dest`` (mutants sit beside their includes); the task
    files, bases included."""
    src = Path(__file__).resolve().parent.parent / "tasks"  # the repository's tasks/
    if not src.is_dir():  # an installed wheel: the packaged copy
        from harness.tasks.index import builtin_tasks_dir

        src = builtin_tasks_dir()
    shutil.copytree(src, dest, dirs_exist_ok=True)
    return sorted(dest.rglob("*.yaml"))


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


def mutate_structure(data: dict[str, Any], rng: random.Random, value: Any) -> dict[str, Any]:
    """Replace, delete or add one key (anywhere) of a parsed task file."""
    paths = [p for p in _paths(data) if p]
    if not paths:
        return {"name": value}
    path = rng.choice(paths)
    parent: Any = data
    for key in path[:-1]:
        parent = parent[key]
    op = rng.random()
    if op < 0.6:
        parent[path[-1]] = value
    elif op < 0.8 and isinstance(parent, dict):
        del parent[path[-1]]
    elif isinstance(parent, dict):
        parent[rng.choice(["bogus", "params", "per_bucket", "pattern", "k", "include"])] = value
    else:
        parent.append(value)
    return data


def mutate_bytes(raw: bytes, rng: random.Random) -> bytes:
    """A few byte-level edits: insert a token, flip, delete, duplicate a line, truncate."""
    buf = bytearray(raw)
    for _ in range(rng.randint(1, 4)):
        pos = rng.randrange(len(buf) + 1)
        op = rng.random()
        if op < 0.4:
            buf[pos:pos] = rng.choice(_TOKENS)
        elif op < 0.55 and buf:
            buf[min(pos, len(buf) - 1)] = rng.randrange(256)
        elif op < 0.7:
            del buf[pos:pos + rng.randint(1, 40)]
        elif op < 0.85:
            lines = bytes(buf).splitlines(keepends=True)
            if lines:
                i = rng.randrange(len(lines))
                lines.insert(i, lines[i])
                buf = bytearray(b"".join(lines))
        else:
            del buf[pos:]
    return bytes(buf)


def check_task_file(path: Path) -> None:
    """What ``harness tasks validate`` and ``harness tasks sample`` do with one file."""
    from harness.items import build_instances
    from harness.outputs.prompts import build_prompt, target_text
    from harness.spec.sources import DatasetSource
    from harness.tasks.loader import load_spec, validate_base

    if path.name.startswith("_"):
        validate_base(path)
        return
    spec = load_spec(path)
    if isinstance(spec.source, DatasetSource):
        return  # would ask the hub (offline here); the spec checks above are what matter
    inst = build_instances(spec, f"fuzz/{path.stem}", 0, path.parent, 1)
    for item in list(inst.items)[:8]:
        for tpl in spec.templates[:4]:
            try:
                build_prompt(spec, tpl, item, [])
                target_text(spec, tpl, item)
            except HarnessError as e:  # as ``harness tasks sample`` reports it
                raise HarnessError(f"{path}: {e}") from None


def task_case(kind: str, folder: Path, originals: list[Path], rng: random.Random,
              value: Any, blob: bytes, n: int) -> Path:
    """Write one fuzzed task file into ``folder`` (mutants: beside their original)."""
    if kind == "mutated_task":
        orig = rng.choice(originals)
        raw = orig.read_bytes()
        if rng.random() < 0.5:
            try:
                data = yaml.safe_load(raw) or {}
                raw = yaml.safe_dump(mutate_structure(data, rng, value), allow_unicode=True,
                                     sort_keys=False).encode()
            except (yaml.YAMLError, TypeError, ValueError, AttributeError):
                raw = mutate_bytes(raw, rng)
        else:
            raw = mutate_bytes(raw, rng)
        target = orig.with_name(f"{'_' if orig.name.startswith('_') else ''}fz{n}.yaml")
    elif kind == "random_bytes":
        raw, target = blob, folder / f"fz{n}.yaml"
    else:
        try:
            raw = yaml.safe_dump(value, allow_unicode=True).encode()
        except (yaml.YAMLError, ValueError):
            raw = repr(value).encode()
        target = folder / f"fz{n}.yaml"
    target.write_bytes(raw)
    return target


# --- results, samples, cache ---------------------------------------------------------------


def results_case(path: Path, value: Any, rng: random.Random) -> None:
    """Write a mutated results.json at ``path``."""
    from harness.run.results import SCHEMA_VERSION

    base: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "tasks": {}, "config": {},
                            "harness": {}}
    data = mutate_structure(base, rng, value) if rng.random() < 0.8 else value
    try:
        path.write_text(json.dumps(data, allow_nan=True), encoding="utf-8")
    except (TypeError, ValueError):
        path.write_bytes(repr(data).encode())


def samples_case(path: Path, value: Any, blob: bytes, rng: random.Random) -> None:
    """Write a samples file: JSON lines of random values, or bytes."""
    if rng.random() < 0.5:
        path.write_bytes(blob)
    else:
        try:
            path.write_text(json.dumps(value) + "\n" + json.dumps({"id": "1"}) + "\n")
        except (TypeError, ValueError):
            path.write_bytes(blob)


def read_results(path: Path) -> None:
    """The results.json reader of ``leaderboard build`` and ``compare``."""
    from harness.leaderboard.inputs import load_results

    load_results(path)


def read_samples(path: Path) -> None:
    """The samples-file reader."""
    from harness.run.results import read_samples as read

    read(path)


def make_cache(folder: Path) -> bytes:
    """A small valid response cache; its bytes."""
    from harness.models.cache_store import ResponseCache

    cache = ResponseCache(folder)
    for i in range(20):
        key = ResponseCache.key("m", f'{{"i": {i}}}')
        cache.put(key, "m", "generate", f'{{"i": {i}}}', json.dumps(f"answer {i}"))
    cache.close()
    for extra in folder.glob("*-*"):  # fold the WAL in: one file to mutate
        extra.unlink()
    db = next(folder.glob("*.sqlite*"), None) or next(folder.iterdir())
    return db.read_bytes()


def cache_case(folder: Path, good: bytes, rng: random.Random, db_name: str) -> None:
    """Write a damaged copy of the cache file into ``folder``."""
    buf = bytearray(good)
    for _ in range(rng.randint(1, 8)):
        pos = rng.randrange(len(buf))
        if rng.random() < 0.8:
            buf[pos] = rng.randrange(256)
        else:
            del buf[pos:]
            break
    folder.mkdir(parents=True, exist_ok=True)
    (folder / db_name).write_bytes(bytes(buf))


def read_cache(folder: Path) -> None:
    """Open the cache, read every key, ``cache info``."""
    import contextlib
    import io

    from harness.models.cache_store import ResponseCache

    with contextlib.redirect_stderr(io.StringIO()):
        cache = ResponseCache(folder)
        try:
            cache.get_many([ResponseCache.key("m", f'{{"i": {i}}}') for i in range(20)])
            cache.info()
        finally:
            cache.close()


@contextmanager
def offline() -> Iterator[None]:
    """No network and no hub for the fuzz run."""
    import urllib.request

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("network disabled while fuzzing")

    saved = urllib.request.urlopen
    env = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")}
    urllib.request.urlopen = refuse
    os.environ.update({k: "1" for k in env})
    try:
        yield
    finally:
        urllib.request.urlopen = saved
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run(cases: int, seed: int = 0, kinds: tuple[str, ...] = KINDS,
        progress: Callable[[int, Tally], None] | None = None) -> Tally:
    """Run ``cases`` hypothesis-generated cases (spread over ``kinds``); the tally."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st

    from harness.tasks.loader import MAX_TASK_FILE_BYTES

    leaves = st.one_of(st.sampled_from(_INTERESTING), st.none(), st.booleans(),
                       st.integers(), st.floats(), st.text(max_size=40))
    values = st.recursive(leaves, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)),
        max_leaves=12)
    tally = Tally()
    work = Path(tempfile.mkdtemp(prefix="genharness-fuzz-"))
    cache_dir = Path(tempfile.mkdtemp(prefix="genharness-fuzz-cache-"))
    os.environ["GENHARNESS_CACHE_DIR"] = str(cache_dir)
    counter = [0]
    try:
        originals = copy_tasks(work / "tasks")
        good = make_cache(work / "good-cache")
        db_name = next((work / "good-cache").iterdir()).name

        @hypothesis_seed(seed)
        @settings(max_examples=cases, database=None, deadline=None,
                  phases=[Phase.generate], suppress_health_check=list(HealthCheck))
        @given(kind=st.sampled_from(kinds), value=values,
               blob=st.binary(max_size=min(2048, MAX_TASK_FILE_BYTES)),
               rnd=st.randoms(use_true_random=False))
        def one(kind: str, value: Any, blob: bytes, rnd: random.Random) -> None:
            n = counter[0] = counter[0] + 1
            rng = random.Random(rnd.getrandbits(64))
            case_dir = work / f"c{n}"
            case_dir.mkdir()
            target: Path | None = None
            try:
                if kind in ("mutated_task", "random_bytes", "random_yaml"):
                    target = task_case(kind, case_dir, originals, rng, value, blob, n)
                    path = target
                    classify(lambda: check_task_file(path), [str(path), f"fuzz/{path.stem}"],
                             tally, f"{kind} {path.name} {path.read_bytes()[:300]!r}")
                elif kind == "results":
                    f = case_dir / "results.json"
                    results_case(f, value, rng)
                    classify(lambda: read_results(f), [str(f)], tally,
                             f"results {f.read_bytes()[:300]!r}")
                elif kind == "samples":
                    f = case_dir / "samples.jsonl"
                    samples_case(f, value, blob, rng)
                    classify(lambda: read_samples(f), [str(f)], tally,
                             f"samples {f.read_bytes()[:300]!r}")
                else:
                    cache_case(case_dir / "cache", good, rng, db_name)
                    classify(lambda: read_cache(case_dir / "cache"),
                             [str(case_dir / "cache")], tally, "cache")
            finally:
                if target is not None and target.parent != case_dir:
                    target.unlink(missing_ok=True)
                shutil.rmtree(case_dir, ignore_errors=True)
            if progress is not None:
                progress(n, tally)

        with offline():
            one()
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(cache_dir, ignore_errors=True)
    return tally
