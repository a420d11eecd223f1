"""The wheel as a plugin author gets it: py.typed, LICENSE and the task schema ship; the example
plugin type-checks strictly against the installed wheel (not this checkout); the guide's
package-data globs ship task files in subfolders."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path

import pytest

from harness.schema import shipped_texts

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "plugin-package"


def _run(cmd: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "MYPYPATH")}
    env.update(COLUMNS="200", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    # never the checkout as working directory: `python -m`/`-c` would import its harness
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd or tempfile.gettempdir(),
                          env=env, timeout=600)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """genharness built into a wheel with hatchling, offline (no build isolation)."""
    if importlib.util.find_spec("hatchling") is None:
        pytest.fail("hatchling is not installed: it is in the dev extra (pip install -e '.[dev]')")
    out = tmp_path_factory.mktemp("wheel")
    r = _run([sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(out)],
             cwd=REPO)
    assert r.returncode == 0, r.stdout + r.stderr
    (whl,) = out.glob("genharness-*.whl")
    return whl


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed; the harness's dependencies, pip, setuptools and
    mypy come from this environment through a .pth file (after the venv's own site-packages,
    so `import harness` is the wheel's)."""
    tmp = tmp_path_factory.mktemp("packaging")
    env_dir = tmp / "venv"
    r = _run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)])
    assert r.returncode == 0, r.stderr
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                         "['purelib'])"]).stdout.strip())
    (purelib / "_deps_from_dev_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    r = _run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)])
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run([str(python), "-c", "import harness; print(harness.__file__)"])
    assert r.stdout.strip() == str(purelib / "harness" / "__init__.py"), r.stdout + r.stderr
    return python


def test_wheel_ships_typing_marker_license_and_schema(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        assert "harness/py.typed" in names
        (license_file,) = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        assert "Apache License" in z.read(license_file).decode()
        assert "Version 2.0, January 2004" in z.read(license_file).decode()
        for name, text in shipped_texts().items():
            assert z.read(f"harness/schema/{name}").decode() == text
        assert "harness/_builtin_tasks/lengthgen/_sequence.yaml" in names
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        assert "License-Expression: Apache-2.0" in z.read(metadata).decode()
    assert "Apache License" in (REPO / "LICENSE").read_text()


def test_example_plugin_type_checks_strictly_against_the_wheel(venv: Path,
                                                               tmp_path: Path) -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.fail("mypy is not installed: it is in the dev extra")
    src = tmp_path / "src"
    shutil.copytree(EXAMPLE / "src", src, ignore=shutil.ignore_patterns("__pycache__"))
    r = _run([str(venv), "-m", "mypy", "--strict", "--no-incremental",
              "--cache-dir", str(tmp_path / "mypy-cache"), "harness_example"], cwd=src)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Success: no issues found" in r.stdout


def test_the_guides_package_data_globs_ship_subfolders(venv: Path, tmp_path: Path) -> None:
    guide = (REPO / "docs" / "writing-a-task-package.md").read_text()
    assert 'harness_example = ["py.typed", "tasks/**/*.yaml"]' in guide
    assert '"tasks/*.yaml"' not in guide
    pkg = tmp_path / "plugin-package"
    shutil.copytree(EXAMPLE, pkg, ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__", ".pytest_cache"))
    assert 'harness_example = ["py.typed", "tasks/**/*.yaml"]' in (
        pkg / "pyproject.toml").read_text()
    sub = pkg / "src" / "harness_example" / "tasks" / "long" / "deeper"
    sub.mkdir(parents=True)
    task = (pkg / "src" / "harness_example" / "tasks" / "digitsum.yaml").read_text()
    (sub / "digitsum_long.yaml").write_text(task.replace("name: digitsum", "name: digitsum_long"))
    r = _run([str(venv), "-m", "pip", "install", "--no-deps", "--no-build-isolation",
              "--no-index", str(pkg)])
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run([str(venv), "-m", "harness", "tasks", "list"])
    assert r.returncode == 0, r.stderr
    listed = {ln.split()[0] for ln in r.stdout.splitlines()[3:] if ln.strip()}
    assert {"mybench/digitsum", "mybench/long/deeper/digitsum_long"} <= listed, r.stdout
