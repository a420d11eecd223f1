"""Issue 47: the dataset-backed example package (``examples/dataset-package``: a JSONL file
shipped as package data, a difficulty field, ID and OOD buckets, a metric of its own) installs
with pip into a fresh venv, validates by name (every record checked) and passes its own tests,
which evaluate every bucket (``check_task_package``). Without its data file in the package
data, validate names that step."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.plugins.installed import install_example, run, site_packages

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "dataset-package"
TASK = "unitconv/unit_convert"


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    python = install_example(EXAMPLE, tmp_path_factory.mktemp("dataset_install"))
    tasks = site_packages(python) / "harness_unitconv" / "tasks"
    assert (tasks / "unitconv.jsonl").is_file() and (tasks / "unit_convert.yaml").is_file()
    return python


def harness(python: Path, *args: str) -> tuple[int, str, str]:
    r = run([str(python), "-m", "harness", *args])
    return r.returncode, r.stdout, r.stderr


def test_the_installed_task_validates_by_name_and_samples(venv: Path) -> None:
    code, out, err = harness(venv, "tasks", "validate", TASK)
    assert code == 0 and out.startswith("ok: ") and "unit_convert.yaml" in out, err
    code, out, err = harness(venv, "plugins", "list", "--check")
    assert code == 0 and "ok (1 task)" in out, out + err
    code, out, err = harness(venv, "tasks", "sample", TASK, "-n", "2", "--bucket", "4")
    assert code == 0 and out.count("--- uc") == 2 and "bucket=4 role=OOD" in out, err


def test_the_package_own_tests_pass_evaluating_every_task(venv: Path, tmp_path: Path) -> None:
    """``check_task_package`` runs every bucket through the real runner with an oracle model
    (each answer its reference answer, scored by the package's own metric: all must score)."""
    pkg = tmp_path / "pkg"
    shutil.copytree(EXAMPLE / "tests", pkg / "tests")
    shutil.copy(EXAMPLE / "pyproject.toml", pkg / "pyproject.toml")
    r = run([str(venv), "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=pkg)
    assert r.returncode == 0 and "2 passed" in r.stdout, r.stdout + r.stderr


def test_a_data_file_left_out_of_the_package_data_is_named(tmp_path: Path) -> None:
    broken = tmp_path / "dataset-package"
    shutil.copytree(EXAMPLE, broken, ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__", ".pytest_cache"))
    toml = broken / "pyproject.toml"
    toml.write_text(toml.read_text().replace(', "tasks/*.jsonl"]', "]"))
    python = install_example(broken, tmp_path / "env")
    code, out, err = harness(python, "tasks", "validate", TASK)
    assert code == 2 and "source.path: file not found" in err, out + err
    assert err.rstrip().endswith("the task is installed: list its data files as package data "
                                 '(docs/writing-a-task-package.md, "Data files")'), err


def test_both_metrics_are_reported_per_bucket(venv: Path, tmp_path: Path) -> None:
    """The task's ``scoring.metrics: [within_1pct, exact_match]``, run through the installed
    package with the oracle model (every answer its item's target): both metrics per bucket in
    results.json, the primary one in the report's own rows."""
    import json

    script = tmp_path / "oracle_run.py"
    script.write_text(
        "import sys\nfrom pathlib import Path\nfrom harness import evaluate\n"
        "from harness.config import RunConfig\nfrom harness.testing import oracle_model\n"
        "from harness.tasks.index import TaskIndex\n"
        "cfg = RunConfig(model='oracle', tasks=['unitconv/unit_convert'], limit_per_bucket=4,"
        " use_cache=False, output_dir=Path(sys.argv[1]))\n"
        "index = TaskIndex.build([])\n(ref,) = index.resolve(cfg.tasks)\n"
        "evaluate(cfg, model=oracle_model(index.spec(ref), ref, cfg))\n")
    r = run([str(venv), str(script), str(tmp_path / "run")])
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    (rep,) = res["tasks"][0]["templates"]
    assert [b["accuracy"] for b in rep["buckets"]] == [1.0] * 6  # within_1pct, the primary
    (other,) = rep["metrics"]
    assert other["metric"] == "exact_match" and len(other["buckets"]) == 6
    assert [b["accuracy"] for b in other["buckets"]] == [1.0] * 6
