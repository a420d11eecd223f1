"""Issue 37, a trial package written from the docs: ``harness plugins list --check`` refuses a
task that ``tasks validate`` and ``eval`` refuse (the same checks, the same line), and warns of
a model backend registered under the plain name ``scripted``; the ``--score`` answer an item's
failure gives is one shell word on one line, whatever the answer holds."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.errors import ItemError
from tests.plugins.fakedist import SCRIPTED, harness, make_dist, task_yaml, warnings_in

ZERO = task_yaml("zero").replace("{type: generator, name: copy, per_bucket: 4}",
                                 "{type: files, path: /dev/zero, format: jsonl}")


def _row(stdout: str, group: str) -> str:
    return next(ln for ln in stdout.splitlines() if f" {group} " in ln)


def test_check_refuses_what_validate_refuses(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(site, "mine-dist", "0.1", {"harness.tasks": {"mine": "mine_tasks"}},
              {"mine_tasks/__init__.py": "", "mine_tasks/good.yaml": task_yaml("good"),
               "mine_tasks/zero.yaml": ZERO})
    zero = site / "mine_tasks" / "zero.yaml"
    line = f"{zero}:3: source.path: /dev/zero is a device, not a regular file"
    r = harness(site, "plugins", "list", "--check")
    assert r.returncode == 1, r.stdout + r.stderr
    assert _row(r.stdout, "tasks").endswith(f"error: {line}"), r.stdout
    r = harness(site, "tasks", "validate", str(site / "mine_tasks"))
    assert r.returncode == 2 and f"error: {line}" in r.stderr.splitlines(), r.stderr


def test_check_counts_the_problems_it_does_not_show(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(site, "mine-dist", "0.1", {"harness.tasks": {"mine": "mine_tasks"}},
              {"mine_tasks/__init__.py": "", "mine_tasks/base.yaml": task_yaml("base"),
               "mine_tasks/step.yaml": "include: base.yaml\nname: step\nitems_from: mine/bse\n",
               "mine_tasks/zero.yaml": ZERO})
    r = harness(site, "plugins", "list", "--check")
    row = _row(r.stdout, "tasks")
    assert r.returncode == 1 and row.endswith(
        f"error: {site / 'mine_tasks' / 'step.yaml'}:3: items_from: no task 'mine/bse' (did you "
        "mean: mine/base?) (not a task of this package, a built-in or another installed "
        f"package's task); and 1 more problem(s) (harness tasks validate {site / 'mine_tasks'} "
        "shows them all)"), r.stdout


@pytest.mark.parametrize(("name", "warned"), [("scripted", True), ("mine-scripted", False)])
def test_a_backend_named_plain_scripted_is_warned_of(tmp_path: Path, name: str,
                                                    warned: bool) -> None:
    site = tmp_path / "site"
    make_dist(site, "mine-dist", "0.1", {
        "harness.tasks": {"mine": "mine_tasks"},
        "harness.models": {name: SCRIPTED["harness.models"]["scripted"]}},
        {"mine_tasks/__init__.py": "", "mine_tasks/good.yaml": task_yaml("good")})
    r = harness(site, "plugins", "list", "--check")
    assert r.returncode == 0, r.stdout + r.stderr
    expected = ["warning: mine-dist registers the model backend under the plain name 'scripted' "
                "(harness.models:scripted = harness.testing:scripted_backend), which any package "
                "may take, so two such packages clash: register it under your package's own "
                'name, e.g. mine-scripted = "harness.testing:scripted_backend"'] if warned else []
    assert warnings_in(r.stderr) == expected


@pytest.mark.parametrize("answer", ["plain", "it's", "", "two\nlines\t\\ 'q'", "é\x01\u2028"])
def test_the_score_answer_is_one_shell_word(answer: str) -> None:
    from harness.errors import shell_word

    word = shell_word(answer)
    assert "\n" not in word
    out = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, check=True,
                         env={"LC_ALL": "C.UTF-8"})
    assert out.stdout.decode("utf-8") == answer
    line = ItemError("m: metric 'x': bad", "2/0", "2", "io", answer=answer).located("m/t", 0)
    assert f"--score {word};" in line and "\n" not in line


def test_a_long_answer_is_not_repeated() -> None:
    line = ItemError("m: bad", "2/0", "2", "io", answer="x" * 501).located("m/t", 0)
    assert "--score ANSWER (ANSWER: the model's 501-character answer, too long to repeat " \
        "here);" in line



def test_a_problem_of_an_included_file_counts_once(tmp_path: Path) -> None:
    # a base file's typo reached through two tasks that include it is one problem, not two
    site = tmp_path / "site"
    base = task_yaml("common").replace("name: common\n", "").replace("scoring:", "scorin:")
    make_dist(site, "mine-dist", "0.1", {"harness.tasks": {"mine": "mine_tasks"}},
              {"mine_tasks/__init__.py": "", "mine_tasks/_common.yaml": base,
               "mine_tasks/a.yaml": "include: _common.yaml\nname: a\n",
               "mine_tasks/b.yaml": "include: _common.yaml\nname: b\n"})
    r = harness(site, "plugins", "list", "--check")
    row = _row(r.stdout, "tasks")
    assert r.returncode == 1 and "scorin" in row and "more problem" not in row, r.stdout
