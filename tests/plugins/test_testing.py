"""``harness.testing``: the scripted model and ``check_task_package`` on folders of tasks."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.errors import TaskSpecError
from harness.generators.registry import GENERATORS, generator
from harness.requests import GenerateRequest, LoglikelihoodRequest
from harness.testing import ScriptedLM, check_task_package, scripted_backend
from tests.helpers import forget
from tests.plugins.fakedist import task_yaml

MC_TASK = """\
name: parity
description: Is the number even or odd?
source: {type: generator, name: addition, per_bucket: 3}
fields: {target: parity, difficulty: digits}
buckets: {values: [1, 2, 4]}
roles: {id_max: 2}
templates: [{id: q, prompt: "{{ a }} + {{ b }} is"}]
output: {type: multiple_choice, choices: [even, odd]}
"""


def test_scripted_lm() -> None:
    lm = ScriptedLM({"p": "yes\nno"}, {("c", " x"): 0.0}, default="?")
    out = lm.generate([GenerateRequest("p", stop=("\n",)), GenerateRequest("q")])
    assert [r.text for r in out] == ["yes", "?"]
    ll = lm.loglikelihood([LoglikelihoodRequest("c", " x"), LoglikelihoodRequest("c", " yy")])
    assert [r.logprob for r in ll] == [0.0, -3.0]
    assert lm.prompts == ["p", "q", "c", "c"]
    assert ScriptedLM(lambda p: p.upper()).generate([GenerateRequest("ab")])[0].text == "AB"
    assert scripted_backend("empty", {}, 1).generate([GenerateRequest("x")])[0].text == ""
    assert scripted_backend("42", {}, "auto").identity.name == "42"


def test_check_task_package_on_a_folder(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "bench").mkdir(parents=True)
    (pkg / "bench" / "copyit.yaml").write_text(task_yaml("copyit"))
    (pkg / "bench" / "_base.yaml").write_text("fewshot: {k: 1}\n")
    checks = check_task_package(pkg, output_dir=tmp_path / "out", limit_per_bucket=3)
    assert [(c.address, c.origin, c.n_samples) for c in checks] == [
        ("bench/copyit", f"include:{pkg}", 9)]
    assert all(b.accuracy == 1.0 for b in checks[0].result.templates[0].buckets)
    assert (tmp_path / "out" / "bench__copyit" / "results.json").is_file()
    # with a model of your own, the run is only checked for completeness
    (check,) = check_task_package(pkg, model=ScriptedLM(""))
    assert all(b.accuracy == 0.0 for b in check.result.templates[0].buckets)


def test_check_task_package_multiple_choice(tmp_path: Path) -> None:
    (tmp_path / "mc").mkdir()
    gen = tmp_path / "mc" / "parity.yaml"
    # the built-in addition generator has no parity field: give it through a files source
    rows = "".join(f'{{"a": {a}, "b": 1, "digits": {len(str(a))}, "parity": "{p}"}}\n'
                   for a, p in ((3, "even"), (4, "odd"), (12, "odd"), (1234, "odd")))
    (tmp_path / "mc" / "rows.jsonl").write_text(rows)
    gen.write_text(MC_TASK.replace("{type: generator, name: addition, per_bucket: 3}",
                                   "{type: files, path: rows.jsonl}"))
    (check,) = check_task_package(tmp_path / "mc")
    assert check.n_samples == 4 and check.result.templates[0].roles[0].accuracy == 1.0


def test_check_task_package_catches_a_metric_that_rejects_its_own_answers(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(task_yaml("t").replace(
        "output: {type: generate, max_tokens: 20}",
        'output: {type: generate, max_tokens: 20, stop: [" "]}'))
    with pytest.raises(AssertionError, match=r"t: item .* the reference answer '.+' scored 0.0"):
        check_task_package(tmp_path)  # targets hold spaces, which the stop sequence cuts


def test_check_task_package_reports_invalid_tasks(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(task_yaml("t", generator="no_such_generator"))
    with pytest.raises(TaskSpecError, match="source.name: unknown generator 'no_such_generator'"):
        check_task_package(tmp_path)
    with pytest.raises(AssertionError, match="no installed package has a 'harness.tasks' entry"):
        check_task_package("no-such-bench")



_DRAWS = iter(range(10**6))


def _clock(rng: random.Random, difficulty: int) -> dict[str, str]:
    n = next(_DRAWS)  # state outside rng: a new item every time it is asked for
    return {"text": f"{difficulty} {n}", "target": str(n)}


def _gappy(rng: random.Random, difficulty: int) -> dict[str, str]:
    item = {"text": "ab"[:difficulty], "target": "x"}
    if difficulty > 2:
        del item["text"]  # the template's field, missing on longer items
    return item


@pytest.fixture
def _generators() -> Iterator[None]:
    for name, fn in (("t37_clock", _clock), ("t37_gappy", _gappy)):
        generator(name, difficulty="length", fields=("text", "target"))(fn)
    yield
    forget(GENERATORS, "t37_clock", "t37_gappy")


@pytest.mark.usefixtures("_generators")
@pytest.mark.parametrize(("name", "needle"), [
    ("t37_clock", "generator 't37_clock' made item 2/0 differently twice"),
    ("t37_gappy", "generator 't37_gappy' made item 3/0 without the field 'text' that template "
                  "io reads (its fields: length, target)"),
])
def test_check_task_package_checks_determinism_and_fields(tmp_path: Path, name: str,
                                                         needle: str) -> None:
    """issue 37: a generator that does not take its randomness from rng, or whose items leave
    out a field the templates read, is named by check_task_package."""
    pkg = tmp_path / "pkg" / "bench"
    pkg.mkdir(parents=True)
    (pkg / "t.yaml").write_text(task_yaml("t", generator=name))
    with pytest.raises(AssertionError, match=re.escape(needle)):
        check_task_package(tmp_path / "pkg", output_dir=tmp_path / "out")
