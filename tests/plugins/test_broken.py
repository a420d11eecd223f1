"""A broken plugin is one warning line naming it, never a failure of runs that don't use it;
and a plugin is imported only when one of its names is used or listed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.plugins.fakedist import (
    BROKEN_MODULE,
    SCRIPTED,
    harness,
    make_dist,
    task_yaml,
    warnings_in,
)


@pytest.fixture()
def site(tmp_path: Path) -> Path:
    """Two installed distributions: a broken one in every group, and a scripted model backend."""
    site = tmp_path / "site"
    make_dist(site, "broken-plugin", "1.2.3", {
        "harness.tasks": {"brokenbench": "brokenplug_tasks"},
        "harness.generators": {"brokengen": "brokenplug_gen:gen"},
        "harness.metrics": {"brokenmetric": "brokenplug_metric:metric"},
        "harness.models": {"brokenmodel": "brokenplug_model:factory"},
    }, {f"brokenplug_{m}.py": BROKEN_MODULE for m in ("tasks", "gen", "metric", "model")})
    make_dist(site, "scripted-model", "0.0.1", SCRIPTED)
    return site


def _imported(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir())


def test_tasks_list_survives_a_broken_plugin(site: Path, tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    r = harness(site, "tasks", "list", markers=markers)
    assert r.returncode == 0, r.stderr
    assert "lengthgen/addition" in r.stdout and "lengthgen/copy" in r.stdout
    assert warnings_in(r.stderr) == [
        "warning: plugin broken-plugin (harness.tasks:brokenbench) failed to load: "
        "RuntimeError: boom: this plugin is broken on purpose"
    ]
    assert "Traceback" not in r.stderr
    assert _imported(markers) == ["brokenplug_tasks"]  # the other groups were not needed


def test_eval_of_builtin_task_never_imports_plugins(site: Path, tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    out = tmp_path / "run"
    r = harness(site, "eval", "--model", "scripted:empty", "--tasks", "lengthgen/copy",
                "--limit-per-bucket", "2", "--output-dir", str(out), markers=markers)
    assert r.returncode == 0, r.stderr
    assert warnings_in(r.stderr) == [] and "broken" not in r.stderr
    assert _imported(markers) == []
    res = json.loads((out / "results.json").read_text())
    assert [(t["task"], t["origin"]) for t in res["tasks"]] == [("lengthgen/copy", "builtin")]
    assert res["model"]["backend"] == "scripted"
    assert res["environment"]["plugins"] == {"scripted-model": "0.0.1"}
    assert all(b["accuracy"] == 0.0 for b in res["tasks"][0]["templates"][0]["buckets"])


def test_suite_run_warns_once_and_completes(site: Path, tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    (tmp_path / "inc" / "mine").mkdir(parents=True)
    for name in ("one", "two"):
        (tmp_path / "inc" / "mine" / f"{name}.yaml").write_text(task_yaml(name))
    r = harness(site, "eval", "--model", "scripted:empty", "--tasks", "mine",
                "--include-path", str(tmp_path / "inc"), "--limit-per-bucket", "1",
                "--output-dir", str(tmp_path / "run"), markers=markers)
    assert r.returncode == 0, r.stderr
    (line,) = warnings_in(r.stderr)  # a suite could have plugin members: plugins are loaded
    assert line.startswith("warning: plugin broken-plugin (harness.tasks:brokenbench)")
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert [t["task"] for t in res["tasks"]] == ["mine/one", "mine/two"]


@pytest.mark.parametrize("args,needle", [
    (["eval", "--model", "brokenmodel:x", "--tasks", "lengthgen/copy"],
     "plugin broken-plugin (harness.models:brokenmodel) failed to load: RuntimeError: boom"),
    (["eval", "--model", "scripted:empty", "--tasks", "brokenbench/x"],
     "plugin broken-plugin (harness.tasks:brokenbench) failed to load: RuntimeError: boom"),
    (["eval", "--model", "scripted:empty", "--tasks", "brokenbench"],
     "plugin broken-plugin (harness.tasks:brokenbench) failed to load: RuntimeError: boom"),
    (["tasks", "sample", "brokenbench/x"],
     "plugin broken-plugin (harness.tasks:brokenbench) failed to load: RuntimeError: boom"),
])
def test_using_a_broken_plugin_is_a_one_line_error(site: Path, tmp_path: Path, args: list[str],
                                                   needle: str) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    if args[0] == "eval":
        args = [*args, "--output-dir", str(tmp_path / "o")]
    r = harness(site, *args, markers=markers)
    assert r.returncode == 2, (r.stdout, r.stderr)
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and needle in errors[0] and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.count("failed to load") == 1, r.stderr  # the error only, not a warning too


def test_task_using_broken_generator_or_metric(site: Path, tmp_path: Path) -> None:
    for key, value in (("generator", "brokengen"), ("metric", "brokenmetric")):
        d = tmp_path / key
        d.mkdir()
        kwargs = {key: value}
        (d / "t.yaml").write_text(task_yaml("t", **kwargs))
        r = harness(site, "tasks", "validate", str(d / "t.yaml"), markers=tmp_path)
        assert r.returncode == 2
        assert f"plugin broken-plugin (harness.{key}s:{value}) failed to load: RuntimeError" \
            in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_plugins_list_imports_nothing_unless_checked(site: Path, tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    r = harness(site, "plugins", "list", markers=markers)
    assert r.returncode == 0, r.stderr
    assert _imported(markers) == []
    rows = [ln for ln in r.stdout.splitlines() if "broken-plugin" in ln]
    assert len(rows) == 4 and all("1.2.3" in ln and "not loaded" in ln for ln in rows)
    assert any("brokenmodel:" in ln for ln in rows)
    r = harness(site, "plugins", "list", "--check", markers=markers)
    assert r.returncode == 1
    assert len(_imported(markers)) == 4
    rows = [ln for ln in r.stdout.splitlines() if "broken-plugin" in ln]
    assert len(rows) == 4 and all("RuntimeError: boom" in ln for ln in rows), r.stdout
    assert any("scripted-model" in ln and ln.endswith("  ok") for ln in r.stdout.splitlines())


def test_every_listing_reports_a_broken_plugin_the_same_way_once(site: Path,
                                                                  tmp_path: Path) -> None:
    """The warning line carries the message (the same words as every other command); the row
    of each listing points at it from the same place, its last column."""
    for group, name, kind in (("generators", "brokengen", "generators"),
                              ("metrics", "brokenmetric", "metrics")):
        r = harness(site, kind, "list", markers=tmp_path)
        assert r.returncode == 0, r.stderr
        assert warnings_in(r.stderr) == [
            f"warning: plugin broken-plugin (harness.{group}:{name}) failed to load: "
            "RuntimeError: boom: this plugin is broken on purpose"]
        (row,) = [ln for ln in r.stdout.splitlines() if ln.startswith(name)]
        assert row.endswith("  error: failed to load (see the warning above)"), row
        assert "boom" not in r.stdout
        r = harness(site, kind, "list", "--json", markers=tmp_path)
        (entry,) = [b for b in json.loads(r.stdout) if b["name"] == name]
        assert entry["status"] == ("error: plugin broken-plugin (harness." + group + ":" + name
                                   + ") failed to load: RuntimeError: boom: this plugin is "
                                   "broken on purpose")
