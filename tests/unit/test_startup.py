"""Start-up: ``harness tasks list`` imports no torch/transformers, and task summaries are cached
per file and invalidated when the file or anything it includes changes (no timing here: the
start-up numbers are measured in bench/startup.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.tasks import index as index_mod
from harness.tasks.index import TaskIndex
from harness.tasks.refs import scan_folder
from harness.tasks.summaries import SummaryCache, include_chain

ROOT = Path(__file__).resolve().parents[2]

BASE = """\
suites: [synth]
source: {type: generator, name: copy, per_bucket: 4}
fields: {target: target, difficulty: length}
difficulty_name: length
buckets: {values: [2, 5, 8, 12]}
roles: {id_max: 5}
output: {type: generate, max_tokens: 16, stop: ["\\n"]}
scoring: {extract: {kind: first_line}, metric: exact_match}
"""


def _task(name: str) -> str:
    return (f"include: _base.yaml\nname: {name}\ndescription: synthetic {name}\n"
            "templates:\n  - {id: io, prompt: \"Copy: {{ text }}\\nOutput:\"}\n")


@pytest.fixture()
def synth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GENHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "tasks"
    (root / "synth").mkdir(parents=True)
    (root / "synth" / "_base.yaml").write_text(BASE)
    for i in range(3):
        (root / "synth" / f"t{i}.yaml").write_text(_task(f"t{i}"))
    return root


def test_tasks_list_imports_no_torch(synth: Path) -> None:
    code = (
        "import sys\n"
        f"sys.argv = ['harness', 'tasks', 'list', '--include-path', {str(synth)!r}]\n"
        "from harness.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('torch', 'transformers', 'tokenizers', 'numpy_financial', 'datasets', 'pyarrow'))\n"
        "print('HEAVY', heavy)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ})
    assert r.returncode == 0, r.stderr
    assert "synth/t0" in r.stdout and "lengthgen/addition" in r.stdout
    assert r.stdout.strip().splitlines()[-1] == "HEAVY []"


def test_list_rows_are_one_line_each(synth: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "harness", "tasks", "list", "--include-path",
                        str(synth)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    (row,) = [ln for ln in r.stdout.splitlines() if ln.startswith("synth/t1 ")]
    assert "2 … 5 (2)" in row and "8 … 12 (2)" in row and "include" in row and "synth" in row


def test_summaries_are_cached_and_invalidated(synth: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = TaskIndex.build([synth])
    refs = [r for r in first.refs.values() if r.address.startswith("synth/")]
    got = first.summaries(refs)
    assert got["synth/t0"].ood_buckets == ["8", "12"] and got["synth/t0"].templates == 1

    calls: list[Path] = []
    real = index_mod.load_spec

    def counting(path: Path) -> object:
        calls.append(Path(path))
        return real(path)

    monkeypatch.setattr(index_mod, "load_spec", counting)
    again = TaskIndex.build([synth])
    assert again.summaries(list(again.refs.values()))["synth/t2"] == got["synth/t2"]
    assert not [p for p in calls if "synth" in str(p)]  # all from the cache

    # an included file changes: every task including it is parsed again
    (synth / "synth" / "_base.yaml").write_text(BASE.replace("[2, 5, 8, 12]", "[2, 5, 9]"))
    calls.clear()
    third = TaskIndex.build([synth])
    fresh = third.summaries([r for r in third.refs.values() if r.address.startswith("synth/")])
    assert fresh["synth/t1"].ood_buckets == ["9"]
    assert len([p for p in calls if "synth" in str(p)]) == 3


def test_invalid_task_is_never_cached(synth: Path) -> None:
    (synth / "synth" / "bad.yaml").write_text(_task("bad").replace("name: bad", "nmae: bad"))
    for _ in range(2):  # an error every time, not a stale success
        index = TaskIndex.build([synth])
        with pytest.raises(HarnessError, match="nmae"):
            index.summaries(list(index.refs.values()))
    (synth / "synth" / "bad.yaml").unlink()
    index = TaskIndex.build([synth])
    assert "synth" in index.suites() and len(index.suites()["synth"]) == 3


def test_cache_key_change_drops_everything(tmp_path: Path, synth: Path) -> None:
    path = tmp_path / "c.json"
    task = str((synth / "synth" / "t0.yaml").resolve())
    spec = TaskIndex.build([synth]).spec(next(r for r in scan_folder(synth, "x")
                                              if r.address == "synth/t0"))
    from harness.tasks.summaries import TaskSummary

    cache = SummaryCache("k1", path)
    cache.put(task, spec, TaskSummary.of(spec))
    cache.save()
    assert SummaryCache("k1", path).get(task) == TaskSummary.of(spec)
    assert SummaryCache("k2", path).get(task) is None
    assert json.loads(path.read_text())["entries"][task]["deps"][0][0] == task


def test_include_chain_follows_lists(tmp_path: Path) -> None:
    (tmp_path / "_a.yaml").write_text("include: [_b.yaml]\nx: 1\n")
    (tmp_path / "_b.yaml").write_text("y: 2\n")
    (tmp_path / "_c.yaml").write_text("z: 3\n")
    (tmp_path / "t.yaml").write_text("include:\n  - _a.yaml\n  - _c.yaml\nname: t\n")
    names = sorted(p.name for p in include_chain(tmp_path / "t.yaml"))
    assert names == ["_a.yaml", "_b.yaml", "_c.yaml", "t.yaml"]


def test_scan_skips_underscore_files_and_folders(tmp_path: Path) -> None:
    for rel in ("s/a.yaml", "s/_base.yaml", "_hidden/b.yaml", "s/sub/c.yaml", "s/notes.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x: 1\n")
    assert [r.address for r in scan_folder(tmp_path, "o", prefix="p/")] == ["p/s/a", "p/s/sub/c"]


def test_importing_the_errors_leaf_loads_nothing_else() -> None:
    """``harness/__init__`` re-exports lazily (PEP 562): ``import harness.errors`` loads two
    harness modules and no numpy, pydantic, jinja2 or yaml; the public names still resolve."""
    code = ("import sys, harness.errors\n"
            "mods = sorted(m for m in sys.modules if m == 'harness' or m.startswith('harness.'))\n"
            "heavy = [m for m in ('numpy', 'pydantic', 'jinja2', 'yaml') if m in sys.modules]\n"
            "import harness\n"
            "names = [n for n in harness.__all__ if getattr(harness, n) is None]\n"
            "print(mods, heavy, names)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['harness', 'harness.errors'] [] []"
    import harness

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        harness.nope  # noqa: B018
