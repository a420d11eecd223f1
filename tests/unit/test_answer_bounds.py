"""An answer is bounded by what its request allows (issue 37, point 8): a server that ignores
``max_tokens`` is cut with one warning or refused with one line before its answer reaches the
samples file or the response cache; a plugin metric or extractor that returns something other
than a score (or text) is one line naming it and the item."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.answers.extract import EXTRACTORS, extractor
from harness.answers.metrics import METRICS, metric
from harness.config import RunConfig
from harness.errors import HarnessError
from harness.models.answer_bounds import BoundedLM, answer_chars
from harness.requests import GenerateRequest, GenerateResponse
from harness.run.evaluate import evaluate
from harness.testing import ScriptedLM
from tests.fixtures import fault_server as toy
from tests.fixtures.fault_server import FaultServer
from tests.helpers import forget, run_harness

pytest.importorskip("httpx")


@pytest.fixture(scope="module")
def srv() -> Iterator[FaultServer]:
    with toy.fault_server() as server:
        yield server


def _eval(srv: FaultServer, out: Path, *extra: str):  # type: ignore[no-untyped-def]
    return run_harness("eval", "--model", "openai:toy", "--tasks", "lengthgen/copy",
                       "--limit-per-bucket", "1", "--output-dir", str(out), "--cache-dir",
                       str(out.parent / "cache"), "--model-args",
                       f"base_url={srv.base_url},backoff=0.01,max_retries=2,timeout=5", *extra)


def test_an_answer_far_past_max_tokens_is_refused_unread_in_one_line(srv: FaultServer,
                                                                      tmp_path: Path) -> None:
    from harness.models.openai.backend import OpenAIModel

    srv.reset()
    srv.always = "huge:3000000"  # 3 M characters for a request allowing 6 tokens
    lm = OpenAIModel("toy", {"base_url": srv.base_url, "backoff": "0.01", "max_retries": "3"})
    start = time.monotonic()
    with pytest.raises(HarnessError) as e:
        lm.generate([GenerateRequest("Say a:", 6, ("\n",))])
    msg = str(e.value)
    assert "\n" not in msg and "does not honour max_tokens" in msg, msg
    assert "refused unread" in msg and time.monotonic() - start < 10
    assert len(srv.completions()) == 1  # never retried: it would answer the same again
    run = _eval(srv, tmp_path / "run")
    assert run.returncode == 2, run.stderr
    errors = [ln for ln in run.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "does not honour max_tokens" in errors[0], run.stderr
    assert "Traceback" not in run.stderr
    samples = tmp_path / "run" / "samples" / "lengthgen" / "copy.jsonl"
    assert not samples.exists() or samples.stat().st_size == 0
    srv.reset()


def test_a_long_answer_is_cut_with_one_warning_before_samples_and_cache(
        srv: FaultServer, tmp_path: Path) -> None:
    srv.reset()
    srv.always = "huge:50000"  # within the byte bound, past the characters allowed
    run = _eval(srv, tmp_path / "run")
    assert run.returncode == 0, run.stderr
    warnings = [ln for ln in run.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1 and "does not honour max_tokens" in warnings[0], run.stderr
    lines = (tmp_path / "run" / "samples" / "lengthgen" / "copy.jsonl").read_text().splitlines()
    assert len(lines) > 1
    spec = json.loads((tmp_path / "run" / "results.json").read_text())["tasks"][0]["spec"]
    limit = answer_chars(spec["output"]["max_tokens"])
    assert all(len(json.loads(ln)["output"]) == limit for ln in lines)
    db = next((tmp_path / "cache").rglob("*.sqlite*"))
    with sqlite3.connect(db) as conn:
        stored = [json.loads(r)["text"] for (r,) in conn.execute("SELECT response FROM responses")]
    assert stored and all(len(t) == limit for t in stored)
    srv.reset()


def test_bounded_lm_cuts_reports_and_refuses_what_is_not_text() -> None:
    lm = BoundedLM(ScriptedLM("x" * 100_000))
    seen: list[tuple[int, int]] = []
    out = lm.generate([GenerateRequest("p", 4), GenerateRequest("q", 1000)],
                      lambda i, r: seen.append((i, len(r.text))))
    assert [len(r.text) for r in out] == [answer_chars(4), answer_chars(1000)]
    assert sorted(seen) == [(0, answer_chars(4)), (1, answer_chars(1000))] and lm.cut == 2
    assert [r.n_tokens for r in out] == [4, 1000]  # cut: on the budget, never "ended before"

    class Broken(ScriptedLM):
        def generate(self, requests, on_done=None):  # type: ignore[no-untyped-def]
            return [GenerateResponse(None, 1) for _ in requests]  # type: ignore[arg-type]

    with pytest.raises(HarnessError, match="answered a generation with NoneType"):
        BoundedLM(Broken()).generate([GenerateRequest("p", 4)])


def _says_yes(extracted: str, target: str) -> float:
    return "yes"  # type: ignore[return-value]


def _nan(extracted: str, target: str) -> float:
    return float("nan")


def _none(text: str, pattern: str | None) -> str:
    return None  # type: ignore[return-value]


@pytest.fixture
def _blocks() -> Iterator[None]:
    """Test metrics and an extractor, registered for one test only."""
    metric("t37_says_yes")(_says_yes)
    metric("t37_nan")(_nan)
    extractor("t37_none")(_none)
    yield
    forget(METRICS, "t37_says_yes", "t37_nan")
    forget(EXTRACTORS, "t37_none")


TASK = """\
name: t
description: A copy task scored by a test metric.
source: {type: generator, name: copy, per_bucket: 2}
buckets: {values: [2, 3]}
roles: {id_max: 2}
templates: [{id: a, prompt: "Copy {{ text }}:"}]
output: {type: generate, max_tokens: 8}
scoring: {metric: %s, extract: {kind: %s}}
"""


@pytest.mark.parametrize(("metric_name", "kind", "needle"), [
    ("t37_says_yes", "strip", "metric 't37_says_yes' (code:tests.unit.test_answer_bounds) "
                              "returned 'yes' (str), not a score"),
    ("t37_nan", "strip", "returned nan (float), not a score"),
    ("exact_match", "t37_none", "extractor 't37_none' (code:tests.unit.test_answer_bounds) "
                                "returned None (NoneType), not text"),
])
@pytest.mark.usefixtures("_blocks")
def test_a_metric_or_extractor_that_returns_no_score_is_one_line(
        tmp_path: Path, metric_name: str, kind: str, needle: str) -> None:
    folder = tmp_path / "tasks" / "mine"
    folder.mkdir(parents=True)
    (folder / "t.yaml").write_text(TASK % (metric_name, kind))
    cfg = RunConfig(model="scripted:x", tasks=["mine/t"], output_dir=tmp_path / "run",
                    include_paths=[tmp_path / "tasks"], use_cache=False)
    lines: list[str] = []
    res = evaluate(cfg, model=ScriptedLM("a b"), on_failure=lines.append)
    (line,) = lines
    assert needle in line and "\n" not in line, line
    assert "template a, bucket 2, item 0, seed 0" in line, line
    assert "harness tasks sample mine/t --bucket 2 --item 0 --seed 0 --template a" in line
    assert not res.tasks and res.failed[0].task == "mine/t"
