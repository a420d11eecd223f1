"""Where a leaderboard build reads and writes: nothing outside ``--out``, nothing through a link.

Leaderboards are built from results files other people send in, so every name taken from a
results.json is checked before it becomes part of a path:

- a task address must be ``part/part/...`` with parts of letters, digits and ``_ . + -`` that
  do not start with ``.`` (no ``..``, no absolute paths, no odd characters);
- a ``samples_file`` must be a relative path inside its own run folder, also after symbolic
  links are resolved, and a regular file.

Every file is written by :class:`SafeWriter`: its path is built from checked parts, must resolve
inside the build folder, and is created afresh without following links. A build writes into a
new temporary folder next to ``--out`` and swaps it in at the end (:func:`swap_in`), under an
exclusive lock (:class:`BuildLock`): readers see the old leaderboard or the new one, and of two
builds into one folder the second fails at once, naming the first.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path, PurePosixPath
from typing import IO

from harness.errors import HarnessError
from harness.filelock import HolderLock, os_reason
from harness.run.rundir import open_new

# one part of a task address (between slashes)
_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,99}")
_MAX_TASK = 200  # characters in a task address


def task_problem(task: str) -> str | None:
    """Why a task address cannot name files, or None when it is safe."""
    if len(task) > _MAX_TASK:
        return f"longer than {_MAX_TASK} characters"
    if not all(_PART.fullmatch(p) for p in task.split("/")):
        return ("expected parts of letters, digits and _ . + - separated by /, none starting "
                "with '.'")
    return None


def samples_problem(run_dir: Path, samples_file: str) -> tuple[Path | None, str | None]:
    """A run's samples file checked to lie inside ``run_dir``: (resolved path, None), or
    (None, why not). A missing file inside the folder is (None, None): nothing to copy."""
    rel = PurePosixPath(samples_file)
    if not samples_file or rel.is_absolute() or samples_file.startswith("~"):
        return None, "is not a path relative to its run folder"
    if ".." in rel.parts or "\\" in samples_file or "\0" in samples_file:
        return None, "leaves its run folder ('..', '\\' or NUL in it)"
    root = run_dir.resolve()
    path = run_dir / rel
    try:
        real = path.resolve()
    except (OSError, RuntimeError) as e:  # a link loop
        return None, f"cannot be resolved ({e})"
    if not real.is_relative_to(root):
        return None, "is a link that leaves its run folder"
    if not real.exists():
        return None, None
    if not real.is_file():
        return None, "is not a regular file"
    return real, None


class SafeWriter:
    """Writes files under ``root`` only: relative paths of plain parts, checked to resolve
    inside ``root``, each file created afresh without following a link."""

    def __init__(self, root: Path) -> None:
        self.root = root  # the folder everything is written under
        self._real = root.resolve()  # its real location, for the containment check

    def path(self, rel: str) -> Path:
        """``root / rel``, refused unless every part is plain and it resolves inside root."""
        parts = rel.split("/")
        if any(p in ("", ".", "..") or "\0" in p or "\\" in p for p in parts):
            raise HarnessError(f"leaderboard build: refused to write {rel!r}: not a plain "
                               "relative path")
        path = self.root.joinpath(*parts)
        if not path.resolve().is_relative_to(self._real):
            raise HarnessError(f"leaderboard build: refused to write {rel!r}: it resolves "
                               f"outside {self.root}")
        return path

    def open(self, rel: str) -> IO[bytes]:
        """A new, empty file at ``rel`` for writing (links are replaced, never followed)."""
        return open_new(self.path(rel), self.root)

    def write_bytes(self, rel: str, data: bytes) -> Path:
        """Write ``data`` to ``rel``; returns the path."""
        with self.open(rel) as f:
            f.write(data)
        return self.root / rel

    def write_text(self, rel: str, text: str) -> Path:
        """Write ``text`` (UTF-8) to ``rel``; returns the path."""
        return self.write_bytes(rel, text.encode("utf-8"))


def check_out(out: Path) -> None:
    """Refuse an ``--out`` that a build must not replace: a file, a link, or a folder that
    holds something other than a leaderboard."""
    if out.is_symlink():
        raise HarnessError(f"--out {out}: is a symbolic link; give the folder itself (a build "
                           "replaces the folder and never writes through links)")
    if out.exists() and not out.is_dir():
        raise HarnessError(f"--out {out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()):
        marker = out / "leaderboard.json"
        try:
            kind = json.loads(marker.read_text(encoding="utf-8")).get("kind")
        except (OSError, ValueError, AttributeError):
            kind = None
        if marker.is_symlink() or kind != "genharness-leaderboard":
            raise HarnessError(f"--out {out}: the folder is not empty and holds no "
                               "leaderboard.json; a build replaces the whole folder, so give a "
                               "new or empty one")


class BuildLock(HolderLock):
    """An exclusive ``flock`` on ``.<out>.lock`` next to ``--out`` for the length of a build."""

    def __init__(self, out: Path) -> None:
        path = out.parent / f".{out.name}.lock"
        super().__init__(
            path,
            lambda e: HarnessError(f"--out {out}: cannot create {path}: {os_reason(e)}"),
            lambda holder: HarnessError(f"--out {out}: another leaderboard build is writing "
                                        f"there ({holder}); wait for it to finish"))
        self.out = out  # the leaderboard folder

    def __enter__(self) -> BuildLock:
        try:  # the lock file sits next to --out: its folder is made first
            self.out.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise HarnessError(f"--out {self.out}: cannot create its parent folder "
                               f"{self.out.parent}: {os_reason(e)}") from None
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def new_build_folder(out: Path) -> Path:
    """A fresh, empty folder next to ``out`` to build into (mode as for a new folder)."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.build-"))
    except OSError as e:
        raise HarnessError(f"--out {out}: cannot create a folder next to it: "
                           f"{os_reason(e)}") from None
    mask = os.umask(0o022)
    os.umask(mask)
    tmp.chmod(0o777 & ~mask)
    return tmp


def remove_stale(out: Path) -> None:
    """Remove build folders that killed builds left next to ``out`` (call with the lock held:
    only a lock holder creates them, so any found then is stale)."""
    for prefix in (f".{out.name}.build-", f".{out.name}.old-"):
        for stale in out.parent.glob(f"{glob_escape(prefix)}*"):
            if stale.is_dir() and not stale.is_symlink():
                shutil.rmtree(stale, ignore_errors=True)


def glob_escape(text: str) -> str:
    """``text`` with glob metacharacters made literal."""
    return re.sub(r"([*?\[])", r"[\1]", text)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False where the
    system or file system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return int(fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)) == 0


def swap_in(tmp: Path, out: Path) -> None:
    """Put the finished build ``tmp`` at ``out``; the previous leaderboard there is removed.
    Readers see the old folder or the new one, never a mix."""
    try:
        if not out.exists():
            os.rename(tmp, out)
            return
        if _exchange(tmp, out):
            shutil.rmtree(tmp, ignore_errors=True)  # tmp now holds the old leaderboard
            return
        old = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.old-"))
        os.rename(out, old / "board")
        try:
            os.rename(tmp, out)
        except OSError:
            os.rename(old / "board", out)
            raise
        shutil.rmtree(old, ignore_errors=True)
    except OSError as e:
        raise HarnessError(f"--out {out}: cannot put the new leaderboard in place: "
                           f"{os_reason(e)}") from None
