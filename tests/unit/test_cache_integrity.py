"""The response cache never turns bad bytes into a score or a traceback: rows carry checksums
(an in-place edit is recomputed), undecodable rows are recomputed, and a damaged file (garbage
mid-file or in the header, truncation, a reshaped or dropped table, a file from before
checksums) is moved aside with one line while the run goes on; ``harness cache info``
survives all of it."""

from __future__ import annotations

import importlib
import json
import os
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from harness.cli.cache_cmd import info as cache_info
from harness.config import RunConfig
from harness.lm import OnDone
from harness.models.cache import CachedLM, ResponseCache
from harness.models.cache_store import DB_NAME, row_checksum
from harness.requests import GenerateRequest, GenerateResponse
from harness.testing import ScriptedLM
from tests.fixtures.fake_model import FakeLM

PROMPTS = [f"prompt number {i:03d} " + "x" * 300 for i in range(300)]  # many pages of rows


class Counting(ScriptedLM):
    """Upper-cases each prompt and counts the requests sent to it."""

    def __init__(self) -> None:
        super().__init__(lambda p: p.upper())
        self.sent = 0

    def generate(self, requests: Sequence[GenerateRequest],
                 on_done: OnDone[GenerateResponse] | None = None) -> list[GenerateResponse]:
        out = []
        for i, r in enumerate(requests):
            self.sent += 1
            out.append(GenerateResponse(r.prompt.upper(), len(r.prompt)))
            if on_done:
                on_done(i, out[-1])
        return out


def reqs(prompts: Sequence[str] = PROMPTS) -> list[GenerateRequest]:
    return [GenerateRequest(p, 8, ("\n",), 0.0) for p in prompts]


def fill(folder: Path) -> None:
    cached = CachedLM(Counting(), ResponseCache(folder))
    cached.generate(reqs())
    cached.close()


def rerun(folder: Path) -> tuple[int, list[str]]:
    """Ask every prompt again: (requests the model got, texts returned)."""
    model = Counting()
    cached = CachedLM(model, ResponseCache(folder))
    out = cached.generate(reqs())
    cached.close()
    return model.sent, [r.text for r in out]


def sql(folder: Path, *statements: str) -> None:
    db = sqlite3.connect(folder / DB_NAME)
    for s in statements:
        db.execute(s)
    db.commit()
    db.close()


def test_an_edited_response_fails_its_checksum_and_is_recomputed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fill(tmp_path)
    sql(tmp_path, "UPDATE responses SET response = replace(response, 'PROMPT NUMBER 007',"
                  " 'the right answer') WHERE response LIKE '%PROMPT NUMBER 007%'")
    db = sqlite3.connect(tmp_path / DB_NAME)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"  # SQLite sees nothing
    db.close()
    sent, texts = rerun(tmp_path)
    assert texts == [p.upper() for p in PROMPTS] and sent == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "1 stored generate responses" in err
    assert "failed their checksum" in err
    assert rerun(tmp_path)[0] == 0  # the recomputed response was stored again, checksummed


@pytest.mark.parametrize("update", [
    "SET response = '{not json'",
    "SET response = '{\"txt\": \"X\", \"n_tokens\": 1}'",  # wrong fields
    "SET response = '{\"text\": 5, \"n_tokens\": 1}'",  # wrong type
    "SET response = '[1, 2]'",
    "SET response = X'00ff'",  # not even text
])
def test_an_undecodable_row_with_a_valid_checksum_is_recomputed(tmp_path: Path,
                                                                update: str) -> None:
    fill(tmp_path)
    key = PROMPTS[5]
    sql(tmp_path, f"UPDATE responses {update} WHERE request LIKE '%{key}%'")
    db = sqlite3.connect(tmp_path / DB_NAME)  # give the row a checksum that matches its bytes
    k, model, method, request, response = db.execute(
        f"SELECT key, model, method, request, response FROM responses "
        f"WHERE request LIKE '%{key}%'").fetchone()
    if isinstance(response, str):
        db.execute("UPDATE responses SET checksum = ? WHERE key = ?",
                   (row_checksum(k, model, method, request, response), k))
    db.commit()
    db.close()
    sent, texts = rerun(tmp_path)
    assert sent == 1 and texts == [p.upper() for p in PROMPTS]


def test_a_row_moved_to_another_key_is_recomputed(tmp_path: Path) -> None:
    """Both rows pass their own checksum, but one now sits under another request's key."""
    fill(tmp_path)
    db = sqlite3.connect(tmp_path / DB_NAME)
    rows = db.execute("SELECT key, model, method, request, response FROM responses "
                      "ORDER BY key LIMIT 2").fetchall()
    (k1, m, meth, _, _), (_, _, _, req2, resp2) = rows
    db.execute("UPDATE responses SET request = ?, response = ?, checksum = ? WHERE key = ?",
               (req2, resp2, row_checksum(k1, m, meth, req2, resp2), k1))
    db.commit()
    db.close()
    sent, texts = rerun(tmp_path)
    assert sent == 1 and texts == [p.upper() for p in PROMPTS]


def _garbage_mid_file(folder: Path) -> None:
    path = folder / DB_NAME
    size = path.stat().st_size
    with path.open("r+b") as f:
        f.seek(size // 2)
        f.write(bytes(range(256)) * 64)


def _garbage_header(folder: Path) -> None:
    with (folder / DB_NAME).open("r+b") as f:
        f.write(b"this is not sqlite" * 8)


def _truncate(folder: Path) -> None:
    os.truncate(folder / DB_NAME, (folder / DB_NAME).stat().st_size // 2)


def _zero_length(folder: Path) -> None:
    os.truncate(folder / DB_NAME, 0)


def _reshaped_table(folder: Path) -> None:
    sql(folder, "DROP TABLE responses", "CREATE TABLE responses (key TEXT, response TEXT)")


def _dropped_table(folder: Path) -> None:
    sql(folder, "DROP TABLE responses")


def _older_harness(folder: Path) -> None:
    sql(folder, "CREATE TABLE old AS SELECT key, model, method, request, response, created "
                "FROM responses", "DROP TABLE responses", "ALTER TABLE old RENAME TO responses")


DAMAGE: dict[str, tuple[Callable[[Path], None], str | None]] = {
    # damage → (how, what the moved-aside line says; None: nothing to move aside)
    "garbage mid-file": (_garbage_mid_file, "is damaged (database disk image is malformed)"),
    "garbage header": (_garbage_header, "cannot be read (file is not a database)"),
    "truncated": (_truncate, "malformed"),
    "zero-length": (_zero_length, None),
    "reshaped table": (_reshaped_table, "has an unexpected responses table"),
    "dropped table": (_dropped_table, None),
    "older harness": (_older_harness, "has no row checksums (written by an older harness)"),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_file_is_moved_aside_and_the_run_goes_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str) -> None:
    how, says = DAMAGE[damage]
    fill(tmp_path)
    how(tmp_path)
    capsys.readouterr()
    sent, texts = rerun(tmp_path)
    assert texts == [p.upper() for p in PROMPTS]
    assert sent == len(PROMPTS) or damage == "garbage mid-file" and sent > 0
    err = capsys.readouterr().err
    aside = sorted(tmp_path.glob(f"{DB_NAME}.corrupt-*"))
    if says is None:
        assert err == "" and aside == []
    else:
        assert err.count("\n") == 1 and says in err
        assert "moved it to responses.sqlite.corrupt-" in err
        assert [p.name for p in aside if not p.name.endswith(("-wal", "-shm"))] == [
            err.split("moved it to ")[1].split()[0]]
    assert rerun(tmp_path)[0] == 0  # the fresh cache holds every response again
    cache_info(cache_dir=tmp_path)
    out = capsys.readouterr().out
    assert f"scripted:scripted  generate  {len(PROMPTS)}" in out
    assert ("moved aside" in out) == (says is not None)


@pytest.mark.parametrize("damage", ["garbage header", "garbage mid-file", "reshaped table"])
def test_cache_info_survives_a_damaged_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            damage: str) -> None:
    fill(tmp_path)
    DAMAGE[damage][0](tmp_path)
    capsys.readouterr()
    cache_info(cache_dir=tmp_path)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert out.startswith(str(tmp_path / DB_NAME))
    if damage != "garbage mid-file":  # a page the count never reads may stay unnoticed
        assert err.count("\n") == 1 and "moved it to" in err and "empty" in out


def test_a_row_with_an_unreadable_model_key_is_listed(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    fill(tmp_path)
    sql(tmp_path, "UPDATE responses SET model = 'garbage' WHERE rowid = 1")
    cache_info(cache_dir=tmp_path)
    assert "(unreadable model key)  generate  1" in capsys.readouterr().out


def test_damage_met_in_the_middle_of_a_run_is_recovered(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    cache = ResponseCache(tmp_path)
    cached = CachedLM(Counting(), cache)
    cached.generate(reqs(PROMPTS[:100]))
    cache._db.execute("DROP TABLE responses")  # as if another process broke the file
    out = cached.generate(reqs(PROMPTS[100:]))  # the first write meets the damage
    assert [r.text for r in out] == [p.upper() for p in PROMPTS[100:]]
    assert "moved it to" in capsys.readouterr().err
    cached.close()
    sent, _ = rerun(tmp_path)
    assert sent == 100  # only the rows written before the damage are asked again


def test_an_edited_response_is_recomputed_in_an_eval(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's probe: an edited response must not change a run's numbers."""
    ev = importlib.import_module("harness.run.evaluate")  # the package exports the function

    models: list[FakeLM] = []

    def load(cfg: RunConfig) -> FakeLM:
        models.append(FakeLM(lambda p: " abc"))
        return models[-1]

    monkeypatch.setattr(ev, "load", load)

    def run(out: str) -> list[dict[str, object]]:
        cfg = RunConfig.model_validate(dict(
            model="fake:x", tasks=["lengthgen/copy"], seed=0, limit_per_bucket=2,
            output_dir=tmp_path / out, cache_dir=tmp_path / "cache"))
        ev.evaluate(cfg)
        data = json.loads((tmp_path / out / "results.json").read_text())
        return [{k: v for k, v in t.items() if k != "samples_sha256"} for t in data["tasks"]]

    first = run("a")
    n = len(models[0].calls)
    db = sqlite3.connect(tmp_path / "cache" / DB_NAME)
    rows = db.execute("SELECT key, request FROM responses").fetchall()
    assert len(rows) == n > 2
    samples = (tmp_path / "a/samples/lengthgen/copy.jsonl").read_text().splitlines()
    target = {r["prompt"]: r["target"] for r in map(json.loads, samples)}
    for key, request in rows[:2]:  # make two wrong answers right, in place
        db.execute("UPDATE responses SET response = ? WHERE key = ?",
                   (json.dumps({"text": target[json.loads(request)["prompt"]],
                                "n_tokens": 1}), key))
    db.commit()
    db.close()
    assert run("b") == first
    assert len(models[1].calls) == 2  # only the two edited rows went back to the model
