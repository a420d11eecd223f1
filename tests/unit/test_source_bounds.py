"""Issue 26, files and names: a task's sources are read as regular files of bounded size
(``source.path: /dev/zero`` was read forever, a FIFO blocked), a 5,000-character name is one
line (was an ``OSError`` traceback), a dataset whose local path is wrong fails at once when the
hub cannot be reached (was 27 s of retries), and ``leaderboard build --out`` makes the missing
parents of its folder (was ``cannot create .board.lock``)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.errors import HarnessError
from harness.items import build_instances
from harness.tasks.loader import load_spec
from tests.helpers import within

TASKS = Path(__file__).resolve().parents[2] / "tasks"
FILES_TASK = """\
name: rows
description: d
source: {type: files, path: PATH, format: jsonl}
fields: {difficulty: level, target: answer}
buckets: {values: [1, 2]}
roles: {id_max: 1}
templates: [{id: a, prompt: "{{ q }}"}]
output: {type: generate}
"""


def _items(tmp_path: Path, path: str) -> None:
    f = tmp_path / "rows.yaml"
    f.write_text(FILES_TASK.replace("PATH", json.dumps(path)))
    build_instances(load_spec(f), "mine/rows", 0, tmp_path)


@pytest.mark.parametrize(("path", "why"), [("/dev/zero", "is a device, not a regular file"),
                                           (".", "is a folder, not a regular file")])
def test_a_source_that_is_not_a_regular_file_is_one_line(tmp_path: Path, path: str,
                                                          why: str) -> None:
    with within(20), pytest.raises(HarnessError) as info:
        _items(tmp_path, path)
    assert str(info.value).startswith("source.path: ") and str(info.value).endswith(why)


def test_a_fifo_source_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.jsonl")
    with within(20), pytest.raises(HarnessError, match="is a FIFO \\(named pipe\\), not a regular"):
        _items(tmp_path, "pipe.jsonl")


def test_a_task_file_that_is_a_fifo_is_one_line(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    with within(20):
        result = CliRunner().invoke(app, ["tasks", "validate", str(tmp_path / "pipe.yaml")])
    assert result.exit_code == 2
    assert result.output.strip() == (f"error: {tmp_path / 'pipe.yaml'}: is a FIFO (named pipe), "
                                     "not a regular file")


def test_a_source_over_the_size_limit_is_one_line(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import harness.sources.files as files

    (tmp_path / "big.jsonl").write_text(json.dumps({"q": "x" * 100, "level": 1, "answer": "x"}))
    _items(tmp_path, "big.jsonl")
    monkeypatch.setattr(files, "MAX_SOURCE_BYTES", 50)
    with pytest.raises(HarnessError, match="big.jsonl is larger than 50 bytes$"):
        _items(tmp_path, "big.jsonl")


def test_a_non_utf8_source_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "latin.jsonl").write_bytes('{"q": "caf\u00e9", "level": 1}\n'.encode("latin-1"))
    with pytest.raises(HarnessError, match="latin.jsonl is not UTF-8 text \\(byte 0xe9 at offset"):
        _items(tmp_path, "latin.jsonl")


def test_a_very_long_source_path_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(HarnessError) as info:
        _items(tmp_path, "a" * 5000 + ".jsonl")
    msg = str(info.value)
    assert msg.startswith("source.path: cannot read ") and msg.endswith(": File name too long")
    assert "(5," in msg and len(msg) < 400 and "\n" not in msg


def test_a_5000_character_id_stem_is_one_line(tmp_path: Path) -> None:
    f = tmp_path / "stem.yaml"
    f.write_text(f"include: {TASKS / 'compgen' / 'pcfgset_productivity.yaml'}\nname: stem\n"
                 f"source: {{params: {{id_stem: {'a' * 5000}, id_url: null}}}}\n")
    with pytest.raises(HarnessError) as info:
        build_instances(load_spec(f), "mine/stem", 0, tmp_path, 1)
    msg = str(info.value)
    assert msg.startswith("mine/stem: generator 'pcfgset_functions': PCFG SET file not found: ")
    assert "characters)" in msg and "\n" not in msg and len(msg) < 600


def test_a_wrong_local_path_fails_at_once_when_the_hub_is_unreachable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("datasets")
    import datasets.config
    import huggingface_hub.constants

    for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    for module in (datasets.config, huggingface_hub.constants):  # restored after the test
        for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
            if hasattr(module, var):
                monkeypatch.setattr(module, var, getattr(module, var))
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    f = tmp_path / "m5.yaml"
    f.write_text(f"include: {TASKS / 'easy2hard' / 'math500.yaml'}\nname: m5\n"
                 "source: {local_path: '1'}\n")
    start = time.monotonic()
    with within(60), pytest.raises(HarnessError) as info:
        build_instances(load_spec(f), "mine/m5", 0, tmp_path, 1)
    assert time.monotonic() - start < 15  # was 27 s of retries
    msg = str(info.value)
    assert msg.startswith("source: cannot load dataset 'HuggingFaceH4/MATH-500' (split 'test'): "
                          "not in the Hugging Face cache, and the hub cannot be used: "
                          "http://127.0.0.1:9 cannot be reached")
    assert "local mirror source.local_path" in msg and "\n" not in msg


def test_leaderboard_build_makes_the_parents_of_out(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    from harness.leaderboard.build import build
    from tests.unit.test_leaderboard_fixtures import TaskSpecLite, make_results, write_run

    task = TaskSpecLite("lengthgen/addition", [("1", "ID", 10, 8), ("3", "OOD", 10, 2)],
                        gap=(0.6, 0.4, 0.8))
    run = write_run(tmp_path / "run", make_results("alpha", [task]))
    out = tmp_path / "missing" / "parent" / "board"
    build([run], out, png=False)
    assert (out / "leaderboard.json").is_file()
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(HarnessError, match="cannot create its parent folder"):
        build([run], blocker / "sub" / "board", png=False)

