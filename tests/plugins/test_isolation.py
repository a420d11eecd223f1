"""A plugin that raises fails its own task alone (issue 19, item 7), and results.json's
environment.plugins lists exactly the plugins the run used (item 8)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.plugins.fakedist import SCRIPTED, harness, make_dist, task_yaml

# A generator that divides by zero at difficulty 6 (an OOD bucket: items 2 and 3 are fine), and
# a metric that does so for 6-letter targets.
BAD_MODULE = """\
def zerodiv(rng, difficulty):
    text = "ab" * difficulty
    return {"text": text[:difficulty], "target": text[:difficulty], "length": difficulty,
            "ratio": 1 / (6 - difficulty)}


def flaky(extracted, target):
    return float(extracted.strip() == target) if len(target) < 6 else 1 / 0
"""


def test_failing_plugin_tasks_fail_alone_and_used_plugins_are_recorded(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(site, "bad-plugins", "0.3", {
        "harness.generators": {"zerodiv": "badplug:zerodiv"},
        "harness.metrics": {"flaky": "badplug:flaky"},
    }, {"badplug.py": BAD_MODULE})
    make_dist(site, "scripted-model", "0.0.1", SCRIPTED)
    make_dist(site, "unrelated-tasks", "9.9", {"harness.tasks": {"unrel": "unrel_tasks"}},
              {"unrel_tasks/__init__.py": "", "unrel_tasks/other.yaml": task_yaml("other")})
    tasks = tmp_path / "tasks" / "mine"
    tasks.mkdir(parents=True)
    (tasks / "badgen.yaml").write_text(task_yaml("badgen", generator="zerodiv"))
    (tasks / "badmetric.yaml").write_text(task_yaml("badmetric", metric="flaky"))
    (tasks / "good.yaml").write_text(task_yaml("good"))
    out = tmp_path / "run"
    # bare names: resolving them imports every task plugin, the unrelated one included
    args = ["eval", "--model", "scripted:abc", "--tasks", "badgen,good,badmetric",
            "--include-path", str(tmp_path / "tasks"), "--limit-per-bucket", "2",
            "--output-dir", str(out)]
    # the generator fails the checks validate makes: the run stops before the model loads
    badgen = f"{tasks / 'badgen.yaml'}:5: buckets.values: bucket 6: generator 'zerodiv': " \
        "ZeroDivisionError: division by zero"
    r = harness(site, *args)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert [ln for ln in r.stderr.splitlines() if ln.startswith("error:")] == [
        f"error: {badgen}",
        "error: 1 of 3 tasks failed the checks that harness tasks validate makes, so no model "
        "was loaded and nothing ran; fix them, or pass --keep-going to run the others"]
    assert not (out / "results.json").exists()
    r = harness(site, *args, "--keep-going")  # the others run; each failure is its own line
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    origin = f"include:{tmp_path / 'tasks'}"
    where = ("metric 'flaky': ZeroDivisionError: division by zero (template "
             "io, bucket 6, item 0, seed 0; again: harness tasks sample mine/badmetric --bucket "
             "6 --item 0 --seed 0 --template io --score abc; its stack: GENHARNESS_TRACEBACK=1)")
    assert errors == [
        f"error: task mine/badgen ({origin}) failed in bad-plugins==0.3: {badgen}",
        f"error: task mine/badmetric ({origin}) failed in bad-plugins==0.3: {where}",
        "error: 2 of 3 tasks failed (listed under 'failed' in results.json); the others are "
        "complete",
    ]
    res = json.loads((out / "results.json").read_text())
    assert [t["task"] for t in res["tasks"]] == ["mine/good"]
    public = "include:tasks"  # results.json names the task folder, not its path
    assert res["failed"] == [
        {"task": "mine/badgen", "origin": public, "plugin": "plugin:bad-plugins==0.3",
         "error": badgen.replace(str(tmp_path / "tasks"), "tasks")},
        {"task": "mine/badmetric", "origin": public, "plugin": "plugin:bad-plugins==0.3",
         "error": f"mine/badmetric: {where}"},
    ]
    assert str(tmp_path) not in json.dumps(res)
    assert sorted(p.name for p in (out / "samples" / "mine").iterdir()) == ["good.jsonl"]
    assert res["environment"]["plugins"] == {"bad-plugins": "0.3", "scripted-model": "0.0.1"}

    # a run of the healthy task alone records only the model backend's plugin
    r = harness(site, "eval", "--model", "scripted:abc", "--tasks", "good",
                "--include-path", str(tmp_path / "tasks"), "--limit-per-bucket", "2",
                "--output-dir", str(tmp_path / "run2"))
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "run2" / "results.json").read_text())
    assert res["environment"]["plugins"] == {"scripted-model": "0.0.1"} and res["failed"] == []
