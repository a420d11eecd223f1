"""Each test's time, written for ``scripts/ci_times.py`` when ``$GENHARNESS_TEST_TIMES`` names a
folder (``.ci/run`` sets it): one ``pytest-<pid>.json`` per pytest session, holding the session's
``-m`` expression and, per test, its outcome and the seconds of its setup, call and teardown
together. Under pytest-xdist only the controlling process writes (the workers' reports reach
it)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ENV = "GENHARNESS_TEST_TIMES"


class TestTimes:
    """The pytest plugin that adds up and writes each test's time."""

    __test__ = False  # not a test class, whatever its name

    def __init__(self, folder: Path, config: pytest.Config) -> None:
        self.folder = folder
        self.config = config
        self.seconds: dict[str, float] = {}
        self.outcome: dict[str, str] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + report.duration
        if report.when == "call" or report.outcome != "passed":
            self.outcome[report.nodeid] = report.outcome

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        workers = getattr(self.config.option, "numprocesses", None)
        data = {
            "markexpr": self.config.option.markexpr,
            "workers": workers or 0,
            "exitstatus": int(exitstatus),
            "tests": {k: {"seconds": round(v, 3), "outcome": self.outcome.get(k, "passed")}
                      for k, v in self.seconds.items()},
        }
        path = self.folder / f"pytest-{os.getpid()}.json"
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def register(config: pytest.Config) -> None:
    """Add the plugin when ``$GENHARNESS_TEST_TIMES`` is set (and this is not an xdist worker)."""
    folder = os.environ.get(ENV)
    if folder and not hasattr(config, "workerinput"):
        config.pluginmanager.register(TestTimes(Path(folder), config), "genharness-test-times")
