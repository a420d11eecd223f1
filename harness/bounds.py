"""Bounded time and bounded reads for work that untrusted input drives.

- ``time_limit``: stop Python code that runs too long (a ``SIGALRM`` timer). Timers nest: an
  enclosing limit (a caller's, or the fuzzer's hang alarm) still fires at its own time. Only
  the main thread of a POSIX process can be stopped this way; elsewhere the block runs
  unbounded. Code inside one long C call (a huge integer power, say) is stopped only when
  that call returns.
- ``read_regular``: the bytes of a regular file, at most a given size: a device (``/dev/zero``),
  a FIFO or a folder is refused before anything is read, and opening never blocks;
  ``read_utf8``: the same, as UTF-8 text; ``check_regular``: the same checks, nothing read.
"""

from __future__ import annotations

import os
import signal
import stat
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def time_limit(seconds: float, error: Callable[[], BaseException]) -> Iterator[None]:
    """Run the block for at most ``seconds``; past that, ``error()`` is raised inside it."""
    if (seconds <= 0 or not hasattr(signal, "setitimer")
            or threading.current_thread() is not threading.main_thread()):
        yield
        return
    start = time.monotonic()
    outer_handler = signal.getsignal(signal.SIGALRM)
    outer_left, outer_interval = signal.getitimer(signal.ITIMER_REAL)
    outer_first = 0 < outer_left <= seconds  # an enclosing timer that fires before ours
    delegated = False

    def on_alarm(signum: int, frame: Any) -> None:
        nonlocal delegated
        if not outer_first:
            raise error()
        delegated = True  # the enclosing timer's turn: do what it would have done
        if callable(outer_handler):
            outer_handler(signum, frame)

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, outer_left if outer_first else seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, outer_handler)
        if outer_left > 0 and not delegated:  # give the enclosing timer the rest of its time
            left = outer_left - (time.monotonic() - start)
            signal.setitimer(signal.ITIMER_REAL, max(left, 1e-6), outer_interval)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_regular(path: Path | str, limit: int) -> int:
    """The size of the regular file ``path`` when it is at most ``limit`` bytes, without
    reading it; ``ValueError`` and ``OSError`` as ``read_regular`` gives them."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"is {_kind(st.st_mode)}, not a regular file")
    if st.st_size > limit:
        raise ValueError(f"is larger than {limit:,} bytes")
    return st.st_size


def read_regular(path: Path | str, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them. ``ValueError`` (its
    message a reason such as ``is a device, not a regular file``) for anything else, and
    ``OSError`` when the file cannot be opened or read."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ValueError(f"is {_kind(mode)}, not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1)  # the size a file claims may be wrong (/proc, growing)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ValueError(f"is larger than {limit:,} bytes")
    return data


def read_utf8(path: Path | str, limit: int) -> str:
    """``read_regular`` decoded as UTF-8; bytes that are not are a ``ValueError`` too (``is not
    UTF-8 text (byte 0xe9 at offset 3)``)."""
    raw = read_regular(path, limit)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"is not UTF-8 text (byte {raw[e.start]:#04x} at offset "
                         f"{e.start:,})") from None
