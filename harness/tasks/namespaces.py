"""The task namespace a folder of task files has once its package is installed.

An installed package's tasks are addressed ``<entry-point name>/<task>``. A folder of a checkout
(``check_task_package(Path(...))``, ``harness tasks validate DIR``) is not installed, so its
namespace is read from the package's ``pyproject.toml``: the ``harness.tasks`` entry point whose
object is the package that this folder is (``mybench = "harness_example.tasks"`` names
``src/harness_example/tasks``, in any layout). An entry point naming a callable or a module
attribute cannot be told apart without importing it, so it names no folder here.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from harness.tasks.refs import scan_folder

__all__ = ["folder_namespace", "package_folder", "package_addresses", "uninstalled_package"]


def folder_namespace(folder: Path) -> str | None:
    """The namespace of the tasks folder ``folder``: the name of the ``harness.tasks`` entry
    point that names it in the nearest ``pyproject.toml`` above it; None when none does."""
    folder = folder.resolve()
    for parent in (folder, *folder.parents):
        if (parent / "pyproject.toml").is_file():
            return _named(parent, folder)
    return None


def package_folder(path: Path) -> tuple[Path, str] | None:
    """The tasks folder ``path`` (a task file, or a folder) lies in, and its namespace: the
    nearest folder above ``path`` that a ``harness.tasks`` entry point names; None if none."""
    path = path.resolve()
    for parent in (path, *path.parents) if path.is_dir() else path.parents:
        if (parent / "pyproject.toml").is_file():
            return None  # the package's root: its tasks folder is below
        name = folder_namespace(parent)
        if name is not None:
            return parent, name
    return None


def package_addresses(path: Path) -> list[str]:
    """The installed addresses of the tasks of the package folder ``path`` lies in (none
    outside a package folder): what an ``items_from`` in it may name."""
    found = package_folder(path)
    if found is None:
        return []
    folder, name = found
    return [r.address for r in scan_folder(folder, "", prefix=f"{name}/")]


def uninstalled_package(path: Path) -> tuple[Path, str] | None:
    """The package (its folder and name) whose checkout holds ``path``, when that package is
    not installed: the blocks it registers (metrics, generators, extractors) are then unknown
    until it is; None otherwise (no ``pyproject.toml`` above, or the package is installed)."""
    from importlib import metadata

    path = path.resolve()
    for parent in (path, *path.parents) if path.is_dir() else path.parents:
        if (parent / "pyproject.toml").is_file():
            name = _project_name(parent / "pyproject.toml")
            if name is None:
                return None
            try:
                metadata.distribution(name)
            except metadata.PackageNotFoundError:
                return parent, name
            return None
    return None


def _project_name(pyproject: Path) -> str | None:
    project = _toml(pyproject).get("project")
    name = project.get("name") if isinstance(project, dict) else None
    return name if isinstance(name, str) else None


def _toml(pyproject: Path) -> dict[str, Any]:
    data: dict[str, Any] = {}
    if sys.version_info >= (3, 11):  # before, no tomllib: nothing is read
        import tomllib

        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return {}
    return data


def _named(root: Path, folder: Path) -> str | None:
    """The entry point of ``root/pyproject.toml`` whose package is ``folder``."""
    for name, value in _task_entry_points(root / "pyproject.toml").items():
        if not isinstance(value, str) or ":" in value:
            continue  # a callable or an attribute: its folder is not known without importing
        parts = tuple(value.strip().split("."))
        tail = folder.parts[-len(parts):]
        if tail == parts and folder.is_relative_to(root):
            return name
    return None


def _task_entry_points(pyproject: Path) -> dict[str, Any]:
    project = _toml(pyproject).get("project")
    eps = project.get("entry-points") if isinstance(project, dict) else None
    tasks = eps.get("harness.tasks") if isinstance(eps, dict) else None
    return tasks if isinstance(tasks, dict) else {}
