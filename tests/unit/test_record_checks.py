"""Issue 47: every record of a task's data file is checked by ``tasks validate`` (and so by
eval's preflight, ``plugins list --check`` and ``check_task_package``) before any model loads;
each problem is one line at the data file's line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app

TASK = """\
name: unit_convert
description: unit conversions
source: {{type: files, path: {data}}}
fields: {{difficulty: {field}, id: id}}
buckets: {{{buckets}}}
roles: {{id_max: 2}}
templates:
  - id: plain
    prompt: "{{{{ question }}}} ="
    target: "{{{{ answer }}}}"
output: {{type: generate, max_tokens: 8}}
"""


def _records(n: int = 60, drop: dict[int, str] | None = None) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for i in range(n):
        rec: dict[str, object] = {"id": f"uc{i}", "question": f"q{i}", "answer": str(i),
                                  "steps": 1 + i % 6}
        for j, key in (drop or {}).items():
            if i == j:
                del rec[key]
        out.append(rec)
    return out


def _task(tmp: Path, records: list[dict[str, object]], field: str = "steps",
          buckets: str = "values: [1, 2, 3, 4, 5, 6]", extra: str = "", data: str = "uc.jsonl"
          ) -> Path:
    (tmp / data).write_text("".join(json.dumps(r) + "\n" for r in records))
    task = tmp / "unit_convert.yaml"
    task.write_text(TASK.format(data=data, field=field, buckets=buckets) + extra)
    return task


def _validate(task: Path) -> tuple[int, list[str]]:
    r = CliRunner().invoke(app, ["tasks", "validate", str(task)])
    return r.exit_code, r.output.strip().splitlines()


def test_a_clean_data_file_validates(tmp_path: Path) -> None:
    assert _validate(_task(tmp_path, _records()))[0] == 0


def test_a_misspelt_difficulty_field_names_the_line_and_the_field_meant(tmp_path: Path) -> None:
    code, lines = _validate(_task(tmp_path, _records(), field="step"))
    assert code == 2
    assert lines == [f"error: {tmp_path / 'uc.jsonl'}:1: record 'uc0' has no field 'step' "
                     "(fields.difficulty) (did you mean: steps?) (60 of 60 records)"]


def test_a_record_without_its_answer_is_found_though_no_run_would_draw_it(tmp_path: Path
                                                                         ) -> None:
    code, lines = _validate(_task(tmp_path, _records(drop={37: "answer"})))
    assert code == 2
    assert lines == [f"error: {tmp_path / 'uc.jsonl'}:38: record 'uc37' has no field 'answer' "
                     "(templates[0].target (plain)) (1 of 60 records)"]


def test_records_outside_every_bucket_and_an_empty_bucket_are_refused_unless_meant(
        tmp_path: Path) -> None:
    task = _task(tmp_path, _records(), buckets="values: [1, 2, 3, 4, 5, 8]")
    code, lines = _validate(task)
    assert code == 2
    assert lines[0] == (f"error: {tmp_path / 'uc.jsonl'}:6: record 'uc5' (difficulty 6) falls "
                        "in no bucket (buckets: 1, 2, 3, 4, 5, 8); 10 of 60 records would be "
                        "left out (widen the buckets, or set buckets.allow_outside: true)")
    assert lines[1] == (f"error: {task}:5: buckets: bucket 8 (OOD) holds no record of uc.jsonl; "
                        "difficulty values outside every bucket: 6 (or set buckets.allow_empty: "
                        "true)")
    meant = _task(tmp_path, _records(), buckets="values: [1, 2, 3, 4, 5, 8], allow_outside: true"
                  ", allow_empty: true")
    assert _validate(meant)[0] == 0


def test_duplicate_ids_and_empty_targets_are_named_at_their_lines(tmp_path: Path) -> None:
    records = _records(12)
    records[9]["id"] = "uc2"
    records[4]["answer"] = " "
    code, lines = _validate(_task(tmp_path, records))
    assert code == 2
    assert lines == [
        f"error: {tmp_path / 'uc.jsonl'}:10: duplicate id 'uc2' (fields.id; first at line 3)",
        f"error: {tmp_path / 'uc.jsonl'}:5: record 'uc4' has an empty target (template plain) "
        "(1 of 12 records)"]


def test_csv_rows_are_named_by_the_line_they_start_on(tmp_path: Path) -> None:
    rows = ["id,question,answer,steps", "a,q1,1,1", 'b,"two\nlines",,2', "c,q3,3,2"]
    (tmp_path / "uc.csv").write_text("\n".join(rows) + "\n")
    task = tmp_path / "t.yaml"
    task.write_text(TASK.format(data="uc.csv", field="steps", buckets="values: [1, 2]"))
    code, lines = _validate(task)
    assert code == 2 and lines == [
        f"error: {tmp_path / 'uc.csv'}:3: record 'b' has an empty target (template plain) "
        "(1 of 3 records)"]


def test_an_id_max_inside_a_bucket_is_refused(tmp_path: Path) -> None:
    task = _task(tmp_path, _records(), buckets="edges: [1, 2, 4, 7]")
    code, lines = _validate(task)
    assert code == 2 and lines == [
        f"error: {task}:6: roles.id_max: bucket 2-3 holds values on both sides of id_max 2 "
        "(from 2 to 3); put a bucket edge just past id_max, or set id_max to a bucket's last "
        "value"]


def test_a_key_typo_and_a_template_typo_come_back_together(tmp_path: Path) -> None:
    task = _task(tmp_path, _records())
    task.write_text(task.read_text().replace("description:", "descriptionx:")
                    .replace("{{ question }}", "{{ questoin }}"))
    code, lines = _validate(task)
    assert code == 2
    assert lines == [
        f"error: {task}:2: descriptionx: unknown key (did you mean 'description'?)",
        f"error: {tmp_path / 'uc.jsonl'}:1: record 'uc0' has no field 'questoin' "
        "(templates[0].prompt (plain)) (did you mean: question?) (60 of 60 records)"]


@pytest.mark.parametrize("limit", [[], ["--limit-per-bucket", "1"]])
def test_eval_refuses_the_same_before_any_model_loads(tmp_path: Path, limit: list[str]) -> None:
    task = _task(tmp_path, _records(drop={50: "answer"}))
    r = CliRunner().invoke(app, ["eval", "--model", "no-such-backend:x", "--tasks",
                                 "unit_convert", "--include-path", str(tmp_path), *limit,
                                 "--output-dir", str(tmp_path / "run")])
    assert r.exit_code != 0 and not (tmp_path / "run" / "results.json").exists()
    assert f"{tmp_path / 'uc.jsonl'}:51: record 'uc50' has no field 'answer'" in str(
        r.exception or r.output), r.output
    assert task.exists()


def test_a_metric_of_a_package_not_yet_installed_says_to_install_it(tmp_path: Path) -> None:
    pkg = tmp_path / "mypkg"
    (pkg / "src" / "mine" / "tasks").mkdir(parents=True)
    (pkg / "pyproject.toml").write_text('[project]\nname = "genharness-never-installed"\n'
                                        'version = "0.1"\n')
    task = _task(pkg / "src" / "mine" / "tasks", _records(),
                 extra="scoring: {metric: within_1pct}\n")
    code, lines = _validate(task)
    assert code == 2 and len(lines) == 1
    assert lines[0].endswith("; the package genharness-never-installed this file belongs to is "
                             f"not installed, so what it registers is not known yet: pip "
                             f"install -e {pkg}"), lines


def test_validate_takes_a_task_name_as_show_does() -> None:
    r = CliRunner().invoke(app, ["tasks", "validate", "lengthgen/copy"])
    assert r.exit_code == 0 and r.output.startswith("ok: ") and "copy.yaml" in r.output
    r = CliRunner().invoke(app, ["tasks", "validate", "lengthgen/nosuch"])
    assert r.exit_code == 2 and r.output.strip() == (
        "error: lengthgen/nosuch: file not found (nor the name of a built-in or installed task: "
        "harness tasks list)")
