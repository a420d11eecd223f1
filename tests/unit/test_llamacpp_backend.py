"""The llamacpp backend on a tiny random Llama written as a GGUF file (F32): the same answers as
``hf:`` on that file, batching that does not change them, stops, callbacks, the F16
conversion, the identity the response cache keys on, and every bad-input path.

Needs llama-cpp-python (``scripts/setup.sh --tests`` installs it); the real SmolLM2 runs in
tests/real/test_llamacpp.py.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness import files
from harness.errors import HarnessError, ModelLoadError
from harness.models import aliases
from harness.models.cache import model_key
from harness.requests import GenerateRequest, LoglikelihoodRequest, RollingRequest

pytest.importorskip("torch")
pytest.importorskip("transformers")
if importlib.util.find_spec("llama_cpp") is None:  # CI installs it: a miss there is a failure
    _why = "needs llama-cpp-python (bash scripts/setup.sh --llamacpp or --tests)"
    if os.environ.get("CI"):
        pytest.fail(_why, pytrace=False)
    pytest.skip(_why, allow_module_level=True)

from harness.models.hf.backend import HFModel  # noqa: E402
from harness.models.llamacpp import weights  # noqa: E402
from harness.models.llamacpp.backend import LlamaCppModel  # noqa: E402

PROMPTS = ["The capital of France is", "hello", "0 1 2 3 4 5", "Once upon a time there was",
           "Question: What is 2+3? Answer:", "a b c d e f g h i j k l m n o p"]
LL = [("The capital of France is", " Paris"), ("The capital of France is", " Rome"),
      ("", "hello world"), ("0 1 2", " 3 4 5"), ("hel", "lo"), ("a b", "")]


@pytest.fixture(scope="module", autouse=True)
def _cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(aliases.CACHE_ENV, str(tmp_path_factory.mktemp("genharness_cache")))
        yield


@pytest.fixture(scope="module")
def tiny_gguf(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.fixtures.tiny_gguf import build_tiny_gguf

    return build_tiny_gguf(tiny_model_dir, tmp_path_factory.mktemp("gguf") / "tiny.gguf")


@pytest.fixture(scope="module")
def lm(tiny_gguf: Path) -> Iterator[LlamaCppModel]:
    model = LlamaCppModel(str(tiny_gguf), {"threads": "1"}, 3)
    yield model
    model.close()


@pytest.fixture(scope="module")
def hf(tiny_gguf: Path) -> HFModel:
    return HFModel(str(tiny_gguf), {}, 4)


def test_same_answers_as_hf_on_the_same_file(lm: LlamaCppModel, hf: HFModel) -> None:
    reqs = [GenerateRequest(p, 10) for p in PROMPTS]
    assert lm.generate(reqs) == hf.generate(reqs)
    lls = [LoglikelihoodRequest(c, x) for c, x in LL]
    got, want = lm.loglikelihood(lls), hf.loglikelihood(lls)
    assert [g.n_tokens for g in got] == [w.n_tokens for w in want]
    assert [g.is_greedy for g in got] == [w.is_greedy for w in want]
    assert [g.logprob for g in got] == pytest.approx([w.logprob for w in want], abs=2e-2)
    assert got[-1].logprob == 0.0 and got[-1].n_tokens == 0  # empty continuation
    rolling = [RollingRequest(p) for p in PROMPTS]
    assert lm.loglikelihood_rolling(rolling) == pytest.approx(
        hf.loglikelihood_rolling(rolling), abs=2e-2)


def test_rolling_windows_match_hf(tiny_gguf: Path) -> None:
    text = " ".join(PROMPTS)
    small = LlamaCppModel(str(tiny_gguf), {"threads": "1", "max_length": "8"}, 2)
    try:
        got = small.loglikelihood_rolling([RollingRequest(text), RollingRequest("hi")])
    finally:
        small.close()
    want = HFModel(str(tiny_gguf), {"max_length": "8"}, 2).loglikelihood_rolling(
        [RollingRequest(text), RollingRequest("hi")])
    assert got == pytest.approx(want, rel=2e-4)


@pytest.mark.parametrize("rows", [1, 2, "auto"])
def test_batching_does_not_change_answers(tiny_gguf: Path, lm: LlamaCppModel,
                                          rows: int | str) -> None:
    reqs = [GenerateRequest(p, 4 + 3 * (i % 3)) for i, p in enumerate(PROMPTS * 2)]
    other = LlamaCppModel(str(tiny_gguf), {"threads": "1"}, rows)  # type: ignore[arg-type]
    try:
        assert other.generate(reqs) == lm.generate(reqs)
        lls = [LoglikelihoodRequest(c, x) for c, x in LL]
        assert [r.logprob for r in other.loglikelihood(lls)] == pytest.approx(
            [r.logprob for r in lm.loglikelihood(lls)], abs=1e-4)
    finally:
        other.close()


def test_stops_limits_and_callbacks(lm: LlamaCppModel) -> None:
    free = lm.generate([GenerateRequest(p, 12) for p in PROMPTS])
    # stop at a piece of what each row generated freely: the text is cut before it
    reqs = []
    for p, r in zip(PROMPTS, free, strict=True):
        stop = r.text[3:5] if len(r.text) >= 5 and r.text[3:5].strip() else "\x00"
        reqs.append(GenerateRequest(p, 12, (stop,)))
    seen: dict[int, Any] = {}

    def on_done(i: int, resp: Any) -> None:
        assert i not in seen
        seen[i] = resp

    got = lm.generate(reqs, on_done=on_done)
    assert [seen[i] for i in range(len(reqs))] == got
    for req, full, cut in zip(reqs, free, got, strict=True):
        assert cut.n_tokens <= 12 and full.n_tokens <= 12
        if req.stop[0] != "\x00":
            assert req.stop[0] not in cut.text and full.text.startswith(cut.text)
            assert cut.n_tokens < full.n_tokens or full.n_tokens < 12
    ll_seen: list[int] = []
    lm.loglikelihood([LoglikelihoodRequest(c, x) for c, x in LL * 2],
                     on_done=lambda i, _: ll_seen.append(i))
    assert sorted(ll_seen) == list(range(2 * len(LL)))


def test_sampling_is_seeded(lm: LlamaCppModel) -> None:
    reqs = [GenerateRequest("hello", 8, temperature=1.0)] * 2
    first, again = lm.generate(reqs), lm.generate(reqs)
    assert first == again  # the same call twice: the same samples
    assert first[0] != first[1]  # two draws of one prompt differ (random weights: near uniform)


def test_identity_and_cache_key(lm: LlamaCppModel, hf: HFModel, tiny_gguf: Path) -> None:
    ident = lm.identity
    assert ident.backend == "llamacpp" and ident.dtype == "F32" and ident.device == "cpu"
    assert ident.weights_sha256 == files.cached_sha256_file(tiny_gguf)
    assert ident.path == str(tiny_gguf.resolve())
    assert ident.revision is None  # a local GGUF has no model revision (the engine's version:
    # results.json environment.libraries["llama-cpp-python"])
    assert model_key(ident) != model_key(hf.identity)
    assert not lm.changes_answers


def test_f16_conversion(tiny_gguf: Path, lm: LlamaCppModel, tmp_path: Path) -> None:
    f16 = tmp_path / "tiny-f16.gguf"
    weights.quantize(tiny_gguf, f16, "f16")
    half = LlamaCppModel(str(f16), {"threads": "1"}, 3)
    try:
        assert half.identity.dtype == "F16"
        assert half.identity.weights_sha256 != lm.identity.weights_sha256
        assert f16.stat().st_size < 0.6 * tiny_gguf.stat().st_size
        lls = [LoglikelihoodRequest(c, x) for c, x in LL]
        assert [r.logprob for r in half.loglikelihood(lls)] == pytest.approx(
            [r.logprob for r in lm.loglikelihood(lls)], abs=0.2)
    finally:
        half.close()


@pytest.mark.parametrize("dtype", ["bf16", "q8_0"])
def test_other_conversions_run(tiny_gguf: Path, lm: LlamaCppModel, tmp_path: Path,
                               dtype: str) -> None:
    # on a CPU that lists AMX, llama.cpp's AMX kernels for Q8_0 died with an illegal
    # instruction until the engine stopped loading weights into its extra buffer types
    out = tmp_path / f"tiny-{dtype}.gguf"
    weights.quantize(tiny_gguf, out, dtype)
    other = LlamaCppModel(str(out), {"threads": "1"}, 2)
    try:
        assert other.identity.dtype == dtype.upper()
        lls = [LoglikelihoodRequest(c, x) for c, x in LL]
        assert [r.logprob for r in other.loglikelihood(lls)] == pytest.approx(
            [r.logprob for r in lm.loglikelihood(lls)], abs=0.5)
        assert other.generate([GenerateRequest(PROMPTS[0], 4)])[0].n_tokens > 0
    finally:
        other.close()


def test_choices_share_their_context(lm: LlamaCppModel) -> None:
    context = "Question: " + " ".join(PROMPTS) + "\nAnswer:"
    choices = [" Paris", " Rome", " 12", " 125", " a b c"]
    reqs = [LoglikelihoodRequest(context, c) for c in choices]
    alone = [lm.loglikelihood([r])[0] for r in reqs]
    fed = lm._engine.fed
    together = lm.loglikelihood(reqs)
    fed_together = lm._engine.fed - fed
    context_tokens = len(lm._encode(context)[0])
    # the context once, then each choice from where it parts from the one before
    assert context_tokens < fed_together < context_tokens + 3 * len(choices)
    # (a choice fed on its own rounds differently from one fed with its context: 1e-4 relative)
    assert [r.logprob for r in together] == pytest.approx([r.logprob for r in alone], rel=3e-4)
    assert [r.is_greedy for r in together] == [r.is_greedy for r in alone]
    assert [r.n_tokens for r in together] == [r.n_tokens for r in alone]


def test_prompts_reuse_a_shared_opening(tiny_gguf: Path) -> None:
    shared = "Instructions: " + " ".join(PROMPTS) + "\n"
    reqs = [GenerateRequest(shared + p, 3) for p in PROMPTS]
    one = LlamaCppModel(str(tiny_gguf), {"threads": "1"}, 1)
    try:
        want = [one.generate([r])[0] for r in reqs]  # each alone: nothing to reuse
        fed = one._engine.fed
        got = one.generate(reqs)
        fed_together = one._engine.fed - fed
    finally:
        one.close()
    assert got == want
    opening = len(one._encode(shared)[0])
    assert fed_together < fed - (len(reqs) - 1) * (opening - 2)


def test_alias_conversion_is_cached(tiny_gguf: Path) -> None:
    first = weights.converted(tiny_gguf, "tiny", "f16", None)
    mtime = first.stat().st_mtime_ns
    again = weights.converted(tiny_gguf, "tiny", "f16", None)
    assert again == first and again.stat().st_mtime_ns == mtime
    assert first.parent == aliases.cache_root() / "gguf" / "tiny"
    assert not list(first.parent.glob(".*.tmp"))


@pytest.mark.parametrize(
    ("name", "args", "needle"),
    [
        ("GGUF", {"thread": "2"}, "unknown key 'thread'"),
        ("GGUF", {"threads": "0"}, "threads must be an integer >= 1"),
        ("GGUF", {"max_length": "x"}, "max_length must be an integer >= 2"),
        ("GGUF", {"dtype": "f16"}, "dtype applies to the built-in aliases only"),
        ("smollm2-135m", {"dtype": "q8"}, "dtype must be one of f16, f32"),
        ("smollm2-135m-q4_1", {"dtype": "f16"}, "runs the shipped file as it is"),
        ("smolm2-135m", {}, "no such alias or .gguf file"),
        ("DIR", {}, "is a folder; give the .gguf file"),
        ("TXT", {}, "is a file but not .gguf"),
    ],
)
def test_bad_input_is_one_line(tiny_gguf: Path, tmp_path: Path, name: str,
                               args: dict[str, str], needle: str) -> None:
    (tmp_path / "notes.txt").write_text("x")
    name = {"GGUF": str(tiny_gguf), "DIR": str(tmp_path),
            "TXT": str(tmp_path / "notes.txt")}.get(name, name)
    with pytest.raises(HarnessError) as e:
        LlamaCppModel(name, args, 1)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_missing_llama_cpp_names_the_extra(tiny_gguf: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(ModelLoadError, match=r"pip install 'genharness\[llamacpp\]'"):
        LlamaCppModel(str(tiny_gguf), {}, 1)


def test_eval_command(tiny_gguf: Path, tmp_path: Path, shared_data: Path) -> None:
    out = tmp_path / "run"
    env = {**os.environ, "COLUMNS": "120"}
    r = subprocess.run(
        [sys.executable, "-m", "harness", "eval", "--model", f"llamacpp:{tiny_gguf}",
         "--model-args", "threads=1", "--tasks", "lengthgen/addition,instructdiv/more_letters",
         "--limit-per-bucket", "1", "--seed", "0", "--output-dir", str(out)],
        capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    res = json.loads((out / "results.json").read_text())
    assert res["model"]["backend"] == "llamacpp" and res["model"]["dtype"] == "F32"
    assert [t["task"] for t in res["tasks"]] == ["lengthgen/addition", "instructdiv/more_letters"]
    assert all(t["n_items"] > 0 for t in res["tasks"])
