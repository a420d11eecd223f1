"""One run per output folder: a lock, the folder's owning configuration, and writes that never
follow symbolic links.

``claim`` runs before the model loads. It checks that ``--output-dir`` can be a folder and can
be written, takes the folder's lock (a second live writer fails at once, naming the holder's
pid and start time; the lock of a dead process is free again, since it is an ``flock``), and
compares the run's configuration with the one that owns the folder: the same configuration
resumes (the response cache answers what had finished), another one is refused unless
``overwrite``. Then it removes what the new run would leave stale: ``results.json`` (written
again only once every sample is complete) and samples files of tasks not in this run.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from harness.config import RUN_SPECIFIC, RunConfig
from harness.errors import HarnessError
from harness.filelock import HolderLock, os_reason
from harness.files import write_atomic
from harness.run.public import public_folder

LOCK_NAME = ".harness.lock"  # the folder's lock file (removed when the run ends)
MANIFEST_NAME = ".harness-run.json"  # configuration of the run in progress (removed when done)
RESULTS_NAME = "results.json"
SAMPLES_DIR = "samples"

class OutputError(HarnessError):
    """The output folder cannot be written (message: the path and the system's reason)."""


def run_identity(cfg: RunConfig) -> dict[str, Any]:
    """The options that make two runs the same run (everything but ``RUN_SPECIFIC``); task
    folders in the public form results.json records them in (``public_folder``)."""
    data = cfg.model_dump(mode="json")
    data["include_paths"] = [public_folder(Path(p)).as_posix() for p in cfg.include_paths]
    return {k: v for k, v in data.items() if k not in RUN_SPECIFIC}


def ensure_folder(out: Path) -> None:
    """Create ``out`` (and its parents) and check it can be written; one line when it cannot."""
    for parent in (out, *out.parents):
        if parent.is_symlink() or parent.exists():
            if not parent.is_dir():
                raise OutputError(f"--output-dir {out}: {parent} is a file, not a folder")
            break
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=out, prefix=".harness-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise OutputError(f"--output-dir {out}: cannot write there: {os_reason(e)}") from None


class RunLock(HolderLock):
    """An exclusive ``flock`` on ``<folder>/.harness.lock``, holding the pid and start time."""

    def __init__(self, folder: Path) -> None:
        super().__init__(
            folder / LOCK_NAME,
            lambda e: OutputError(f"--output-dir {folder}: cannot create {LOCK_NAME}: "
                                  f"{os_reason(e)}"),
            lambda holder: HarnessError(
                f"--output-dir {folder}: another harness run is writing there "
                f"({holder}); wait for it to finish or choose another folder"))
        self.folder = folder  # the output folder


def owner(out: Path) -> dict[str, Any] | None:
    """The identity of the run that owns ``out``: the run in progress (its manifest), else the
    finished run (results.json); ``{}`` when samples exist but their run is unknown; None for
    a folder that holds no run."""
    for name, key in ((MANIFEST_NAME, "config"), (RESULTS_NAME, "run")):
        path = out / name
        if not path.is_file():
            continue
        try:
            run = json.loads(path.read_text(encoding="utf-8"))[key]
            return run_identity(RunConfig.model_validate(run))
        except (OSError, ValueError, KeyError, TypeError, ValidationError):
            return {}
    samples = out / SAMPLES_DIR
    if samples.is_dir() and any(p.is_file() for p in samples.rglob("*")):
        return {}
    return None


def _differences(old: dict[str, Any], new: dict[str, Any]) -> str:
    keys = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
    shown = [f"{k} {old.get(k)!r} (now {new.get(k)!r})" for k in keys[:3]]
    return ", ".join(shown) + (f" and {len(keys) - 3} more" if len(keys) > 3 else "")


def _remove(path: Path) -> None:
    """Remove a file, link or folder tree (a link is removed, never followed)."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def claim(cfg: RunConfig, samples_files: set[str], overwrite: bool = False) -> RunLock:
    """Make ``cfg.output_dir`` this run's (see the module docstring) and return its held lock.
    ``samples_files``: the samples paths the run will write, relative to the folder."""
    out = cfg.output_dir
    ensure_folder(out)
    lock = RunLock(out)
    lock.acquire()
    try:
        mine = run_identity(cfg)
        theirs = owner(out)
        if theirs is not None and theirs != mine and not overwrite:
            what = (f"another run's results ({_differences(theirs, mine)})" if theirs
                    else "results of an unknown run")
            raise HarnessError(
                f"--output-dir {out} holds {what}; rerun with the same options to resume, "
                "pass --overwrite to replace them, or choose another folder")
        samples = out / SAMPLES_DIR
        if overwrite and theirs != mine:
            _remove(samples)
        elif samples.is_symlink():
            raise OutputError(f"--output-dir {out}: {samples} is a symbolic link; the harness "
                              "never writes through links: remove it")
        _remove(out / RESULTS_NAME)  # written again only when every sample is complete
        if samples.is_dir():
            for path in sorted(samples.rglob("*"), reverse=True):
                rel = path.relative_to(out).as_posix()
                if (path.is_file() or path.is_symlink()) and rel not in samples_files:
                    path.unlink()
        write_atomic(out / MANIFEST_NAME,
                     json.dumps({"config": cfg.model_dump(mode="json")}, indent=2) + "\n")
    except OSError as e:
        lock.release()
        raise OutputError(f"--output-dir {out}: cannot prepare the folder: "
                          f"{os_reason(e)}") from None
    except BaseException:
        lock.release()
        raise
    return lock


def finish(out: Path) -> None:
    """The run is complete (results.json written): the folder no longer needs its manifest."""
    with contextlib.suppress(FileNotFoundError):
        (out / MANIFEST_NAME).unlink()


def abandon(out: Path) -> None:
    """The run ended before results.json: a folder it wrote no sample into is not claimed
    (its manifest goes), so a mistyped option does not keep the folder from the next run."""
    samples = out / SAMPLES_DIR
    if not (samples.is_dir() and any(p.is_file() for p in samples.rglob("*"))):
        finish(out)


def open_new(path: Path, root: Path) -> IO[bytes]:
    """Open ``path`` (under ``root``) as a new, empty file for writing without following any
    symbolic link: folders between ``root`` and the file that are links are refused, and a
    file or link already at ``path`` is removed first (its target is never touched)."""
    rel = path.parent.relative_to(root)
    at = root
    for part in rel.parts:
        at = at / part
        if at.is_symlink():
            raise OutputError(f"{at} is a symbolic link; the harness never writes through "
                              "links: remove it")
        at.mkdir(exist_ok=True)
    if path.is_symlink() or path.is_file():
        path.unlink()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    return os.fdopen(os.open(path, flags, 0o644), "wb")
