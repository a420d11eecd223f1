"""``harness.bounds``: the time limit that stops generators (and the fuzzer's hang alarm), and
the bounded read every data file goes through."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from harness.bounds import read_regular, time_limit
from tests.helpers import within


class Outer(Exception):
    pass


class Inner(Exception):
    pass


def _spin() -> None:
    while True:
        sum(range(100))


def test_the_limit_stops_python_code_and_is_then_disarmed() -> None:
    start = time.monotonic()
    with within(20), pytest.raises(Inner), time_limit(0.3, Inner):
        _spin()
    assert 0.25 < time.monotonic() - start < 5
    with time_limit(0.2, Inner):  # a block that finishes in time: nothing fires later
        pass
    time.sleep(0.4)


def test_an_enclosing_limit_that_ends_first_still_fires() -> None:
    start = time.monotonic()
    with within(20), pytest.raises(Outer), time_limit(0.3, Outer), time_limit(10, Inner):
        _spin()
    assert time.monotonic() - start < 5


def test_an_enclosing_limit_keeps_the_rest_of_its_time() -> None:
    start = time.monotonic()
    with within(20), pytest.raises(Outer), time_limit(1.0, Outer):
        with pytest.raises(Inner), time_limit(0.2, Inner):
            _spin()
        _spin()  # the enclosing limit is armed again, for what was left of it
    assert 0.8 < time.monotonic() - start < 6


def test_read_regular(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"12345")
    assert read_regular(f, 5) == b"12345"
    with pytest.raises(ValueError, match="^is larger than 4 bytes$"):
        read_regular(f, 4)
    os.mkfifo(tmp_path / "pipe")
    with within(10), pytest.raises(ValueError, match="^is a FIFO"):
        read_regular(tmp_path / "pipe", 10)
    with pytest.raises(ValueError, match="^is a device"):
        read_regular("/dev/zero", 10)
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing", 10)
