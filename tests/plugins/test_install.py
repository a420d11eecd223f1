"""The example package installed with pip into a fresh virtual environment (no network): its
plugins are listed, its task is listed and evaluated with its own model backend, and results.json
records where the task came from. The package's own tests (harness.testing) pass there too."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.plugins.installed import install_example, site_packages
from tests.plugins.installed import run as _run

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "plugin-package"
DIST, VERSION = "genharness-example-plugin", "0.1.0"


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the example package pip-installed from a copy of its folder
    (``install_example``)."""
    python = install_example(EXAMPLE, tmp_path_factory.mktemp("plugin_install"))
    assert (site_packages(python) / "harness_example" / "tasks" / "digitsum.yaml").is_file()
    return python


def harness(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _run([str(python), "-m", "harness", *args])


def test_plugins_and_tasks_are_listed(venv: Path) -> None:
    r = harness(venv, "plugins", "list")
    assert r.returncode == 0, r.stderr
    rows = {ln.split()[2]: ln for ln in r.stdout.splitlines() if ln.startswith(DIST + " ")}
    assert set(rows) == {"tasks", "generators", "metrics", "models"}
    assert all(VERSION in ln and ln.endswith("  not loaded") for ln in rows.values())
    assert "mybench" in rows["tasks"] and "example:" in rows["models"]
    assert "digit_list" in rows["generators"] and "digit_sum_match" in rows["metrics"]
    r = harness(venv, "plugins", "list", "--json")
    assert r.returncode == 0, r.stderr
    mine = [e for e in json.loads(r.stdout) if e["distribution"] == DIST]
    assert {(e["group"], e["name"]) for e in mine} == {
        ("harness.tasks", "mybench"), ("harness.generators", "digit_list"),
        ("harness.metrics", "digit_sum_match"), ("harness.models", "example:")}
    r = harness(venv, "plugins", "list", "--check")
    assert r.returncode == 0 and "ok (1 task)" in r.stdout, r.stdout + r.stderr
    r = harness(venv, "tasks", "list")
    assert r.returncode == 0, r.stderr
    (row,) = [ln for ln in r.stdout.splitlines() if "mybench/digitsum" in ln]
    assert f"{DIST}=={VERSION}" in row and "2 … 5 (4)" in row and "6 … 12 (4)" in row
    assert "lengthgen/addition" in r.stdout and r.stderr == ""


def test_eval_plugin_task_with_plugin_model(venv: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = harness(venv, "eval", "--model", "example:rules", "--tasks", "mybench",
                "--limit-per-bucket", "5", "--seed", "3", "--output-dir", str(out))
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr and "mybench/digitsum" in r.stdout
    res = json.loads((out / "results.json").read_text())
    (task,) = res["tasks"]
    assert task["task"] == "mybench/digitsum" and task["origin"] == f"plugin:{DIST}=={VERSION}"
    assert res["environment"]["plugins"] == {DIST: VERSION}
    assert res["model"]["backend"] == "example" and res["model"]["name"] == "rules"
    (rep,) = task["templates"]
    # the rule model sums up to 6 digits correctly and is off by one beyond: exactly this
    assert {b["bucket"]: (b["n"], b["accuracy"]) for b in rep["buckets"]} == {
        "2": (5, 1.0), "3": (5, 1.0), "4": (5, 1.0), "5": (5, 1.0), "6": (5, 1.0),
        "8": (5, 0.0), "10": (5, 0.0), "12": (5, 0.0)}
    assert {g["role"]: (g["n"], g["accuracy"]) for g in rep["roles"]} == {
        "ID": (20, 1.0), "OOD": (20, 0.25)}
    assert rep["gaps"]["id_ood"]["value"] == pytest.approx(0.75)
    assert rep["gaps"]["horizon"]["value"] == 6
    samples = [json.loads(ln) for ln in (out / task["samples_file"]).read_text().splitlines()]
    assert len(samples) == 40 and all(len(s["fewshot_ids"]) == 2 for s in samples)
    for s in samples:  # exemplars come from ID buckets only, and the answer follows the rule
        digits = s["prompt"].rsplit("Digits: ", 1)[1].split("\n")[0].split()
        assert len(digits) == s["difficulty"] and s["output"] == (
            f" {sum(map(int, digits)) + (len(digits) > 6)}")

    r = harness(venv, "eval", "--model", "example:rules", "--model-args", "capacity=3",
                "--tasks", "digitsum", "--templates", "question", "--limit-per-bucket", "2",
                "--output-dir", str(tmp_path / "run3"))
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "run3" / "results.json").read_text())
    accs = {b["bucket"]: b["accuracy"] for b in res["tasks"][0]["templates"][0]["buckets"]}
    assert accs == {"2": 1.0, "3": 1.0, "4": 0.0, "5": 0.0, "6": 0.0, "8": 0.0, "10": 0.0,
                    "12": 0.0}


def test_bad_input_to_the_plugin_backend_is_one_line(venv: Path, tmp_path: Path) -> None:
    r = harness(venv, "eval", "--model", "example:gpt", "--tasks", "mybench/digitsum",
                "--output-dir", str(tmp_path))
    assert r.returncode == 2 and r.stderr.strip() == (
        "error: --model example:gpt: unknown model; the only one is example:rules")


def test_the_package_own_tests_pass(venv: Path, tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    shutil.copytree(EXAMPLE / "tests", pkg / "tests")
    shutil.copy(EXAMPLE / "pyproject.toml", pkg / "pyproject.toml")
    r = _run([str(venv), "-c", "import harness_example; print(harness_example.__file__)"])
    assert "site-packages" in r.stdout, r.stdout + r.stderr  # the installed copy, not src/
    r = _run([str(venv), "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=pkg)
    assert r.returncode == 0 and "2 passed" in r.stdout, r.stdout + r.stderr
