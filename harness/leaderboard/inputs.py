"""Reading a leaderboard's inputs: results.json files and leaderboard.json, each problem one
line naming the file; and checking a run's tasks before their names reach a path."""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

from pydantic import ValidationError

from harness.errors import HarnessError, first_problem
from harness.files import sha256_file, sha256_stream
from harness.leaderboard.board_file import LEADERBOARD_KIND, LEADERBOARD_SCHEMA_VERSION, Leaderboard
from harness.leaderboard.paths import samples_problem, task_problem
from harness.run.results import SCHEMA_VERSION, Results, TaskResult


def load_results(path: Path) -> Results:
    """Read and validate one results.json; any problem is one :class:`HarnessError` line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise HarnessError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise HarnessError(f"{path}: cannot read: {e}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise HarnessError(f"{path}: not JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(data, dict) or "schema_version" not in data or "tasks" not in data:
        raise HarnessError(f"{path}: not a genharness results.json (no schema_version/tasks)")
    if data["schema_version"] != SCHEMA_VERSION:
        old = isinstance(data["schema_version"], int) and data["schema_version"] < SCHEMA_VERSION
        hint = f"; bring it up to date with: harness rescore {path.parent}" if old else ""
        raise HarnessError(f"{path}: results schema_version {data['schema_version']!r} is not "
                           f"supported (this harness reads version {SCHEMA_VERSION}){hint}")
    try:
        return Results.model_validate(data)
    except ValidationError as e:
        raise HarnessError(f"{path}: invalid results.json: {first_problem(e)}") from None


ROUNDS_FILE = "rounds.json"  # beside results.json when ``harness eval --target-ci`` sized the run


def sized_target(path: Path, res: Results) -> float | None:
    """The ``--target-ci`` half-width a run was sized with (its rounds.json beside ``path``),
    or None for a run at a fixed limit; a rounds.json that does not belong to the run is one
    line naming it."""
    rounds = path.parent / ROUNDS_FILE
    if not rounds.is_file():
        return None
    try:
        data = json.loads(rounds.read_text(encoding="utf-8"))
        target, last = float(data["target_ci"]), int(data["rounds"][-1]["limit"])
    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
        raise HarnessError(f"{rounds}: not a --target-ci rounds file ({type(e).__name__}: "
                           f"{e})") from None
    if last != res.run.limit_per_bucket:
        raise HarnessError(f"{rounds}: its last round ran {last} items per bucket but "
                           f"{path.name} ran {res.run.limit_per_bucket}: it belongs to another "
                           "run (remove it, or rerun with --target-ci)")
    return target


@dataclass(frozen=True)
class Copy:
    """A per-sample file to copy into the leaderboard."""

    src: Path  # the checked samples file (inside its run folder)
    rel: str  # destination relative to the leaderboard folder
    sha256: str | None  # what results.json records for it (None: nothing recorded)
    results: str  # the results.json that lists it (for messages)


def check_run(path: Path, res: Results, samples: str,
             invalid: list[str]) -> tuple[Results, dict[str, tuple[Path, str | None]]]:
    """The run without its invalid tasks (each reason appended to ``invalid``), and the checked
    samples file of each task that has one (``samples == "copy"`` only)."""
    keep: list[TaskResult] = []
    files: dict[str, tuple[Path, str | None]] = {}
    for i, t in enumerate(res.tasks):
        if (why := task_problem(t.task)) is not None:
            invalid.append(f"{path}: tasks[{i}].task: {t.task!r} is not a safe task address "
                           f"({why})")
            continue
        if samples == "copy":
            src, why = samples_problem(path.parent, t.samples_file)
            if src is None and why is None:  # a board's own copy: <samples_file>.gz
                src, why = samples_problem(path.parent, t.samples_file + ".gz")
            if why is not None:
                invalid.append(f"{path}: tasks[{i}].samples_file: {t.samples_file!r} {why}; "
                               "only files inside the run folder are published")
                continue
            if src is not None:
                if t.samples_sha256 is not None and samples_sha256(src) != t.samples_sha256:
                    invalid.append(f"{path}: tasks[{i}].samples_sha256: {src} does not match "
                                   "it (the samples file changed after the run)")
                    continue
                files[t.task] = (src, t.samples_sha256)
        keep.append(t)
    return res.model_copy(update={"tasks": keep}), files


def horizon_files(path: Path, t: TaskResult) -> list[tuple[Path, str, str]]:
    """The horizon search's samples files of task ``t`` of the run ``path`` (results.json):
    (file, its name in results.json, recorded sha256); a file that is absent is left out, one
    that changed after the run is an error naming it."""
    out = []
    for name, sha in sorted({(h.samples_file, h.samples_sha256) for h in t.horizons
                             if h.samples_file}):
        src, why = samples_problem(path.parent, name)
        if src is None and why is None:
            src, why = samples_problem(path.parent, name + ".gz")
        if why is not None:
            raise HarnessError(f"{path}: {t.task}: horizons[].samples_file: {name!r} {why}")
        if src is None:
            continue
        if samples_sha256(src) != sha:
            raise HarnessError(f"{path}: {t.task}: horizons[].samples_sha256: {src} does not "
                               "match it (the samples file changed after the run)")
        out.append((src, name, sha))
    return out


def samples_sha256(path: Path) -> str:
    """sha256 of a samples file's JSONL bytes: for a ``.gz`` copy, of the decompressed bytes
    (what results.json's ``samples_sha256`` records)."""
    if path.suffix != ".gz":
        return sha256_file(path)
    with gzip.open(path, "rb") as f:
        return sha256_stream(cast(IO[bytes], f))


def open_samples(path: Path) -> IO[bytes]:
    """A samples file's JSONL bytes (decompressed for a ``.gz`` copy)."""
    if path.suffix == ".gz":
        return cast(IO[bytes], gzip.open(path, "rb"))
    return path.open("rb")


def load_leaderboard(path: Path) -> Leaderboard:
    """Read a leaderboard.json back (one-line errors)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise HarnessError(f"{path}: no such file") from None
    except (OSError, ValueError) as e:
        raise HarnessError(f"{path}: cannot read: {e}") from None
    if not isinstance(data, dict) or data.get("kind") != LEADERBOARD_KIND:
        raise HarnessError(f"{path}: not a genharness leaderboard.json")
    if data.get("schema_version") != LEADERBOARD_SCHEMA_VERSION:
        raise HarnessError(f"{path}: leaderboard schema_version {data.get('schema_version')!r} "
                           f"is not supported (expected {LEADERBOARD_SCHEMA_VERSION})")
    try:
        return Leaderboard.model_validate(data)
    except ValidationError as e:
        raise HarnessError(f"{path}: invalid leaderboard.json: {e.errors()[0]['msg']}") from None
