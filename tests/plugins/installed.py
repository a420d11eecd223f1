"""A genharness task package pip-installed into a fresh virtual environment, as a user installs
it: no network, not editable (its task and data files must ship in the wheel)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run(cmd: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(COLUMNS="200", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def site_packages(python: Path) -> Path:
    """The venv's ``purelib`` folder."""
    return Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                     "['purelib'])"]).stdout.strip())


def install_example(example: Path, tmp: Path) -> Path:
    """A fresh venv that sees this checkout and its dependencies (through a .pth file, no pip
    download), with the package at ``example`` pip-installed from a copy of its folder; its
    python."""
    for needed in ("pip", "setuptools"):  # looked up, not imported (setuptools patches distutils)
        if importlib.util.find_spec(needed) is None:
            pytest.skip(f"{needed} is not installed in this environment")
    src = tmp / example.name
    shutil.copytree(example, src, ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__", ".pytest_cache"))
    env_dir = tmp / "venv"
    r = run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)])
    assert r.returncode == 0, r.stderr
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    here = sysconfig.get_paths()["purelib"]  # harness's dependencies, pip and setuptools
    (site_packages(python) / "_genharness_checkout.pth").write_text(f"{REPO}\n{here}\n")
    r = run([str(python), "-m", "pip", "install", "--no-deps", "--no-build-isolation",
             "--no-index", str(src)])
    assert r.returncode == 0, r.stdout + r.stderr
    return python
