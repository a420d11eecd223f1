"""A prompting strategy and an answer extractor from a plugin package: ``harness.strategies`` and
``harness.extractors`` are entry-point groups like the others (listed, checked, shown by
``strategies list`` / ``extractors list`` with their origin, used by ``--strategy`` and
``scoring.extract.kind``, and recorded in results.json)."""

from __future__ import annotations

import json
from pathlib import Path

from harness import plugins
from harness.run.results import read_samples
from tests.plugins.fakedist import SCRIPTED, harness, make_dist

MODULE = """\
def twice(inp):
    \"\"\"Answer, then answer again after the first answer.\"\"\"
    first = yield inp.answer_request(inp.prepared.prompt)
    second = yield inp.answer_request(inp.prepared.prompt + first)
    return second


def shout(text, pattern):
    \"\"\"The output, stripped and upper-cased.\"\"\"
    return text.strip().upper()
"""

TASK = """\
name: loud
description: the answer is ABC, whatever the question
source: {type: generator, name: addition, per_bucket: 2}
fields: {difficulty: digits}
buckets: {values: [1, 2]}
roles: {id_max: 1}
templates: [{id: a, prompt: "{{ a }} + {{ b }} =", target: "ABC"}]
output: {type: generate}
scoring: {extract: {kind: shout}}
"""


def test_strategy_and_extractor_plugins_are_listed_and_used(tmp_path: Path) -> None:
    assert {plugins.STRATEGIES, plugins.EXTRACTORS} <= set(plugins.GROUPS)
    site = tmp_path / "site"
    make_dist(site, "scripted-model", "0.0.1", SCRIPTED)
    make_dist(site, "plug-blocks", "0.3",
              {"harness.strategies": {"twice": "plugblocks:twice"},
               "harness.extractors": {"shout": "plugblocks:shout"}}, {"plugblocks.py": MODULE})
    r = harness(site, "plugins", "list", "--check")
    assert r.returncode == 0, r.stdout + r.stderr
    rows = [ln for ln in r.stdout.splitlines() if "plug-blocks" in ln]
    assert len(rows) == 2 and all("ok" in row for row in rows)
    for kind, name, builtin in (("strategies", "twice", "cot"), ("extractors", "shout", "regex")):
        r = harness(site, kind, "list", "--json")
        assert r.returncode == 0, r.stderr
        listed = {b["name"]: b for b in json.loads(r.stdout)}
        assert listed[name]["origin"] == "plugin:plug-blocks==0.3"
        assert listed[name]["description"].startswith(("Answer, then", "The output, stripped"))
        assert listed[builtin]["origin"] == "builtin"
    (tmp_path / "inc" / "mine").mkdir(parents=True)
    (tmp_path / "inc" / "mine" / "loud.yaml").write_text(TASK)
    out = tmp_path / "run"
    r = harness(site, "eval", "--model", "scripted:abc", "--tasks", "mine/loud", "--strategy",
                "twice", "--include-path", str(tmp_path / "inc"), "--output-dir", str(out))
    assert r.returncode == 0, r.stderr
    res = json.loads((out / "results.json").read_text())
    assert res["run"]["strategy"] == "twice"
    assert res["environment"]["plugins"] == {"plug-blocks": "0.3", "scripted-model": "0.0.1"}
    samples = read_samples(out / res["tasks"][0]["samples_file"])
    assert samples and all(len(s.calls) == 2 and s.extracted == "ABC" and s.score == 1.0
                           for s in samples)
    r = harness(site, "eval", "--model", "scripted:abc", "--tasks", "mine/loud", "--strategy",
                "twise", "--include-path", str(tmp_path / "inc"), "--output-dir", str(out / "x"))
    assert r.returncode == 2 and "unknown strategy 'twise' (did you mean: twice?)" in r.stderr
