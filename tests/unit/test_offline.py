"""Fail fast when the Hugging Face hub cannot be used (issue 16): an unknown hub id fails in
seconds with one line and no retry noise; ``HF_HUB_OFFLINE`` is honoured without a probe; a
model in the Hugging Face cache, or in a local folder, still loads with the hub unreachable."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import hub_access
from harness.errors import ModelLoadError
from harness.models import hub
from harness.models.aliases import is_hub_id

ROOT = Path(__file__).resolve().parents[2]
HARNESS = Path(sys.executable).parent / "harness"


@pytest.fixture(autouse=True)
def _fresh_probe(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(hub_access, "_probed", {})
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT"):
        monkeypatch.delenv(var, raising=False)
    yield


def _refused_url() -> str:
    """An http address on this machine where nothing listens (connections are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def silent_url() -> Iterator[str]:
    """An http address that accepts connections and never answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        yield f"http://127.0.0.1:{s.getsockname()[1]}"


def _offline_env(tmp_path: Path, endpoint: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_CACHE")}
    env.update(HF_ENDPOINT=endpoint, HF_HOME=str(tmp_path / "hf_home"),
               GENHARNESS_RESPONSE_CACHE=str(tmp_path / "responses"))
    return env


@pytest.mark.parametrize("name", ["org/no-such-model", "no-such-model"])
def test_unknown_hub_model_fails_fast_with_one_line(tmp_path: Path, name: str) -> None:
    """Before the fix this printed retry lines for about a minute, twice, before its error."""
    env = _offline_env(tmp_path, _refused_url())
    t0 = time.perf_counter()
    proc = subprocess.run(
        [str(HARNESS), "eval", "--model", f"hf:{name}", "--tasks", "lengthgen/addition",
         "--limit-per-bucket", "1", "--output-dir", str(tmp_path / "out")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    elapsed = time.perf_counter() - t0
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: hf:{name}: ")
    assert "cannot be reached (Connection refused)" in lines[0]
    assert "Hugging Face cache" in lines[0]
    assert elapsed < 5, f"took {elapsed:.1f} s"


def test_offline_variable_is_honoured_without_a_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    def no_probe(url: str, timeout: float = 0) -> str | None:
        raise AssertionError("probed the hub although HF_HUB_OFFLINE is set")

    monkeypatch.setattr(hub_access, "probe", no_probe)
    with pytest.raises(ModelLoadError, match=r"hub cannot be used: HF_HUB_OFFLINE is set"):
        hub.check_hub_model("org/no-such-model")


def test_probe_gives_up_on_a_silent_host(silent_url: str) -> None:
    t0 = time.perf_counter()
    why = hub_access.probe(silent_url, timeout=0.5)
    assert why is not None and ("0.5 s" in why or "timed out" in why), why
    assert time.perf_counter() - t0 < 2


def test_probe_accepts_any_answer_below_500(tmp_path: Path) -> None:
    """A 404 from the hub still means the hub answers (the model may be private or gated)."""
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        code = 404

        def do_HEAD(self) -> None:
            self.send_response(self.code)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        assert hub_access.probe(url) is None
        Handler.code = 503
        assert hub_access.probe(url) == "HTTP 503"
    finally:
        server.shutdown()
        server.server_close()


def test_unreachable_hub_is_reported_and_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    url = _refused_url()
    monkeypatch.setenv("HF_ENDPOINT", url)
    calls: list[str] = []
    real = hub_access.probe

    def counting(u: str, timeout: float = hub_access.PROBE_SECONDS) -> str | None:
        calls.append(u)
        return real(u, timeout)

    monkeypatch.setattr(hub_access, "probe", counting)
    for _ in range(2):
        assert hub.hub_unusable() == f"{url} cannot be reached (Connection refused)"
    assert calls == [url]


def test_only_hub_ids_are_checked(tmp_path: Path) -> None:
    assert is_hub_id("org/name") and is_hub_id("gpt2")
    assert not is_hub_id("smollm2-135m")  # an alias
    assert not is_hub_id("smollm2-135")  # an alias typo: reported as such, not as a hub id
    assert not is_hub_id(str(tmp_path))  # an existing folder
    assert not is_hub_id("./no/such/dir/")  # a path


def _into_hf_cache(model_dir: Path, hf_home: Path, repo: str) -> None:
    """Lay out ``model_dir`` as the Hugging Face cache holds a downloaded ``repo``."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    base = hf_home / "hub" / f"models--{repo.replace('/', '--')}"
    shutil.copytree(model_dir, base / "snapshots" / commit)
    (base / "refs").mkdir(parents=True)
    (base / "refs" / "main").write_text(commit)


def test_cached_and_local_models_load_with_the_hub_unreachable(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    _into_hf_cache(tiny_model_dir, tmp_path / "hf_home", "org/tiny")
    code = textwrap.dedent(f"""
        import time
        from harness.models.backends import load_model
        from harness.requests import GenerateRequest
        for name in ("hf:org/tiny", "hf:{tiny_model_dir}"):
            t0 = time.perf_counter()
            lm = load_model(name, {{}}, 1)
            out = lm.generate([GenerateRequest("hello", 3, ())])
            print(name, lm.identity.path, len(out), round(time.perf_counter() - t0, 1))
    """)
    env = _offline_env(tmp_path, _refused_url())
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.strip().splitlines()
    assert first.split()[:3] == ["hf:org/tiny", "org/tiny", "1"]
    assert second.split()[2] == "1"
    assert "Retrying" not in proc.stderr and "thrown while requesting" not in proc.stderr
    assert float(first.split()[3]) < 20, first  # no retry back-off before the cached copy
