"""Two sources defining the same name: a one-line error naming both, where that name is used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.plugins.fakedist import SCRIPTED, harness, make_dist, task_yaml, warnings_in


def _bench(site: Path, dist: str, version: str, namespace: str, pkg: str,
           tasks: dict[str, str]) -> None:
    make_dist(site, dist, version, {"harness.tasks": {namespace: pkg}},
              {f"{pkg}/__init__.py": "", **{f"{pkg}/{n}.yaml": t for n, t in tasks.items()}})


@pytest.fixture()
def site(tmp_path: Path) -> Path:
    """dup-a and dup-b both define dupbench/twin; dup-b also dupbench/solo; tools provides two
    generators named alike by two distributions."""
    site = tmp_path / "site"
    _bench(site, "dup-a", "1.0", "dupbench", "dup_a", {"twin": task_yaml("twin")})
    _bench(site, "dup-b", "2.0", "dupbench", "dup_b",
           {"twin": task_yaml("twin"), "solo": task_yaml("solo")})
    make_dist(site, "scripted-model", "0.0.1", SCRIPTED)
    for dist in ("gen-one", "gen-two"):
        make_dist(site, dist, "1.0", {"harness.generators": {"twingen": "harness.generators."
                                                             "sequences:copy"}})
    return site


def _one_error(stderr: str) -> str:
    errors = [ln for ln in stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in stderr, stderr
    return errors[0]


def test_same_address_from_two_plugins(site: Path, tmp_path: Path) -> None:
    r = harness(site, "tasks", "list")  # the listing warns, and lists everything else
    assert r.returncode == 0, r.stderr
    (warning,) = warnings_in(r.stderr)
    assert "task 'dupbench/twin' is defined twice" in warning and "(left out" in warning
    assert "plugin:dup-a==1.0 (" in warning and "plugin:dup-b==2.0 (" in warning
    assert "dupbench/solo" in r.stdout and "lengthgen/addition" in r.stdout
    assert "dupbench/twin" not in r.stdout
    for args in (["tasks", "show", "dupbench/twin"],
                 ["eval", "--model", "scripted:empty", "--tasks", "dupbench/twin",
                  "--output-dir", str(tmp_path / "o")],
                 ["eval", "--model", "scripted:empty", "--tasks", "twin",
                  "--output-dir", str(tmp_path / "o")],
                 ["eval", "--model", "scripted:empty", "--tasks", "dupbench",
                  "--output-dir", str(tmp_path / "o")]):
        r = harness(site, *args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        err = _one_error(r.stderr)
        assert "task 'dupbench/twin' is defined twice" in err
        assert "plugin:dup-a==1.0 (" in err and "plugin:dup-b==2.0 (" in err
        assert "dup_a/twin.yaml" in err and "dup_b/twin.yaml" in err


def test_unrelated_names_still_work(site: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    r = harness(site, "eval", "--model", "scripted:empty", "--tasks", "dupbench/solo,solo",
                "--tasks", "lengthgen/copy", "--limit-per-bucket", "1", "--output-dir", str(out))
    assert r.returncode == 0, r.stderr
    assert warnings_in(r.stderr) == []
    res = json.loads((out / "results.json").read_text())
    assert [(t["task"], t["origin"]) for t in res["tasks"]] == [
        ("dupbench/solo", "plugin:dup-b==2.0"), ("lengthgen/copy", "builtin")]


def test_plugin_and_include_path_define_the_same_address(site: Path, tmp_path: Path) -> None:
    """The --include-path folder the user named wins; the plugin's task is skipped, with a
    warning naming both."""
    inc = tmp_path / "inc"
    (inc / "dupbench").mkdir(parents=True)
    (inc / "dupbench" / "solo.yaml").write_text(task_yaml("solo"))
    out = tmp_path / "o"
    r = harness(site, "eval", "--model", "scripted:empty", "--tasks", "dupbench/solo",
                "--include-path", str(inc), "--limit-per-bucket", "1", "--output-dir", str(out))
    assert r.returncode == 0, r.stderr
    (warning,) = warnings_in(r.stderr)
    assert "plugin task 'dupbench/solo' of plugin:dup-b==2.0 (" in warning
    assert f"clashes with include:{inc} ({inc / 'dupbench' / 'solo.yaml'}), which is used" in (
        warning) and warning.endswith("(skipped)")
    res = json.loads((out / "results.json").read_text())
    # results.json names the folder publicly: by its name, as it lies outside the working one
    assert [(t["task"], t["origin"]) for t in res["tasks"]] == [("dupbench/solo", "include:inc")]


def test_same_generator_name_from_two_plugins(site: Path, tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(task_yaml("t", generator="twingen"))
    r = harness(site, "tasks", "validate", str(tmp_path / "t.yaml"))
    assert r.returncode == 2
    assert "generator 'twingen' is provided by more than one plugin: gen-one==1.0" in r.stderr
    assert "gen-two==1.0" in r.stderr


def test_include_path_and_builtin_conflict_is_still_immediate(tmp_path: Path) -> None:
    (tmp_path / "lengthgen").mkdir()
    (tmp_path / "lengthgen" / "copy.yaml").write_text(task_yaml("copy"))
    r = harness(tmp_path / "empty-site", "tasks", "list", "--include-path", str(tmp_path))
    assert r.returncode == 2
    err = _one_error(r.stderr)
    assert "task 'lengthgen/copy' is defined twice: builtin (" in err
    assert f"include:{tmp_path}" in err
