"""Model backends on the one Registry: built-in backends imported one by one (by prefix), and the
``--model`` wording of every lookup error (unknown prefix, missing extra, broken plugin)."""

from __future__ import annotations

import copy
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness import plugins
from harness.errors import HarnessError, ModelLoadError, UnknownNameError
from harness.models import backends
from harness.models.backends import BACKENDS, load_model
from harness.registry import Registry


class FakeEntryPoint:
    """An installed ``harness.models`` entry point whose ``load`` gives *obj* (or raises it)."""

    group = plugins.MODELS

    def __init__(self, name: str, obj: object) -> None:
        self.name, self.value, self.obj = name, f"fake_{name}:factory", obj

    def load(self) -> object:
        if isinstance(self.obj, BaseException):
            raise self.obj
        return self.obj


@pytest.fixture
def fake_plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[FakeEntryPoint]]:
    """The installed model backend plugins are the list this yields; the registry is restored."""
    eps: list[FakeEntryPoint] = []
    monkeypatch.setattr(plugins, "entry_points",
                        lambda group: list(eps) if group == plugins.MODELS else [])
    for attr in ("items", "origins", "_checked"):
        monkeypatch.setattr(BACKENDS, attr, copy.copy(getattr(BACKENDS, attr)))
    plugins.refresh()
    yield eps
    monkeypatch.undo()
    plugins.refresh()


def test_unknown_backend_names_the_known_ones() -> None:
    with pytest.raises(UnknownNameError) as e:
        load_model("vlm:x", {}, 1)
    msg = str(e.value)
    assert msg.startswith("--model: unknown backend 'vlm' (did you mean: vllm?); known backends: ")
    assert {"hf", "openai", "vllm"} <= set(msg.partition("known backends: ")[2].split(", "))


def test_missing_extra_is_one_line_with_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(BACKENDS.builtin_names, "fancy", "harness_no_such_backend_module")
    assert "fancy" in backends.available_backends()
    with pytest.raises(ModelLoadError) as e:
        load_model("fancy:x", {}, 1)
    assert str(e.value).startswith("--model fancy:...: backend needs a package that is not "
                                   "installed (No module named 'harness_no_such_backend_module')")
    assert str(e.value).endswith("install it with: pip install 'genharness[fancy]'")


def test_plugin_backends_failing_to_load(fake_plugins: list[FakeEntryPoint]) -> None:
    fake_plugins += [FakeEntryPoint("boom", RuntimeError("no GPU\nat all")),
                     FakeEntryPoint("flat", 42)]
    assert {"boom", "flat"} <= set(backends.available_backends())
    with pytest.raises(ModelLoadError, match=r"^--model boom:\.\.\.: plugin unknown "
                       r"\(harness.models:boom\) failed to load: RuntimeError: no GPU at all$"):
        load_model("boom:x", {}, 1)
    with pytest.raises(ModelLoadError, match=r"^--model flat:\.\.\.: plugin entry point "
                       r"'fake_flat:factory' is not callable$"):
        load_model("flat:x", {}, 1)


def test_plugin_backend_named_like_a_builtin_is_ignored_with_a_warning(
        fake_plugins: list[FakeEntryPoint], capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("transformers")

    def factory(*args: Any) -> None:
        raise AssertionError("the plugin must not be used")

    fake_plugins.append(FakeEntryPoint("hf", factory))
    assert BACKENDS.get("hf") is not factory
    assert "model backend 'hf' of plugin unknown==unknown (fake_hf:factory) is ignored" \
        in capsys.readouterr().err


def test_lookups_import_only_the_backend_asked_for() -> None:
    code = (
        "import sys\n"
        "from harness.models.backends import BACKENDS, available_backends\n"
        "assert {'hf', 'vllm', 'openai'} <= set(available_backends())\n"
        "try:\n    BACKENDS.get('nosuch')\nexcept Exception:\n    pass\n"
        "print(sorted(m for m in ('torch', 'transformers', 'vllm', 'httpx',\n"
        "    'harness.models.hf.backend', 'harness.models.vllm.backend',\n"
        "    'harness.models.openai.backend') if m in sys.modules))\n"
        "BACKENDS.get('openai')\n"
        "print(sorted(m for m in ('torch', 'vllm', 'harness.models.hf.backend',\n"
        "    'harness.models.openai.backend') if m in sys.modules))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["[]", "['harness.models.openai.backend']"]


# -- Registry with built-ins given by name ---------------------------------------------------


@pytest.fixture
def lazy_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Registry[str]]:
    """A registry whose built-ins are lazy entries: "a" a ``module:object`` (the object is the
    item), "b" a module registering it with the registry's decorator, and "broken" in one that
    imports a package that is not installed."""
    (tmp_path / "lazyreg_home.py").write_text(
        "from harness.registry import Registry\n"
        "REG = Registry('thing', 'harness.no-such-group', entries={'a': 'lazyreg_a:A',"
        " 'b': 'lazyreg_b', 'broken': 'lazyreg_broken:X'}, list_known=True,"
        " from_object=lambda name, obj: obj)\n"
        "thing = REG.decorator(lambda name, fn: fn())\n")
    (tmp_path / "lazyreg_a.py").write_text("A = 'A'\n")
    (tmp_path / "lazyreg_b.py").write_text(
        "from lazyreg_home import thing\n\n@thing('b')\ndef b():\n    return 'B'\n")
    (tmp_path / "lazyreg_broken.py").write_text("import no_such_package_for_lazyreg\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import lazyreg_home

    yield lazyreg_home.REG
    for mod in ("lazyreg_home", "lazyreg_a", "lazyreg_b", "lazyreg_broken"):
        sys.modules.pop(mod, None)


def test_a_package_registry_imports_every_module_of_its_package(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One file plus its decorator is a new built-in: no list names the module."""
    pkg = tmp_path / "lazypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from harness.registry import Registry\n"
        "REG = Registry('widget', None, package='lazypkg')\n"
        "widget = REG.decorator(lambda name, fn, size: (fn(), size))\n")
    for name in ("one", "two"):
        (pkg / f"{name}.py").write_text(
            f"from lazypkg import widget\n\n@widget({name!r}, size=len({name!r}))\n"
            f"def {name}():\n    return {name.upper()!r}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import lazypkg

    try:
        assert lazypkg.REG.names() == ["one", "two"]
        assert lazypkg.REG.get("two") == ("TWO", 3)
        with pytest.raises(UnknownNameError, match="unknown widget 'three'"):
            lazypkg.REG.get("three")
    finally:
        for mod in ("lazypkg", "lazypkg.one", "lazypkg.two"):
            sys.modules.pop(mod, None)


def test_builtins_by_name_are_imported_one_by_one(lazy_registry: Registry[str]) -> None:
    reg = lazy_registry
    assert reg.names() == ["a", "b", "broken"]
    assert reg.is_builtin("b") and not reg.is_builtin("c")
    assert "lazyreg_a" not in sys.modules and "lazyreg_b" not in sys.modules
    assert reg.get("a") == "A"
    assert "lazyreg_a" in sys.modules and "lazyreg_b" not in sys.modules
    with pytest.raises(HarnessError, match=r"^thing 'broken' needs a package that is not "
                       r"installed \(No module named 'no_such_package_for_lazyreg'\)$"):
        reg.get("broken")
    with pytest.raises(UnknownNameError, match=r"unknown thing 'c'; known things: a, b, broken"):
        reg.get("c")
    assert "lazyreg_b" not in sys.modules
    assert reg.get("b") == "B" and reg.get("a") == "A"
