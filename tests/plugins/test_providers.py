"""Task providers in process: packages, folders and callables; laziness, namespacing, suites."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from harness.config import RunConfig
from harness.errors import HarnessError, TaskSpecError, UnknownNameError
from harness.run.evaluate import evaluate
from harness.tasks.index import TaskIndex
from harness.tasks.loader import load_spec
from harness.tasks.providers import TaskProvider
from harness.testing import ScriptedLM
from tests.plugins.fakedist import task_yaml


def provider(name: str, obj: Callable[[], object], calls: list[str] | None = None,
             dist: str = "pkg") -> TaskProvider:
    def get() -> object:
        if calls is not None:
            calls.append(name)
        return obj()

    return TaskProvider(name, f"plugin:{dist}==1.0", f"{dist} (harness.tasks:{name})", get)


def folder(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_addresses_load_only_their_namespace(tmp_path: Path) -> None:
    calls: list[str] = []
    a = folder(tmp_path / "a", {"x.yaml": task_yaml("x"), "sub/y.yaml": task_yaml("y"),
                                "_base.yaml": "name: not a task\n"})
    index = TaskIndex.build(providers=[provider("alpha", lambda: a, calls),
                                       provider("beta", lambda: 1 / 0, calls)])
    assert [r.address for r in index.resolve(["lengthgen/copy"])] == ["lengthgen/copy"]
    assert calls == []  # a built-in address imports no plugin
    refs = index.resolve(["alpha/x", "alpha/sub/y"])
    assert [(r.address, r.origin) for r in refs] == [("alpha/x", "plugin:pkg==1.0"),
                                                      ("alpha/sub/y", "plugin:pkg==1.0")]
    assert calls == ["alpha"]
    assert "alpha/_base" not in index.refs
    assert [r.address for r in index.resolve(["alpha"])] == ["alpha/sub/y", "alpha/x"]  # suite
    assert calls == ["alpha", "beta"]  # a bare name or suite may come from any plugin


def test_broken_provider_is_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = TaskIndex.build(providers=[provider("beta", lambda: 1 / 0)])
    assert [r.address for r in index.resolve(["copy"])] == ["lengthgen/copy"]
    assert capsys.readouterr().err.splitlines() == [
        "warning: plugin pkg (harness.tasks:beta): ZeroDivisionError: division by zero"]
    with pytest.raises(HarnessError, match=r"^plugin pkg \(harness.tasks:beta\): ZeroDivision"):
        index.resolve(["beta/anything"])


def test_callable_returning_specs_dicts_and_files(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    spec = load_spec(folder(tmp_path, {"z.yaml": task_yaml("z")}) / "z.yaml")
    raw = spec.model_dump(mode="json") | {"name": "raw"}
    index = TaskIndex.build(providers=[provider("gamma", lambda: lambda: {
        "obj": spec, "raw": raw, "file": tmp_path / "z.yaml"})])
    refs = {r.name: r for r in index.resolve(["gamma"])}
    assert set(refs) == {"obj", "raw", "file"}
    assert refs["file"].spec is None and refs["file"].path == tmp_path / "z.yaml"
    assert index.spec(refs["raw"]).name == "raw" and "given in code" in refs["raw"].where
    assert index.spec(refs["obj"]) is spec

    # a callable in a module of its own: relative paths start from the module's folder
    lines = "".join(f'{{"text": "{"ab" * n}", "length": {n}, "target": "{"ab" * n}"}}\n'
                    for n in (2, 3, 4))
    fromfiles = raw | {"source": {"type": "files", "path": "data/items.jsonl"},  # meant: one
                       "buckets": raw["buckets"] | {"allow_outside": True,  # record outside,
                                                    "allow_empty": True}}  # bucket 6 empty
    folder(tmp_path / "mods", {"provmod/data/items.jsonl": lines, "provmod/__init__.py": (
        f"def tasks():\n    return {{'fromfiles': {fromfiles!r}, 'yaml': 'extra/t.yaml'}}\n"),
        "provmod/extra/t.yaml": task_yaml("t")})
    monkeypatch.syspath_prepend(str(tmp_path / "mods"))
    import provmod  # type: ignore[import-not-found]

    index = TaskIndex.build(providers=[provider("gamma", lambda: provmod.tasks)])
    (ref,) = index.resolve(["gamma/fromfiles"])
    assert ref.base_dir == tmp_path / "mods" / "provmod"
    assert index.resolve(["gamma/yaml"])[0].path == ref.base_dir / "extra" / "t.yaml"
    res = evaluate(RunConfig(model="x:y", tasks=["gamma/fromfiles"], output_dir=tmp_path / "o"),
                   model=ScriptedLM(lambda p: p.split("Copy: ")[-1].split("\n")[0]), index=index)
    (task,) = res.tasks
    assert (task.origin, task.n_items, task.dropped_records) == ("plugin:pkg==1.0", 2, 1)
    assert [b.accuracy for b in task.templates[0].buckets] == [1.0, 1.0, None]  # none of 6


@pytest.mark.parametrize("bad,needle", [
    (lambda: 42, "entry point is a int; expected a package"),
    (lambda: lambda: [1], "the callable returned list"),
    (lambda: lambda: {"t": 3}, "task 't' is a int"),
    (lambda: lambda: {"_t": {}}, "bad task name '_t'"),
    (lambda: "/no/such/folder", "task folder not found: /no/such/folder"),
    (lambda: lambda: {"t": {"name": "t", "descripton": "x"}}, "gamma/t: descripton: unknown key"),
])
def test_bad_provider_objects(bad: Callable[[], object], needle: str) -> None:
    index = TaskIndex.build(providers=[provider("gamma", bad)])
    with pytest.raises(HarnessError) as e:
        index.load_providers(strict=True)
    assert "plugin pkg (harness.tasks:gamma): " in str(e.value) and needle in str(e.value)


def test_bare_names_across_sources_and_suites(tmp_path: Path) -> None:
    a = folder(tmp_path / "a", {"copy.yaml": task_yaml("copy"),
                                "joins.yaml": task_yaml("joins", suites="[lengthgen, extra]")})
    index = TaskIndex.build(providers=[provider("delta", lambda: a)])
    with pytest.raises(HarnessError, match="ambiguous: delta/copy, lengthgen/copy"):
        index.resolve(["copy"])
    suite = [r.address for r in index.resolve(["lengthgen"])]  # plugin tasks can join suites
    assert suite[0] == "delta/joins" and "lengthgen/copy" in suite and "delta/copy" not in suite
    assert [r.address for r in index.resolve(["extra"])] == ["delta/joins"]
    with pytest.raises(UnknownNameError, match="did you mean: delta/joins"):
        index.resolve(["delta/jions"])


def test_invalid_plugin_task_is_skipped_in_listings(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    a = folder(tmp_path / "a", {"good.yaml": task_yaml("good"),
                                "bad.yaml": task_yaml("bad", metric="no_such_metric")})
    index = TaskIndex.build(providers=[provider("eps", lambda: a)])
    assert "eps/bad" in index.all_refs()
    assert index.usable_spec(index.refs["eps/bad"]) is None
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("warning: plugin task eps/bad (plugin:pkg==1.0): ")
    assert "scoring.metric" in line and line.endswith("(skipped)")
    with pytest.raises(TaskSpecError, match="no_such_metric"):
        index.spec(index.resolve(["eps/bad"])[0])  # asked for by address: an error
    with pytest.raises(HarnessError, match="eps/bad"):
        index.resolve(["eps"])  # its own namespace as a suite: an error too
