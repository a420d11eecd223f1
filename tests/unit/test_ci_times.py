"""CI's times: ``.ci/run``'s bookkeeping lines leave what ``scripts/ci_times.py`` reads (each
step with its seconds and load averages, the exit status, each test's time), the script prints
them when the run ends, and the README's CI figure is the one it recorded."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]


def ci_times() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ci_times", REPO / "scripts" / "ci_times.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ci_run_records_each_step_and_prints_the_slowest_tests(tmp_path: Path) -> None:
    lines = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    bookkeeping = [ln for ln in lines if ln.startswith(("set -euo", "export ", "trap '"))]
    assert len(bookkeeping) == 5
    script = tmp_path / "run"
    script.write_text("\n".join([*bookkeeping, "true first", "true second",
                                 "bash -c 'exit 3'", "true never", ""]))
    times = tmp_path / "times"
    times.mkdir()
    tests = {"a.py::t": {"seconds": 2.5, "outcome": "passed"},
             "b.py::u": {"seconds": 9.0, "outcome": "failed"}}
    (times / "pytest-1.json").write_text(json.dumps(
        {"markexpr": "slow", "workers": 2, "exitstatus": 1, "tests": tests}))
    r = subprocess.run(["bash", str(script)], capture_output=True, text=True, cwd=REPO,
                       env={**os.environ, "CI_TIMES_DIR": str(times)}, timeout=60)
    assert r.returncode == 3, r.stderr  # the failing step's status, bookkeeping or not
    s = ci_times().summary(times, slowest=20)
    assert [st["step"] for st in s["steps"]] == ["true first", "true second", "bash -c 'exit 3'"]
    assert s["exit_status"] == 3 and s["tests"] == 2
    assert all(len(st["load_start"]) == len(st["load_end"]) == 3 for st in s["steps"])
    assert [t["test"] for t in s["slowest"]] == ["b.py::u", "a.py::t"]
    assert "b.py::u  [failed]" in r.stdout and "(exit 3)" in r.stdout  # printed on exit
    assert r.stdout.splitlines()[-1] == "all groups: 1 passed, 1 failed"
    assert ci_times().summary(times, slowest=1)["slowest"][0]["test"] == "b.py::u"


def test_pytest_sessions_write_each_tests_time(tmp_path: Path) -> None:
    """tests/timings.py, under GENHARNESS_TEST_TIMES: one file per session, every test in it."""
    (tmp_path / "test_two.py").write_text("def test_a():\n    pass\n\n"
                                          "def test_b():\n    assert False\n")
    (tmp_path / "conftest.py").write_text(
        "from tests.timings import register\n\n\n"
        "def pytest_configure(config):\n    register(config)\n")
    times = tmp_path / "times"
    env = {**os.environ, "GENHARNESS_TEST_TIMES": str(times), "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m",
                        "not slow", str(tmp_path / "test_two.py")], capture_output=True, text=True,
                       cwd=tmp_path, env=env, timeout=120)
    assert r.returncode == 1, r.stdout
    (written,) = times.glob("pytest-*.json")
    data = json.loads(written.read_text())
    assert data["markexpr"] == "not slow" and data["exitstatus"] == 1
    assert {k.split("::")[1]: v["outcome"] for k, v in data["tests"].items()} == {
        "test_a": "passed", "test_b": "failed"}



def test_the_readmes_ci_figure_is_the_recorded_one() -> None:
    """The README quotes bench/results/ci_times.json (written by ci_times.py --record after a
    fresh-clone .ci/run): its total, each step's time and the load it ran under."""
    rec = json.loads((REPO / "bench" / "results" / "ci_times.json").read_text(encoding="utf-8"))
    assert "fresh clone" in rec["note"]
    assert [st["step"] for st in rec["steps"]] == [
        "bash scripts/setup.sh --tests", "bash scripts/lint.sh",
        '.venv/bin/python -m pytest -n 2 -m "not slow"', ".venv/bin/python -m pytest -n 2 -m slow"]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    (item,) = [p for p in re.split(r"\n(?=- )", readme) if "bench/results/ci_times.json" in p
               and "CI's time" in p]
    minutes = ci_times().minutes
    assert f"took {minutes(rec['total_seconds'])} min" in item
    for st in rec["steps"]:
        assert f" {minutes(st['seconds'])}" in item, st["step"]
    for load in (rec["steps"][0]["load_start"], rec["steps"][-1]["load_end"]):
        assert "/".join(f"{x:.2f}" for x in load) in item
    passed = re.search(r"(\d+) passed", rec["note"])
    assert passed is not None and f"{int(passed.group(1)):,} tests passed" in item
