"""What a task author meets: include: replacing a typed block, every error shown at once,
`tasks validate` on folders and _ bases, and `tasks show --yaml` giving a file that validates."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.cli.tasks_cmd import spec_yaml, templates_expanded
from harness.errors import TaskSpecError
from harness.tasks.index import TaskIndex
from harness.tasks.loader import load_spec, validate_base
from tests.helpers import run_harness

REPO = Path(__file__).resolve().parents[2]

BASE = """\
description: a generation base
source: {type: generator, name: copy, per_bucket: 4}
fields: {target: target, difficulty: length}
buckets: {values: [2, 3, 6]}
roles: {id_max: 3}
templates: [{id: io, prompt: "Copy: {{ text }}"}]
output: {type: generate, max_tokens: 20, stop: ["\\n"]}
"""


def _write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_include_child_replaces_a_block_of_another_type(tmp_path: Path) -> None:
    d = _write(tmp_path, {"_gen.yaml": BASE, "mc.yaml": (
        "include: _gen.yaml\nname: mc\n"
        "output: {type: multiple_choice, choices: [alpha, beta]}\n"
        "source: {type: files, path: items.jsonl}\n")})
    spec = load_spec(d / "mc.yaml")
    assert spec.output.model_dump() == {"type": "multiple_choice", "choices": ["alpha", "beta"],
                                        "choices_field": None, "choice_prefix": " "}
    assert spec.source.type == "files" and spec.source.path == "items.jsonl"
    # the same type still merges key by key
    (d / "longer.yaml").write_text("include: _gen.yaml\nname: longer\n"
                                   "output: {type: generate, max_tokens: 64}\n")
    out = load_spec(d / "longer.yaml").output
    assert out.type == "generate" and out.max_tokens == 64 and out.stop == ["\n"]


def test_a_task_can_include_another_task(tmp_path: Path) -> None:
    """Task-to-task include:, as docs/task-files.md shows it: the included task stays a task,
    the variant replaces lists whole and merges mappings key by key."""
    d = _write(tmp_path / "inc" / "mine", {
        "copy.yaml": BASE + "name: copy\nsuites: [mybench]\nfewshot: {k: 1, shared: true}\n",
        "copy_long.yaml": "include: copy.yaml\nname: copy_long\nbuckets:\n  values: [2, 4, 8]\n"
                          "roles:\n  id_max: 4\nfewshot:\n  k: 2\n"})
    base, variant = load_spec(d / "copy.yaml"), load_spec(d / "copy_long.yaml")
    assert (base.name, base.buckets.values, base.fewshot.k) == ("copy", [2, 3, 6], 1)
    assert (variant.name, variant.buckets.values, variant.fewshot.k) == ("copy_long", [2, 4, 8], 2)
    assert variant.fewshot.shared and variant.suites == ["mybench"] and (
        variant.templates == base.templates)
    r = run_harness("tasks", "list", "--include-path", str(d.parent))
    assert r.returncode == 0, r.stderr
    assert {ln.split()[0] for ln in r.stdout.splitlines() if ln.startswith("mine/")} == {
        "mine/copy", "mine/copy_long"}
    doc = (REPO / "docs" / "task-files.md").read_text(encoding="utf-8")
    assert "A task can also include another task" in doc and "include: digitsum.yaml" in doc


def test_every_problem_is_shown_each_on_its_own_line(tmp_path: Path) -> None:
    d = _write(tmp_path, {"_gen.yaml": BASE, "bad.yaml": (
        "include: _gen.yaml\nname: bad\n"
        "output: {type: multiple_choice, choices: [a], max_tokens: 3, choices_feld: x}\n"
        "card: {axis: lenght, shift: x}\n"
        "fewshot: {k: -1}\n")})
    with pytest.raises(TaskSpecError) as e:
        load_spec(d / "bad.yaml")
    lines = str(e.value).splitlines()
    where = f"{d / 'bad.yaml'}"
    assert lines == [
        f"{where}:3: output.max_tokens: unknown key "
        "(allowed: type, choices, choices_field, choice_prefix)",
        f"{where}:3: output.choices_feld: unknown key (did you mean 'choices_field'?)",
        f"{where}:4: card.axis: Input should be 'length', 'compositional', 'difficulty', "
        "'instruction' or 'other'",
        f"{where}:5: fewshot.k: Input should be greater than or equal to 0",
    ]
    assert "more)" not in str(e.value)


def test_validate_reports_every_registry_and_template_problem_of_a_file(tmp_path: Path) -> None:
    """An unknown generator no longer hides an unknown metric (or anything else) in the same
    file: every problem the schema cannot see is one line."""
    d = _write(tmp_path, {"bad.yaml": BASE.replace("name: copy", "name: nosuchgen")
                          .replace("Copy: {{ text }}", "Copy: {{ text")
                          + "name: bad\nscoring: {metric: nosuchmetric, extract: {kind: regex}}\n"
                          + "gaps: {report: [nosuchgap]}\n"})
    r = run_harness("tasks", "validate", str(d / "bad.yaml"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    where = f"error: {d / 'bad.yaml'}"
    lines = r.stderr.splitlines()
    assert [ln.split(": ", 3)[2] for ln in lines] == [
        "templates.0.prompt", "source.name", "scoring.metric", "scoring.extract.pattern",
        "gaps.report.0"], lines
    assert all(ln.startswith(where) for ln in lines)
    assert "unknown generator 'nosuchgen'" in lines[1] and "unknown metric 'nosuchmetric'" in (
        lines[2])


def test_validate_makes_one_item_per_bucket_so_refused_parameters_fail_there(
        tmp_path: Path) -> None:
    """Parameters each fine alone that the generator refuses together (here: 3 distinct
    symbols from a 2-letter alphabet) used to pass validate and fail at eval."""
    d = _write(tmp_path, {"uniq.yaml": BASE.replace(
        "per_bucket: 4}", "per_bucket: 4, params: {alphabet: ab, unique: true}}") + "name: u\n"})
    r = run_harness("tasks", "validate", str(d / "uniq.yaml"))
    assert r.returncode == 2, r.stdout
    # bucket 2 works, so the line names the first bucket whose difficulty is refused
    assert r.stderr == (f"error: {d / 'uniq.yaml'}:4: buckets.values: bucket 3: generator 'copy': "
                        "unique: length "
                        "must be 1-2 (the alphabet's distinct symbols), got 3\n")
    r = run_harness("tasks", "validate", "--no-items", str(d / "uniq.yaml"))
    assert r.returncode == 0 and r.stdout.startswith(f"ok: {d / 'uniq.yaml'}"), r.stderr


def test_a_misspelt_key_hides_only_the_missing_error_it_causes(tmp_path: Path) -> None:
    d = _write(tmp_path, {"t.yaml": BASE.replace("templates:", "templtes:")
                          .replace("description:", "descripton:") + "name: t\n"})
    with pytest.raises(TaskSpecError) as e:
        load_spec(d / "t.yaml")
    lines = str(e.value).splitlines()
    assert len(lines) == 2, lines
    assert lines[0].endswith("descripton: unknown key (did you mean 'description'?)")
    assert lines[1].endswith("templtes: unknown key (did you mean 'templates'?)")


def test_cli_prints_every_problem_as_an_error_line(tmp_path: Path) -> None:
    d = _write(tmp_path / "inc" / "mine", {"bad.yaml": BASE.replace("{id_max: 3}", "{id_mx: 3}")
                                           .replace("per_bucket: 4", "per_bucket: 0")
                                           + "name: bad\n"})
    r = run_harness("tasks", "show", "mine/bad", "--include-path", str(d.parent))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 2 and all(ln.startswith(f"error: {d / 'bad.yaml'}:") for ln in lines)
    assert "source.per_bucket: Input should be greater than or equal to 1" in lines[0]
    assert "roles.id_mx: unknown key (did you mean 'id_max'?)" in lines[1]  # file order


def test_validate_accepts_folders_and_checks_bases_as_partial_tasks(
        tmp_path: Path, shared_data: Path) -> None:  # items are made: the data files are read
    r = run_harness("tasks", "validate", str(REPO / "tasks"))
    assert r.returncode == 0, r.stdout + r.stderr
    n_files = len(list((REPO / "tasks").rglob("*.yaml")))
    oks = [ln for ln in r.stdout.splitlines() if ln.startswith("ok: ")]
    assert len(oks) == n_files and r.stderr == ""
    assert f"ok: {REPO / 'tasks' / 'lengthgen' / '_sequence.yaml'} (base for include:" in r.stdout
    # files given one by one, bases among them (what a shell glob gives)
    files = sorted(str(p) for p in (REPO / "tasks" / "lengthgen").glob("*.yaml"))
    r = run_harness("tasks", "validate", *files)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == len(files), r.stderr


def test_validate_reports_bad_bases_and_tasks_in_subfolders(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    _write(root, {"_gen.yaml": BASE.replace("max_tokens: 20", "max_tokns: 20")})
    _write(root / "deep" / "er", {"t.yaml": "include: ../../_gen.yaml\nname: t\n",
                                  "u.yml": BASE + "name: u\n"})
    with pytest.raises(TaskSpecError, match=r"output.max_tokns: unknown key"):
        validate_base(root / "_gen.yaml")
    r = run_harness("tasks", "validate", str(root))
    assert r.returncode == 2
    assert r.stdout.splitlines() == [f"ok: {root / 'deep' / 'er' / 'u.yml'} (u, 1 template(s))"]
    # t.yaml's problem is in the file it includes: shown there, t.yaml named (issue 37, 4),
    # and once, though the base and t.yaml are both validated
    (error,) = r.stderr.splitlines()
    assert error == (f"error: {root / '_gen.yaml'}:7: output.max_tokns: unknown key (did you "
                     f"mean 'max_tokens'?) (included by {root / 'deep' / 'er' / 't.yaml'})")
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run_harness("tasks", "validate", str(empty))
    assert r.returncode == 2 and r.stderr.strip() == (
        f"error: {empty}: no task files (*.yaml, *.yml) in this folder")


def test_a_base_is_partial_but_not_lax(tmp_path: Path) -> None:
    d = _write(tmp_path, {"_part.yaml": "source: {per_bucket: 5}\nfewshot: {k: 2}\n",
                          "_bad.yaml": "fewshot: {k: two}\ncard: {axis: width}\n"})
    assert validate_base(d / "_part.yaml") == 2
    with pytest.raises(TaskSpecError) as e:
        validate_base(d / "_bad.yaml")
    lines = str(e.value).splitlines()
    assert [ln.split(": ", 2)[1] for ln in lines] == ["fewshot.k", "card.axis"]


def test_show_yaml_is_plain_yaml_at_any_terminal_width() -> None:
    r = run_harness("tasks", "show", "lengthgen/addition", "--yaml", env={"COLUMNS": "40"})
    assert r.returncode == 0, r.stderr
    data = yaml.safe_load(r.stdout)
    spec = TaskIndex.build([]).spec(TaskIndex.build([]).resolve(["lengthgen/addition"])[0])
    assert data == spec.model_dump(mode="json")
    assert r.stdout.startswith("# lengthgen/addition: resolved from ")
    assert "buckets over" not in r.stdout  # no table: the output is the spec alone
    r = run_harness("tasks", "show", "lengthgen/addition", env={"COLUMNS": "40"})
    assert r.returncode == 0 and r.stdout.startswith(
        "# lengthgen/addition: resolved from ") and "buckets over digits" in r.stdout


def test_show_writes_whole_numbers_as_integers() -> None:
    """Bucket values and role bounds a task file gives as integers are shown as integers."""
    r = run_harness("tasks", "show", "lengthgen/addition", "--yaml")
    assert r.returncode == 0, r.stderr
    assert "  values: [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 15]\n" in r.stdout
    assert "roles: {id_max: 5, id: null}\n" in r.stdout and ".0]" not in r.stdout


def test_show_yaml_of_every_builtin_task_validates_when_saved(tmp_path: Path,
                                                              shared_data: Path) -> None:
    index = TaskIndex.build([])
    refs = index.all_refs()
    assert len(refs) > 30
    expanded = []
    for address, ref in sorted(refs.items()):
        spec = index.spec(ref)
        if templates_expanded(spec, ref.path):
            expanded.append(address)
        saved = tmp_path / f"{ref.name}.yaml"
        saved.write_text(spec_yaml(spec, ref.path), encoding="utf-8")
        again = load_spec(saved)
        assert again.model_copy(update={"templates_from": spec.templates_from}) == spec, address
    assert "instructdiv/rhyming_word" in expanded  # paraphrase rows, written out once


@pytest.mark.parametrize(("params", "message"), [
    ("{resamples: 0}", "analyses.0.params.resamples: Input should be greater than or equal to 1"),
    ("{resampels: 10}", "analyses.0.params.resampels: Extra inputs are not permitted"),
    ("{sub_questions: hop1}", "analyses.0.params.sub_questions: Input should be a valid list"),
])
def test_analysis_params_checked_when_the_task_loads(tmp_path: Path, params: str,
                                                     message: str) -> None:
    """Issue 17 item 7: a bad analysis parameter is one line naming the file and key from
    `tasks validate`, before any model runs (resamples 0 was an IndexError after the run)."""
    d = _write(tmp_path, {"t.yaml": BASE + "name: t\nanalyses:\n"
                          f"  - {{name: compositionality_gap, params: {params}}}\n"})
    r = run_harness("tasks", "validate", str(d / "t.yaml"))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == f"error: {d / 't.yaml'}:10: {message}"


def test_show_writes_several_lines_as_a_block_and_line_breaks_quoted(tmp_path: Path) -> None:
    """`tasks show` printed a prompt of several lines, and `stop: ["\\n"]`, as folded quoted
    YAML (issue 37, point 7); the output still loads back to the same spec."""
    d = _write(tmp_path, {"t.yaml": BASE.replace('prompt: "Copy: {{ text }}"',
                                                 'prompt: "Copy:\\n  {{ text }}\\n=>"')
                          + "name: t\n"})
    spec = load_spec(d / "t.yaml")
    text = spec_yaml(spec, d / "t.yaml")
    assert "  prompt: |-\n    Copy:\n      {{ text }}\n    =>\n" in text, text
    assert 'stop: ["\\n"]' in text and 'separator: "\\n\\n"' in text
    assert yaml.safe_load(text) == yaml.safe_load(spec_yaml(spec))
    (d / "back.yaml").write_text(text)
    again = load_spec(d / "back.yaml")
    assert again.templates == spec.templates and again.output == spec.output
    shown = spec_yaml(load_spec(REPO / "tasks" / "lengthgen" / "copy.yaml"))
    assert "  prompt: |-\n    Copy the letters.\n    Input: {{ text }}\n    Output:\n" in shown
