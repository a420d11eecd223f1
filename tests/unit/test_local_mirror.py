"""Issue 47: a dataset source's ``local_path`` is a data file, or a folder whose data files sit
at its top level; subfolders are never searched (a home folder given by mistake is refused at
once, saying what is there, instead of being walked)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.errors import HarnessError
from harness.sources.hf import MAX_ENTRIES, local_files, read_records
from harness.spec.sources import DatasetSource

TASK = """\
name: mirror
description: a dataset read from a local mirror
source: {{type: dataset, path: someone/data, split: test, local_path: {local}}}
fields: {{difficulty: level}}
buckets: {{values: [1, 2]}}
roles: {{id_max: 1}}
templates: [{{id: a, prompt: "{{{{ q }}}}"}}]
output: {{type: generate}}
"""


def _jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_a_folder_with_data_only_in_subfolders_is_refused_by_validate(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _jsonl(home / "projects" / "deep" / "test.jsonl", [{"q": "a", "level": 1, "target": "b"}])
    (home / "cache").mkdir()
    (home / "notes.txt").write_text("x")
    (tmp_path / "mirror.yaml").write_text(TASK.format(local=home))
    r = CliRunner().invoke(app, ["tasks", "validate", str(tmp_path / "mirror.yaml")])
    assert r.exit_code == 2
    assert r.output.strip() == (
        f"error: {tmp_path / 'mirror.yaml'}:3: source.local_path: {home} is a folder without "
        "data files at its top level (found 2 folder(s), 1 other file(s): notes.txt); "
        "subfolders are not searched: give a data file, or a folder of them, or one saved with "
        "save_to_disk")


def test_a_folder_of_data_files_is_read_by_split_without_the_datasets_library(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _jsonl(tmp_path / "m" / "test.jsonl", [{"q": "t1"}, {"q": "t2"}])
    _jsonl(tmp_path / "m" / "train.jsonl", [{"q": "x"}])
    _jsonl(tmp_path / "m" / "sub" / "test.jsonl", [{"q": "never"}])
    monkeypatch.setitem(__import__("sys").modules, "datasets", None)  # importing it fails
    src = DatasetSource(type="dataset", path="someone/data", split="test",
                        local_path=str(tmp_path / "m"))
    assert [r["q"] for r in read_records(src, tmp_path)] == ["t1", "t2"]
    other = src.model_copy(update={"split": "validation"})  # no file names it: all of them
    assert [r["q"] for r in read_records(other, tmp_path)] == ["t1", "t2", "x"]


def test_a_folder_of_too_many_entries_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.mkdir()
    for i in range(MAX_ENTRIES + 1):
        (big / f"f{i}").touch()
    with pytest.raises(HarnessError, match="holds over 10,000 entries"):
        local_files(big, "test")


def test_mixed_formats_are_refused(tmp_path: Path) -> None:
    _jsonl(tmp_path / "m" / "test.jsonl", [{"q": "a"}])
    (tmp_path / "m" / "test.csv").write_text("q\nb\n")
    with pytest.raises(HarnessError, match=r"mixes data files of different formats \(csv, json\)"):
        local_files(tmp_path / "m", "test")
