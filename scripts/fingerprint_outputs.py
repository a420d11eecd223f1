"""Fingerprint what a tree's code writes, to show a refactor changes no number.

Runs a fixed set of evaluations and prints one sha256 per results.json and samples file:

- every suite, every template, 2 items per bucket, on a tiny random Llama built offline
  (``tests/fixtures/tiny_model.py``) through the real ``hf:`` backend, plus few-shot with the
  chat template, and the ``cot`` and ``self_ask`` strategies;
- every task of every suite with a scripted model that gives the reference answer to two
  prompts in three (``harness.testing.oracle_model``), so that gaps are measured, not only at
  the floor; ``cot`` too on two tasks.

results.json is hashed without what differs between two runs of the same work (timings, the
git commit, the output folder); samples files byte for byte. The code measured is whatever
``import harness`` finds, so point ``PYTHONPATH`` at the tree to measure:

    git worktree add /tmp/before main
    PYTHONPATH=/tmp/before .venv/bin/python scripts/fingerprint_outputs.py /tmp/fp-before
    .venv/bin/python scripts/fingerprint_outputs.py /tmp/fp-after
    diff /tmp/fp-before/fingerprint.txt /tmp/fp-after/fingerprint.txt

Needs the data mirror (``GENHARNESS_DATA``, default ``../shared/data``); about a minute here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SUITES = ["lengthgen", "compgen", "easy2hard", "instructdiv"]
DROP = {"timings", "git_commit", "git_dirty", "output_dir"}  # differ between runs of one work
# (name, harness eval options) of the runs on the tiny model
TINY_RUNS = [
    ("all", ["--tasks", ",".join(SUITES), "--templates", "all", "--limit-per-bucket", "2"]),
    ("fewshot-chat", ["--tasks", "lengthgen/addition,compgen/scan_length", "--num-fewshot", "2",
                      "--apply-chat-template", "--limit-per-bucket", "3"]),
    ("cot", ["--tasks", "lengthgen/addition,easy2hard/math", "--strategy", "cot",
             "--limit-per-bucket", "2"]),
    ("self_ask", ["--tasks", "compgen/kb_two_hop", "--strategy", "self_ask",
                  "--limit-per-bucket", "2"]),
]
COT_ORACLE = ("lengthgen/addition", "easy2hard/ladder_sign")


def _h(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16)


def tiny_runs(out: Path) -> None:
    """The ``harness eval`` runs on the tiny model (each its own process, as a user runs it)."""
    sys.path.append(str(REPO))  # after PYTHONPATH: the harness measured comes from there
    from tests.fixtures.tiny_model import build_tiny_model

    # one fixed place: the model's path is part of the results
    model = build_tiny_model(Path(tempfile.gettempdir()) / "genharness-fingerprint-model")
    for name, opts in TINY_RUNS:
        r = subprocess.run(
            [sys.executable, "-m", "harness", "eval", "--model", f"hf:{model}", "--seed", "0",
             "--no-cache", "--batch-size", "16", "--output-dir", str(out / name), *opts],
            capture_output=True, text=True, cwd=out)  # not a checkout: PYTHONPATH decides
        if r.returncode != 0:
            sys.exit(f"fingerprint: run {name} failed: {r.stderr.strip().splitlines()[-1:]}")


def oracle_runs(out: Path) -> None:
    """Every task with a model right on two prompts in three (a fixed hash of the prompt)."""
    from harness.config import RunConfig
    from harness.run.evaluate import evaluate
    from harness.tasks.index import TaskIndex
    from harness.testing import ScriptedLM, oracle_model

    index = TaskIndex.build([])
    for suite in SUITES:
        for ref in index.resolve([suite]):
            for strategy in ["direct", "cot"] if ref.address in COT_ORACLE else ["direct"]:
                cfg = RunConfig(model="scripted:oracle", tasks=[ref.address], seed=1,
                                limit_per_bucket=4, templates=["all"], use_cache=False,
                                strategy=strategy, output_dir=out / "oracle" /
                                f"{ref.address.replace('/', '__')}__{strategy}")
                oracle = oracle_model(index.spec(ref), ref, cfg)

                def answer(p: str, o: ScriptedLM = oracle) -> str:
                    return o._text(p) if _h(p) % 3 else o._text(p) + "x"

                def score(c: str, x: str, o: ScriptedLM = oracle) -> float:
                    v = o._logprob(c, x)
                    return -v if _h(c) % 3 == 0 else v

                evaluate(cfg, model=ScriptedLM(answer, score, name="oracle"))


def _normalized(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _normalized(v) for k, v in obj.items() if k not in DROP}
    if isinstance(obj, list):
        return [_normalized(v) for v in obj]
    return obj


def fingerprint(out: Path) -> list[str]:
    """``sha256  path`` of every results.json (normalized) and samples file under ``out``."""
    lines = []
    for p in sorted(out.rglob("*")):
        if p.name == "results.json":
            data = json.dumps(_normalized(json.loads(p.read_text())), sort_keys=True).encode()
        elif p.suffix == ".jsonl":
            data = p.read_bytes()
        else:
            continue
        lines.append(f"{hashlib.sha256(data).hexdigest()}  {p.relative_to(out)}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="folder for the runs (replaced) and fingerprint.txt")
    out: Path = ap.parse_args().out.resolve()
    os.environ.setdefault("GENHARNESS_DATA", str(REPO.parent / "shared" / "data"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    import harness

    print(f"measuring {Path(harness.__file__).parent}")
    tiny_runs(out)
    oracle_runs(out)
    lines = fingerprint(out)
    (out / "fingerprint.txt").write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} files fingerprinted: {out / 'fingerprint.txt'}")


if __name__ == "__main__":
    main()
