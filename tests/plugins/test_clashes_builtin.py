"""A plugin that reuses a built-in's name: its task is skipped with a warning naming both and the
built-in keeps working; its generator or metric never silently wins or loses; `plugins list
--check` fails on it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.plugins.fakedist import REPO, SCRIPTED, harness, make_dist, task_yaml, warnings_in

GEN_MODULE = """\
import random


def addition(rng: random.Random, difficulty: int) -> dict:
    raise ZeroDivisionError("the plugin's addition must never run")


def numeric_match(extracted: str, target: str) -> float:
    return 1.0  # would score every answer correct
"""

DECORATED = """\
from harness.generators.registry import generator


@generator("copy", difficulty="length", fields=("text", "target"))
def copy(rng, difficulty):
    return {"text": "x", "target": "x"}
"""


@pytest.fixture()
def site(tmp_path: Path) -> Path:
    """shadow-tasks defines lengthgen/addition (a built-in address) and its own lengthgen/extra;
    shadow-code offers a generator 'addition', a metric 'numeric_match', an analysis
    'effective_length' and a model backend 'hf' (built-in names)."""
    site = tmp_path / "site"
    make_dist(site, "shadow-tasks", "1.0", {"harness.tasks": {"lengthgen": "shadow_tasks"}},
              {"shadow_tasks/__init__.py": "",
               "shadow_tasks/addition.yaml": task_yaml("addition"),
               "shadow_tasks/extra.yaml": task_yaml("extra")})
    make_dist(site, "shadow-code", "2.0",
              {"harness.generators": {"addition": "shadow_code:addition"},
               "harness.metrics": {"numeric_match": "shadow_code:numeric_match"},
               "harness.analyses": {"effective_length": "shadow_code:numeric_match"},
               "harness.models": {"hf": "shadow_code:numeric_match"}},
              {"shadow_code.py": GEN_MODULE})
    make_dist(site, "scripted-model", "0.0.1", SCRIPTED)
    return site


def test_plugin_task_with_a_builtin_address_is_skipped(site: Path, tmp_path: Path) -> None:
    r = harness(site, "tasks", "list")
    assert r.returncode == 0, r.stderr
    (warning,) = [w for w in warnings_in(r.stderr) if "plugin task" in w]
    assert "plugin task 'lengthgen/addition' of plugin:shadow-tasks==1.0 (" in warning
    assert "clashes with builtin (" in warning and "which is used" in warning
    (row,) = [ln for ln in r.stdout.splitlines() if ln.startswith("lengthgen/addition ")]
    assert row.rstrip().endswith("builtin")
    assert any(ln.startswith("lengthgen/extra ") for ln in r.stdout.splitlines())

    out = tmp_path / "o"
    r = harness(site, "eval", "--model", "scripted:empty", "--tasks", "lengthgen/addition",
                "--tasks", "lengthgen/extra", "--limit-per-bucket", "1", "--output-dir", str(out))
    assert r.returncode == 0, r.stderr
    res = json.loads((out / "results.json").read_text())
    assert [(t["task"], t["origin"]) for t in res["tasks"]] == [
        ("lengthgen/addition", "builtin"), ("lengthgen/extra", "plugin:shadow-tasks==1.0")]
    assert res["tasks"][0]["spec"]["source"]["name"] == "addition"


def test_builtin_suite_still_runs(site: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    r = harness(site, "eval", "--model", "scripted:empty", "--tasks", "lengthgen",
                "--limit-per-bucket", "1", "--output-dir", str(out))
    assert r.returncode == 0, r.stderr
    res = json.loads((out / "results.json").read_text())
    origins = {t["task"]: t["origin"] for t in res["tasks"]}
    builtin = sorted(p.stem for p in (REPO / "tasks" / "lengthgen").glob("[!_]*.yaml"))
    assert origins == {**{f"lengthgen/{n}": "builtin" for n in builtin},
                       "lengthgen/extra": "plugin:shadow-tasks==1.0"}


def test_plugin_generator_and_metric_named_like_builtins(site: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    r = harness(site, "eval", "--model", "scripted:empty", "--tasks", "lengthgen/addition",
                "--limit-per-bucket", "1", "--output-dir", str(out))
    assert r.returncode == 0, r.stderr  # the plugin's addition (which raises) never ran
    warnings = warnings_in(r.stderr)
    assert any("generator 'addition' of plugin shadow-code==2.0 (shadow_code:addition) is "
               "ignored: the built-in generator of that name is used" in w for w in warnings)
    res = json.loads((out / "results.json").read_text())
    accs = [b["accuracy"] for b in res["tasks"][0]["templates"][0]["buckets"]]
    assert accs and all(a == 0.0 for a in accs)  # the built-in numeric_match, not "always 1.0"
    assert any("metric 'numeric_match' of plugin shadow-code==2.0" in w for w in warnings)
    assert "shadow-code" not in res["environment"]["plugins"]

    r = harness(site, "generators", "list")
    assert r.returncode == 0, r.stderr
    rows = [ln for ln in r.stdout.splitlines() if ln.startswith("addition ")]
    assert len(rows) == 2 and "builtin" in rows[0] and "shadow-code==2.0" in rows[1]
    r = harness(site, "generators", "list", "--json")
    (ignored,) = [b for b in json.loads(r.stdout) if b["origin"] == "plugin:shadow-code==2.0"]
    assert ignored["name"] == "addition" and ignored["status"].startswith("ignored: the built-in")


def test_check_fails_on_clashes_and_shadowed_names(site: Path) -> None:
    r = harness(site, "plugins", "list", "--check")
    assert r.returncode == 1, r.stdout + r.stderr
    text = " ".join(r.stdout.split())
    assert "shadowed: the built-in generator 'addition' is used instead" in text
    assert "shadowed: the built-in metric 'numeric_match' is used instead" in text
    assert "shadowed: the built-in analysis 'effective_length' is used instead" in text
    assert "shadowed: the built-in model backend 'hf' is used instead" in text
    assert "clash: lengthgen/addition is also defined by builtin (" in text
    assert "lengthgen/extra" not in text.split("clash:")[1].split(" shadow-")[0]


def test_a_decorator_reusing_a_builtin_name_fails_its_plugin_only(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(site, "reuse", "0.1", {"harness.generators": {"copy2": "reuse_gen:copy"}},
              {"reuse_gen.py": DECORATED})
    (tmp_path / "t.yaml").write_text(task_yaml("t", generator="copy2"))
    r = harness(site, "tasks", "validate", str(tmp_path / "t.yaml"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert ("generator 'copy' is already registered by harness.generators.sequences"
            in r.stderr), r.stderr
    (tmp_path / "u.yaml").write_text(task_yaml("u", generator="copy"))
    r = harness(site, "tasks", "validate", str(tmp_path / "u.yaml"))
    assert r.returncode == 0, r.stderr  # the built-in copy is untouched


def test_a_plugin_task_sharing_a_builtin_name_is_flagged_and_named(tmp_path: Path) -> None:
    """mybench/addition makes everyone's bare `--tasks addition` ambiguous: `plugins list
    --check` says so (it said ok), and the error at eval names the addresses to choose from."""
    site = tmp_path / "site"
    long_dist = "a-plugin-distribution-with-a-long-name-" + "x" * 50
    make_dist(site, long_dist, "0.1", {"harness.tasks": {"mybench": "mybench_tasks"}},
              {"mybench_tasks/__init__.py": "",
               "mybench_tasks/addition.yaml": task_yaml("addition"),
               "mybench_tasks/digits.yaml": task_yaml("digits")})
    make_dist(site, "scripted-model", "0.0.1", SCRIPTED)
    r = harness(site, "plugins", "list", "--check")
    assert r.returncode == 1, r.stdout + r.stderr
    (row,) = [ln for ln in r.stdout.splitlines() if ln.startswith(long_dist + " ")]  # whole
    assert row.endswith("error: ambiguous: mybench/addition shares its name with "
                        "lengthgen/addition, so --tasks addition becomes ambiguous for "
                        "everyone (rename it)"), row
    r = harness(site, "plugins", "list", "--check", "--json")
    assert r.returncode == 1
    by_group = {e["group"]: e for e in json.loads(r.stdout)}
    assert by_group["harness.tasks"]["distribution"] == long_dist
    assert by_group["harness.tasks"]["status"].startswith("error: ambiguous: mybench/addition")
    assert by_group["harness.models"]["status"] == "ok"
    r = harness(site, "eval", "--model", "scripted:empty", "--tasks", "addition",
                "--output-dir", str(tmp_path / "o"))
    assert r.returncode == 2
    assert r.stderr == ("error: task name 'addition' is ambiguous: lengthgen/addition, "
                        "mybench/addition (give one of these addresses)\n")
