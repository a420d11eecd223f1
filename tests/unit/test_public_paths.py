"""results.json records no machine layout: a local model's path is relative to the working
directory (``./``), the Python environment's packages (``<site-packages>/``) or the home folder
(``~/``); a path elsewhere by its name (``<elsewhere>/``); hub ids pass unchanged."""

from __future__ import annotations

import json
import re
import sysconfig
from pathlib import Path

import pytest

from harness.config import RunConfig
from harness.leaderboard.inputs import load_results
from harness.lm import ModelIdentity
from harness.run.evaluate import evaluate
from harness.run.public import public_folder, public_identity, public_path
from harness.testing import ScriptedLM


def test_public_path_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert public_path(str(tmp_path / "refmodels" / "lstm-s0")) == "./refmodels/lstm-s0"
    assert public_path(str(Path.home() / ".cache" / "x.sqlite")) in (
        "~/.cache/x.sqlite", "./.cache/x.sqlite")  # ./ when the home folder is the cwd
    site = Path(sysconfig.get_paths()["purelib"]) / "llm_pkg" / "m.gguf"
    assert public_path(str(site)) == "<site-packages>/llm_pkg/m.gguf"
    for kept in ("HuggingFaceTB/SmolLM2-135M", "http://127.0.0.1:8000/v1", "refmodels/x", ""):
        assert public_path(kept) == kept
    ident = ModelIdentity(backend="hf", name="refmodels/x", path=str(tmp_path / "refmodels/x"))
    assert public_identity(ident).path == "./refmodels/x" != ident.name
    assert public_identity(ModelIdentity(backend="hf", name="a/b")).path is None


class _LocalModel(ScriptedLM):
    def __init__(self, path: Path) -> None:
        super().__init__(" 0")
        self._path = path

    @property
    def identity(self) -> ModelIdentity:
        return ModelIdentity(backend="hf", name="weights/m", path=str(self._path))


def test_results_json_holds_the_relative_model_path(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = RunConfig.model_validate(dict(model="hf:weights/m", tasks=["lengthgen/parity"], seed=0,
                                        limit_per_bucket=2, output_dir="run"))
    res = evaluate(cfg, model=_LocalModel(tmp_path / "weights" / "m"))
    written = (tmp_path / "run" / "results.json").read_text(encoding="utf-8")
    assert res.model.path == json.loads(written)["model"]["path"] == "./weights/m"
    assert str(tmp_path) not in written  # the run's options hold paths as given (relative)


def test_results_json_records_the_output_folder_in_its_public_form(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--output-dir as an absolute path: results.json records it relative to the working
    directory when it lies under it, else by its name alone; an older file holding the absolute
    path still reads."""
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    assert public_folder(Path("runs/x")) == Path("runs/x") == public_folder(here / "runs" / "x")
    assert public_folder(Path("../away")) == Path("away")
    for out, recorded in ((here / "runs" / "a", "runs/a"), (tmp_path / "away", "away")):
        cfg = RunConfig(model="scripted:x", tasks=["lengthgen/parity"], limit_per_bucket=2,
                        use_cache=False, output_dir=out)
        res = evaluate(cfg, model=ScriptedLM(" 0"))
        written = (out / "results.json").read_text(encoding="utf-8")
        assert json.loads(written)["run"]["output_dir"] == recorded == res.run.output_dir.as_posix()
        assert str(tmp_path) not in written
    old = json.loads(written)
    old["run"]["output_dir"] = str(tmp_path / "away")  # as results.json recorded it before
    (tmp_path / "away" / "results.json").write_text(json.dumps(old), encoding="utf-8")
    assert load_results(tmp_path / "away" / "results.json").run.output_dir == tmp_path / "away"


def test_results_json_holds_no_absolute_path(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 48: task folders (--include-path, the task's origin), the response cache and a
    model path outside the working directory are recorded by name, never as absolute paths; a
    run into the same folder with the same options still resumes."""
    here, away = tmp_path / "here", tmp_path / "away"
    (away / "mytasks").mkdir(parents=True)
    here.mkdir()
    (away / "mytasks" / "par.yaml").write_text(
        "name: par\ndescription: d\nsource: {type: generator, name: parity}\n"
        "fields: {difficulty: length}\nbuckets: {values: [2, 4]}\nroles: {id_max: 2}\n"
        "templates: [{id: a, prompt: '{{ text }} ='}]\noutput: {type: generate}\n")
    monkeypatch.chdir(here)
    cfg = RunConfig(model="scripted:x", tasks=["par"], limit_per_bucket=2,
                    include_paths=[away / "mytasks"], cache_dir=away / "cache",
                    output_dir=here / "run")
    evaluate(cfg, model=_LocalModel(away / "weights" / "m"))
    written = (here / "run" / "results.json").read_text(encoding="utf-8")
    data = json.loads(written)
    assert data["run"]["include_paths"] == ["mytasks"] and data["run"]["cache_dir"] == "cache"
    assert data["tasks"][0]["origin"] == "include:mytasks"
    assert data["model"]["path"] == "<elsewhere>/m"
    assert str(tmp_path) not in written
    again = evaluate(cfg, model=_LocalModel(away / "weights" / "m"))  # resumes: same run
    assert again.tasks[0].samples_sha256 == data["tasks"][0]["samples_sha256"]


LOCAL = re.compile(r"""(?:^|["'\s(>=`])(/(?:work|root|home|tmp|Users|mnt|srv|opt)/)""")
# an ISO date-time, or a Unix time of this century held by a key that names a time
CLOCK = re.compile(r"\b20\d\d-\d\d-\d\dT\d\d:\d\d|\"\w*(?:unix|started|time)\w*\": 1[5-9]\d{8}")


def _committed_matches(pattern: re.Pattern[str]) -> tuple[int, list[str]]:
    """How many committed board and run files were read, and each match of *pattern*."""
    root = Path(__file__).resolve().parents[2] / "leaderboards"
    checked, found = 0, []
    for p in sorted(root.rglob("*")):
        if p.suffix in {".json", ".md", ".html", ".csv"} and p.is_file():
            checked += 1
            found += [f"{p.relative_to(root)}: {m.group(m.lastindex or 0)}"
                      for m in pattern.finditer(p.read_text(encoding="utf-8"))]
    return checked, found


def test_no_committed_board_or_run_names_a_local_path() -> None:
    checked, found = _committed_matches(LOCAL)
    assert checked > 100 and found == []


def test_no_committed_board_or_run_records_a_clock_time() -> None:
    """Committed files carry durations, never the time of day a machine ran them."""
    checked, found = _committed_matches(CLOCK)
    assert checked > 100 and found == []
    assert CLOCK.search('"started_unix": 1795605897.8622') and CLOCK.search("2026-11-25T11:04")
