"""Where a task lives (``TaskRef``) and scanning a folder of task files into refs."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from harness.spec.task import TaskSpec


@dataclass(frozen=True)
class TaskRef:
    """Where a task lives: a YAML file, or (plugins) a spec given in Python code."""

    address: str  # "suite/name" (plugins: "<entry-point name>/<name>")
    path: Path  # the YAML file; for a spec given in code, the folder relative paths start from
    origin: str  # "builtin", "include:<dir>" or "plugin:<dist>==<version>"
    spec: TaskSpec | None = field(default=None, compare=False, repr=False)  # given in code

    @property
    def name(self) -> str:
        """The bare task name (file stem)."""
        return self.address.rsplit("/", 1)[-1]

    @property
    def folder(self) -> str:
        """The suite folder (or plugin namespace) the task sits in."""
        return self.address.split("/", 1)[0] if "/" in self.address else ""

    @property
    def base_dir(self) -> Path:
        """The folder that relative paths in the spec (e.g. ``source.path``) start from."""
        return self.path if self.spec is not None else self.path.parent

    @property
    def where(self) -> str:
        """The source, for messages: the YAML file, or the folder of the code that gave it."""
        return str(self.path) if self.spec is None else f"{self.path} (spec given in code)"

    @property
    def is_plugin(self) -> bool:
        """Whether an installed plugin provided the task."""
        return self.origin.startswith("plugin:")


def scan_folder(root: Path, origin: str, prefix: str = "") -> list[TaskRef]:
    """Every ``*.yaml`` under ``root`` as ``<prefix><relative path without .yaml>``; files or
    folders starting with ``_`` are include-only bases and skipped. Nothing is parsed (plain
    string work: thousands of files take milliseconds); symlinked folders are not entered."""
    base = str(root)
    found: list[tuple[list[str], str]] = []
    for dirpath, dirnames, files in os.walk(base):
        rel = os.path.relpath(dirpath, base)
        parts = [] if rel == "." else rel.split(os.sep)
        dirnames[:] = [d for d in dirnames if not d.startswith("_")]
        found.extend(([*parts, f[: -len(".yaml")]], os.path.join(dirpath, f))
                     for f in files if f.endswith(".yaml") and not f.startswith("_"))
    found.sort(key=lambda x: x[0])
    return [TaskRef(prefix + "/".join(parts), Path(path), origin) for parts, path in found]
