"""A reference model rebuilt on a fresh clone: ``rebuild.sh`` trains and evaluates one model
(a smoke-sized recipe), its results.json names no local path, rebuilding again gives the same
weights, and the board's reproduce line for it runs on the clone and gives the same numbers."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from harness.leaderboard.provenance import reproduce
from harness.run.results import Results

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
RUN = "leaderboards/reference/reference_parity/lstm-s0"


def _sh(cmd: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=900)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    dest = tmp_path_factory.mktemp("clone") / "genharness"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(dest)], check=True, timeout=300)
    (dest / ".venv").symlink_to(Path(sys.prefix))  # the environment; the clone's own code:
    env = {**os.environ, "PYTHONPATH": str(dest), "STEPS": "40", "PER_BUCKET": "5",
           "SEEDS": "0", "PATH": f"{Path(sys.prefix) / 'bin'}:{os.environ['PATH']}"}
    for path in (RUN, "refmodels"):  # a committed run of this name would be kept, not rebuilt
        subprocess.run(["rm", "-rf", str(dest / path)], check=True)
    r = _sh("bash examples/reference_models/rebuild.sh parity/lstm", dest, env)
    assert r.returncode == 0, r.stdout + r.stderr
    return dest, env


def test_rebuild_on_a_clone_writes_public_results(clone: tuple[Path, dict[str, str]]) -> None:
    dest, env = clone
    text = (dest / RUN / "results.json").read_text(encoding="utf-8")
    res = json.loads(text)
    assert res["model"]["path"] == "./refmodels/reference_parity/lstm-s0"
    assert str(dest) not in text and str(Path.home()) + "/" not in text
    train = json.loads((dest / RUN / "train.json").read_text(encoding="utf-8"))
    assert train["arch"] == "lstm" and train["steps"] == 40
    # rebuilding the weights from nothing gives the bytes the results were measured on
    weights = dest / "refmodels/reference_parity/lstm-s0"
    subprocess.run(["rm", "-rf", str(weights)], check=True)
    r = _sh("bash examples/reference_models/rebuild.sh parity/lstm", dest, env)
    assert r.returncode == 0 and "warning" not in r.stdout, r.stdout + r.stderr


def _rerun(dest: Path, env: dict[str, str], extra: list[str]) -> None:
    """Run the board's reproduce line for the rebuilt model (plus ``extra`` options) on the
    clone; it must give the numbers the rebuild measured."""
    res = Results.model_validate_json((dest / RUN / "results.json").read_text(encoding="utf-8"))
    line = reproduce(res)
    assert "trust_remote_code=true" in line
    checkout, _, command = line.partition(" && ")
    assert checkout.startswith("git checkout ")
    command, _, note = command.partition("  # ")  # local weights: which numbers are bitwise
    assert note.startswith("bitwise only with weights of sha256 ") and "seeds" in note
    args = shlex.split(command)
    assert args[0] == "harness"
    r = _sh(shlex.join([".venv/bin/harness", *args[1:], *extra, "--output-dir", "again"]), dest,
            env)
    assert r.returncode == 0, r.stdout + r.stderr
    first = json.loads((dest / RUN / "results.json").read_text(encoding="utf-8"))
    again = json.loads((dest / "again" / "results.json").read_text(encoding="utf-8"))
    assert again["tasks"][0]["templates"] == first["tasks"][0]["templates"]


def test_reproduce_line_runs_on_the_clone(clone: tuple[Path, dict[str, str]]) -> None:
    dest, env = clone
    _rerun(dest, env, ["--overwrite"])
