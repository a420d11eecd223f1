"""`harness generators|metrics|analyses|gaps list`: every building block a task file can name, with
its origin, parameters and fields; unknown names point there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.analyses.registry import analysis_names
from harness.answers.metrics import METRICS
from harness.errors import TaskSpecError
from harness.gaps.registry import GAPS
from harness.generators.registry import generator_names
from harness.tasks.loader import load_spec
from tests.helpers import run_harness
from tests.plugins.fakedist import harness, make_dist, task_yaml


def _listing(group: str) -> list[dict[str, Any]]:
    r = run_harness(group, "list", "--json")
    assert r.returncode == 0, r.stderr
    rows: list[dict[str, Any]] = json.loads(r.stdout)
    return rows


def test_generators_list_shows_fields_params_and_origin() -> None:
    rows = {b["name"]: b for b in _listing("generators")}
    assert sorted(rows) == generator_names()
    parity = rows["parity"]
    assert parity["origin"] == "builtin" and parity["status"] == "ok"
    assert parity["fields"] == ["text", "length", "target", "scratchpad", "text_hinted",
                                "scratchpad_hinted"]
    assert parity["params"] == [{"name": "sep", "default": "' '"},
                                {"name": "index_hints", "default": "False"},
                                {"name": "hint_window", "default": "False"}]
    assert parity["difficulty"] == "bits" and parity["description"]
    lmentry = {p["name"]: p["default"] for p in rows["lmentry"]["params"]}
    assert lmentry["path"] is None  # a required parameter
    assert "count_tokens" not in {p["name"] for p in rows["passkey"]["params"]}
    r = run_harness("generators", "list")
    lines = r.stdout.splitlines()
    assert lines[0] == f"{len(rows)} generators" and lines[1].split() == [
        "name", "origin", "fields", "params", "difficulty"]
    (row,) = [ln for ln in lines if ln.startswith("parity ")]
    assert row.split()[:2] == ["parity", "builtin"] and "text, length, target" in row


def test_metrics_and_analyses_lists() -> None:
    metrics = {b["name"]: b for b in _listing("metrics")}
    METRICS.load_builtins()
    assert sorted(metrics) == sorted(METRICS.items)
    assert all(b["origin"] == "builtin" and b["description"] for b in metrics.values())
    analyses = {b["name"]: b for b in _listing("analyses")}
    assert sorted(analyses) == analysis_names()
    params = {p["name"]: p["default"] for p in analyses["effective_length"]["params"]}
    assert {"threshold", "depth_field", "window"} <= set(params)
    assert params["depth_field"] == "'depth'"


def test_gaps_list() -> None:
    gaps = {b["name"]: b for b in _listing("gaps")}
    GAPS.load_builtins()
    assert sorted(gaps) == sorted(n for n in GAPS.items if GAPS.is_builtin(n))
    assert {"id_ood", "retention", "horizon"} <= set(gaps)
    assert all(b["origin"] == "builtin" and b["description"] for b in gaps.values())
    lines = run_harness("gaps", "list").stdout.splitlines()
    assert lines[0] == f"{len(gaps)} gaps" and lines[1].split() == ["name", "origin", "description"]


@pytest.mark.parametrize(("key", "bad", "near", "command"), [
    ("  name: addition\n", "  name: parity_\n", "parity", "harness generators list"),
    ("metric: numeric_match", "metric: numeric_matc", "numeric_match", "harness metrics list"),
])
def test_unknown_names_list_near_names_and_point_at_the_listing(
        tmp_path: Path, key: str, bad: str, near: str, command: str) -> None:
    text = (Path(__file__).resolve().parents[2] / "tasks" / "lengthgen" / "addition.yaml"
            ).read_text().replace(key, bad)
    assert text.count(bad) == 1
    (tmp_path / "t.yaml").write_text(text)
    with pytest.raises(TaskSpecError) as e:
        load_spec(tmp_path / "t.yaml")
    assert f"(did you mean: {near}" in str(e.value) and f"{command})" in str(e.value)


def test_plugin_blocks_are_listed_with_their_distribution(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(site, "blocks-demo", "3.1",
              {"harness.generators": {"letters": "blocks_demo:letters", "broken": "nope:x"},
               "harness.metrics": {"always": "blocks_demo:always"}},
              {"blocks_demo.py": (
                  "from harness.generators.registry import generator\n\n\n"
                  "@generator('letters', difficulty='letters', fields=('text', 'target'))\n"
                  "def letters(rng, difficulty, *, upper: bool = False):\n"
                  "    '''Random letters.'''\n"
                  "    return {'text': 'a' * difficulty, 'target': 'a'}\n\n\n"
                  "def always(extracted: str, target: str) -> float:\n"
                  "    '''Every answer is right.'''\n"
                  "    return 1.0\n")})
    r = harness(site, "generators", "list", "--json")
    assert r.returncode == 0, r.stderr
    rows = {b["name"]: b for b in json.loads(r.stdout)}
    assert rows["letters"]["origin"] == "plugin:blocks-demo==3.1"
    assert rows["letters"]["fields"] == ["text", "target"]
    assert rows["letters"]["params"] == [{"name": "upper", "default": "False"}]
    assert rows["broken"]["status"].startswith(
        "error: plugin blocks-demo (harness.generators:broken) failed to load: ")
    assert "warning: plugin blocks-demo (harness.generators:broken) failed to load: " in (
        r.stderr) and "Traceback" not in r.stderr
    r = harness(site, "metrics", "list")
    (row,) = [ln for ln in r.stdout.splitlines() if ln.startswith("always ")]
    assert row.split()[1] == "blocks-demo==3.1" and row.endswith("Every answer is right.")
    (tmp_path / "t.yaml").write_text(task_yaml("t", generator="leters"))
    r = harness(site, "tasks", "validate", str(tmp_path / "t.yaml"))
    assert r.returncode == 2 and "(did you mean: letters, " in r.stderr
