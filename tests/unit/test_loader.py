"""Task-file schema and loader: one-line errors with file, line and key path."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import TaskSpecError
from harness.tasks.loader import load_spec

GOOD = """\
name: t
description: test task
source: {type: generator, name: addition, per_bucket: 5}
fields: {difficulty: digits}
buckets: {values: [1, 2, 3]}
roles: {id_max: 1}
templates:
  - id: a
    prompt: "{{ a }} + {{ b }} ="
output: {type: generate, max_tokens: 8}
"""


def write(tmp_path: Path, text: str, name: str = "t.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_valid_file_loads(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, GOOD))
    assert spec.name == "t" and spec.templates[0].id == "a"
    assert spec.output.type == "generate" and spec.output.max_tokens == 8


def test_unknown_key_suggests_close_match_with_line(tmp_path: Path) -> None:
    p = write(tmp_path, GOOD.replace("templates:", "templtes:"))
    with pytest.raises(TaskSpecError) as e:
        load_spec(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}:")
    assert "templtes: unknown key (did you mean 'templates'?)" in msg
    assert f"{p}:7:" in msg  # the line of the misspelt key
    assert "\n" not in msg


def test_nested_unknown_key_has_dotted_path(tmp_path: Path) -> None:
    p = write(tmp_path, GOOD.replace("max_tokens: 8", "max_token: 8"))
    with pytest.raises(
        TaskSpecError, match=r"output\.max_token: unknown key \(did you mean 'max_tokens'\?\)"
    ):
        load_spec(p)


def test_wrong_type_names_key_path(tmp_path: Path) -> None:
    p = write(tmp_path, GOOD.replace("per_bucket: 5", "per_bucket: many"))
    with pytest.raises(
        TaskSpecError, match=r"t\.yaml:3: source\.per_bucket: Input should be a valid integer"
    ):
        load_spec(p)


def test_malformed_yaml_reports_line(tmp_path: Path) -> None:
    p = write(tmp_path, GOOD.replace("roles: {id_max: 1}", "roles: {id_max: 1"))
    with pytest.raises(TaskSpecError, match=r"t\.yaml:\d+:\d+: malformed YAML"):
        load_spec(p)


def test_unknown_generator_and_metric(tmp_path: Path) -> None:
    with pytest.raises(
        TaskSpecError,
        match=r"source\.name: unknown generator 'adition' \(did you mean: addition\?\)",
    ):
        load_spec(write(tmp_path, GOOD.replace("name: addition", "name: adition")))
    bad = GOOD + "scoring: {metric: exact_matc}\n"
    with pytest.raises(TaskSpecError, match=r"scoring\.metric: unknown metric"):
        load_spec(write(tmp_path, bad, "m.yaml"))


def test_bad_roles_and_buckets(tmp_path: Path) -> None:
    with pytest.raises(TaskSpecError, match=r"roles\.id: unknown bucket label"):
        load_spec(write(tmp_path, GOOD.replace("{id_max: 1}", "{id: [9]}")))
    with pytest.raises(TaskSpecError, match=r"buckets: .*strictly increasing"):
        load_spec(write(tmp_path, GOOD.replace("[1, 2, 3]", "[1, 3, 2]"), "b.yaml"))
    with pytest.raises(TaskSpecError, match=r"no bucket is in-distribution"):
        load_spec(write(tmp_path, GOOD.replace("{id_max: 1}", "{id_max: 0}"), "c.yaml"))


def test_template_syntax_error(tmp_path: Path) -> None:
    p = write(tmp_path, GOOD.replace('"{{ a }} + {{ b }} ="', '"{{ a + }}"'))
    with pytest.raises(TaskSpecError, match=r"templates\.0\.prompt: template syntax error"):
        load_spec(p)


def test_unknown_filter_or_test_is_caught_at_load(tmp_path: Path) -> None:
    for src, needle in (("{{ a | nope }}", "No filter named 'nope'"),
                        ("{% if a is weird %}x{% endif %}", "No test named 'weird'")):
        p = write(tmp_path, GOOD.replace('"{{ a }} + {{ b }} ="', repr(src).replace("'", '"')))
        with pytest.raises(TaskSpecError) as e:
            load_spec(p)
        msg = str(e.value)
        assert "templates.0.prompt: template syntax error" in msg and needle in msg


def test_include_merges_and_child_wins(tmp_path: Path) -> None:
    base = GOOD.replace("name: t\n", "").replace("max_tokens: 8", "max_tokens: 9")
    write(tmp_path, base, "_base.yaml")
    child = write(tmp_path, "include: _base.yaml\nname: child\nfewshot: {k: 2}\n", "child.yaml")
    spec = load_spec(child)
    assert spec.name == "child" and spec.fewshot.k == 2
    assert spec.output.max_tokens == 9 and spec.source.type == "generator"


def test_included_file_is_parsed_once_and_edits_are_seen(tmp_path: Path) -> None:
    base = GOOD.replace("name: t\n", "")
    write(tmp_path, "include: _mid.yaml\nfewshot: {k: 1}\n", "_base2.yaml")
    write(tmp_path, base, "_mid.yaml")
    kids = [write(tmp_path, f"include: _base2.yaml\nname: k{i}\n", f"k{i}.yaml") for i in range(3)]
    # the chain k -> _base2 -> _mid holds for every child (the kept parse is never consumed)
    assert [load_spec(k).output.max_tokens for k in kids] == [8, 8, 8]
    assert all(load_spec(k).fewshot.k == 1 for k in kids)
    write(tmp_path, base.replace("max_tokens: 8", "max_tokens: 12"), "_mid.yaml")
    assert load_spec(kids[0]).output.max_tokens == 12  # an edited file is read again


def test_include_cycle_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "include: b.yaml\n", "a.yaml")
    write(tmp_path, "include: a.yaml\n", "b.yaml")
    with pytest.raises(TaskSpecError, match=r"include: cycle a\.yaml -> b\.yaml -> a\.yaml"):
        load_spec(tmp_path / "a.yaml")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TaskSpecError, match="file not found"):
        load_spec(tmp_path / "nope.yaml")


def test_every_builtin_task_validates() -> None:
    from harness.tasks.index import TaskIndex

    index = TaskIndex.build()
    assert {"lengthgen/addition", "lengthgen/copy", "lengthgen/reverse"} <= set(index.refs)
    for ref in index.refs.values():
        spec = index.spec(ref)
        assert spec.name == ref.name
        assert spec.card is not None and spec.citations


def test_extractor_names_are_checked_like_metric_names(tmp_path: Path) -> None:
    p = write(tmp_path, GOOD + "scoring: {extract: {kind: last_numbr}}\n")
    with pytest.raises(TaskSpecError) as e:
        load_spec(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}:11: scoring.extract.kind: unknown extractor 'last_numbr' "
                          "(did you mean: last_number?)") and "\n" not in msg
    assert "harness extractors list" in msg
    p = write(tmp_path, GOOD + "scoring: {extract: {kind: regex}}\n", "r.yaml")
    with pytest.raises(TaskSpecError) as e:
        load_spec(p)
    assert str(e.value) == f"{p}:11: scoring.extract.pattern: required when kind is 'regex'"
    spec = load_spec(write(tmp_path, GOOD + "scoring: {extract: {kind: regex, pattern: 'x'}}\n",
                           "ok.yaml"))
    assert spec.scoring.extract.kind == "regex"
