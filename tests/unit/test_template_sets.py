"""Templates from paraphrase tables: format → Jinja2 conversion (checked against ``str.format``
on every paraphrase of the paper's tables), row selection, and ``templates_from`` at load time."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.errors import TaskSpecError
from harness.spec.task import TemplatesFromSpec
from harness.tasks.loader import load_spec
from harness.tasks.template_sets import read_paraphrases, select, to_jinja
from harness.templates import render


def test_to_jinja_by_hand() -> None:
    assert to_jinja('Q: "{word1}" or "{word2}"?\nA:') == 'Q: "{{ word1 }}" or "{{ word2 }}"?\nA:'
    assert render(to_jinja("{a} {{x}} {b}"), {"a": 1, "b": 2}) == "1 {x} 2"
    assert render(to_jinja("set {{% raw %}} {a}"), {"a": "A"}) == "set {% raw %} A"
    assert render(to_jinja("{# not a comment #} {a}"), {"a": 0}) == "{# not a comment #} 0"
    assert to_jinja("plain") == "plain"


PARA_DIR = "multiprompt/automatic paraphrases"


def test_every_paper_paraphrase_renders_like_str_format(shared_data: Path) -> None:
    """The Jinja2 version of each paraphrase renders exactly as Python's str.format would."""
    n = 0
    for path in sorted((shared_data / PARA_DIR).glob("*/*.csv")):
        for row in read_paraphrases(path):
            fields = {name: f"<{name}>" for name in row.placeholders}
            try:
                expected = row.template.format(**fields)
            except (ValueError, IndexError, KeyError):
                continue  # not a valid format string (e.g. a lone brace); never selected intact
            assert render(to_jinja(row.template), fields) == expected, (path.name, row.index)
            n += 1
    assert n > 4000


def write_table(path: Path) -> Path:
    path.write_text(
        "prompt idx,default prompt,method,prompt template,correct\n"
        '1,True,default,"Q: {a}?\nA:",1\n'
        "2,False,rephrase,Say {a}.,1\n"
        "3,False,rephrase,Say {a} now.,0\n"
        "4,False,meta_cot,Think about {a}.,1\n"
        "5,False,rephrase,Say {b}.,1\n"
        "6,False,meta_desc,Describe {a}.,1\n",
        encoding="utf-8",
    )
    return path


def test_select_rows(tmp_path: Path) -> None:
    rows = read_paraphrases(write_table(tmp_path / "t.csv"))
    assert [r.index for r in rows] == [1, 2, 3, 4, 5, 6] and rows[0].default
    assert rows[1].placeholders == {"a"}

    def idx(**kw: object) -> list[int]:
        spec = TemplatesFromSpec.model_validate({"path": "x", **kw})
        return [r.index for r in select(rows, spec)]

    # incorrect (3) and placeholder-changing (5) paraphrases are dropped; defaults skipped
    assert idx() == [2, 4, 6]
    assert idx(defaults="seen") == [1, 2, 4, 6]
    assert idx(correct_only=False) == [2, 3, 4, 6]
    assert idx(methods=["rephrase"]) == [2]
    assert idx(ids=[6, 2]) == [2, 6]
    picked = idx(limit=2, sample_seed=3)
    assert len(picked) == 2 and set(picked) <= {2, 4, 6} and picked == idx(limit=2, sample_seed=3)
    assert {tuple(idx(limit=2, sample_seed=s)) for s in range(20)} != {tuple(picked)}
    with pytest.raises(ValueError, match="index 9"):
        idx(ids=[9])


TASK = """
name: tiny
description: d
source: {type: generator, name: addition, per_bucket: 2}
fields: {difficulty: digits}
buckets: {values: [1]}
roles: {id_max: 1}
templates:
  - {id: official, prompt: "{{ a }} + {{ b }} ="}
  - {id: extra, prompt: "{{ a }} plus {{ b }}", seen: false}
output: {type: generate}
analyses: [{name: multi_prompt}]
"""


def test_templates_from_at_load_time(tmp_path: Path) -> None:
    write_table(tmp_path / "t.csv")
    f = tmp_path / "tiny.yaml"
    f.write_text(TASK + "templates_from: {path: t.csv, defaults: seen}\n", encoding="utf-8")
    spec = load_spec(f)
    assert [t.id for t in spec.templates] == ["official", "extra", "p1", "p2", "p4", "p6"]
    assert [t.seen for t in spec.templates] == [True, False, True, False, False, False]
    assert spec.templates[3].prompt == "Say {{ a }}."
    assert spec.analyses[0].params["seen"] == ["official", "p1"]
    f.write_text(TASK + "templates_from: {path: t.csv, mode: replace, limit: 1}\n")
    (only,) = load_spec(f).templates  # inline templates replaced by one drawn paraphrase
    assert only.id in {"p2", "p4", "p6"} and not only.seen
    # an absent table (e.g. GENHARNESS_DATA unset) keeps the inline templates
    f.write_text(TASK + "templates_from: {path: nowhere.csv}\n")
    assert [t.id for t in load_spec(f).templates] == ["official", "extra"]
    # ids that collide with inline ones are an error naming the file
    f.write_text(TASK.replace("id: extra", "id: p2") + "templates_from: {path: t.csv}\n")
    with pytest.raises(TaskSpecError, match=re.escape(f"{f}:13: templates_from: duplicate")):
        load_spec(f)
    f.write_text(TASK + "templates_from: {path: t.csv, limt: 2}\n")
    with pytest.raises(TaskSpecError, match="templates_from.limt: unknown key"):
        load_spec(f)
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    f.write_text(TASK + "templates_from: {path: bad.csv}\n")
    with pytest.raises(TaskSpecError, match="needs the columns"):
        load_spec(f)
