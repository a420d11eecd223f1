"""Installed-looking distributions written straight to a folder (a ``*.dist-info`` with METADATA
and entry_points.txt, plus modules), and running the ``harness`` command with that folder on
``PYTHONPATH``: plugins without pip, for broken-plugin and name-conflict cases."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Raises on import, after leaving a marker file so tests can tell whether it was imported at all.
BROKEN_MODULE = """\
import os, pathlib
pathlib.Path(os.environ["PLUGIN_MARKERS"], __name__).touch()
raise RuntimeError("boom: this plugin is broken on purpose")
"""

# A --model backend for CLI runs: scripted:empty answers nothing, scripted:TEXT answers TEXT.
SCRIPTED = {"harness.models": {"scripted": "harness.testing:scripted_backend"}}


def make_dist(site: Path, name: str, version: str, entry_points: dict[str, dict[str, str]],
              files: dict[str, str] | None = None) -> Path:
    """Write distribution ``name==version`` into ``site``; ``files`` maps paths under ``site``
    (modules, task files) to their text."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = []
    for group, eps in entry_points.items():
        lines.append(f"[{group}]")
        lines.extend(f"{k} = {v}" for k, v in eps.items())
        lines.append("")
    (info / "entry_points.txt").write_text("\n".join(lines))
    for rel, text in (files or {}).items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return info


def harness(site: Path, *args: str, markers: Path | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m harness ARGS`` with ``site`` on PYTHONPATH (ahead of the repository)."""
    env = {**os.environ, "COLUMNS": "200",
           "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}
    if markers is not None:
        env["PLUGIN_MARKERS"] = str(markers)
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=300)


def warnings_in(stderr: str) -> list[str]:
    """The ``warning:`` lines of a command's stderr."""
    return [ln for ln in stderr.splitlines() if ln.startswith("warning:")]


TASK_YAML = """\
name: {name}
description: Copy letters (a test task).
source: {{type: generator, name: {generator}, per_bucket: 4}}
fields: {{target: target, difficulty: length}}
buckets: {{values: [2, 3, 6]}}
roles: {{id_max: 3}}
templates: [{{id: io, prompt: "Copy: {{{{ text }}}}\\n=>"}}]
output: {{type: generate, max_tokens: 20}}
scoring: {{metric: {metric}}}
suites: {suites}
"""


def task_yaml(name: str, generator: str = "copy", metric: str = "exact_match",
              suites: str = "[]") -> str:
    """A small valid task file (copy letters; lengths 2-3 ID, 6 OOD)."""
    return TASK_YAML.format(name=name, generator=generator, metric=metric, suites=suites)
