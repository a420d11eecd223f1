"""One writer at a time: an exclusive ``flock`` on a lock file that names its holder.

Used for a run's output folder (``rundir.RunLock``) and a leaderboard build
(``leaderboard.paths.BuildLock``). The lock file holds the holder's pid, host and start time,
so a second writer fails at once with one line naming the first. An ``flock`` dies with its
process, so the lock of a killed writer is free again; the file itself is removed on release.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from harness.errors import HarnessError


def os_reason(e: OSError) -> str:
    """The system's reason for an ``OSError`` on one line, e.g. ``No space left on device``."""
    return e.strerror or " ".join(str(e).split()) or type(e).__name__


class HolderLock:
    """An exclusive, non-blocking ``flock`` on ``path``; the messages come from the caller."""

    def __init__(self, path: Path, cannot_create: Callable[[OSError], HarnessError],
                 busy: Callable[[str], HarnessError]) -> None:
        self.path = path  # the lock file (created on acquire, removed on release)
        self._cannot_create = cannot_create  # the error when the file cannot be opened
        self._busy = busy  # the error when another live process holds the lock, given its holder
        self._fd: int | None = None  # open descriptor while held

    def acquire(self) -> None:
        """Take the lock, or raise the caller's error naming the live holder."""
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        while True:
            try:
                fd = os.open(self.path, flags, 0o644)
            except OSError as e:
                raise self._cannot_create(e) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                raise self._busy(holder) from None
            try:  # the file may have been removed by its last holder after we opened it
                same = os.stat(self.path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        started = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        info = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": started})
        os.ftruncate(fd, 0)
        os.pwrite(fd, info.encode() + b"\n", 0)
        self._fd = fd

    def release(self) -> None:
        """Remove the lock file and let go of the lock (idempotent)."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        os.close(self._fd)
        self._fd = None


def _read_holder(fd: int) -> str:
    try:
        info = json.loads(os.pread(fd, 4096, 0).decode() or "{}")
        return f"pid {info['pid']} on {info['host']}, started {info['started']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "pid unknown: it has only just started"
