"""Task providers: the ``harness.tasks`` entry points of installed packages, made into refs.

The entry point's name is the namespace (tasks are addressed ``<name>/<task>``); its object is

- a package: every ``*.yaml`` in the package's folder (subfolders → ``<name>/<sub>/<task>``);
- a folder path (``str`` or ``os.PathLike``);
- a callable taking no arguments that returns a folder path, or a mapping task name →
  ``TaskSpec`` | mapping (validated like a task file) | path of a YAML file. Relative paths (and
  a spec's relative ``source.path``) start from the folder of the module defining the callable.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from harness import plugins
from harness.errors import HarnessError
from harness.plugins import Plugin, PluginError
from harness.spec.task import TaskSpec
from harness.tasks.loader import spec_from_data
from harness.tasks.refs import TaskRef, scan_folder


@dataclass(frozen=True)
class TaskProvider:
    """A source of tasks under one namespace, loaded on first use."""

    name: str  # namespace: its tasks are addressed "<name>/<task>"
    origin: str  # provenance of its tasks, e.g. "plugin:<dist>==<version>"
    label: str  # how messages name it, e.g. "<dist> (harness.tasks:<name>)"
    get: Callable[[], object]  # imports the plugin and returns its object

    def refs(self) -> list[TaskRef]:
        """Import the provider and list its tasks; any failure is one ``PluginError`` line."""
        try:
            return self._refs_of(self.get())
        except PluginError:
            raise
        except HarnessError as e:
            raise PluginError(f"plugin {self.label}: {e}") from e
        except Exception as e:  # whatever the plugin's own code raised
            raise PluginError(f"plugin {self.label}: {plugins.one_line(e)}") from e

    def _refs_of(self, obj: object) -> list[TaskRef]:
        if isinstance(obj, ModuleType):
            return self._folder(_package_dir(obj), Path.cwd())
        if isinstance(obj, (str, os.PathLike)):
            return self._folder(Path(obj), Path.cwd())
        if callable(obj):
            base = _module_dir(obj)
            result = obj()
            if isinstance(result, (str, os.PathLike)):
                return self._folder(Path(result), base)
            if isinstance(result, Mapping):
                return [self._entry(str(k), v, base) for k, v in result.items()]
            raise PluginError(
                f"plugin {self.label}: the callable returned {type(result).__name__}; expected "
                "a folder path or a mapping of task name to TaskSpec, mapping or file path"
            )
        raise PluginError(
            f"plugin {self.label}: entry point is a {type(obj).__name__}; expected a package "
            "with task files, a folder path, or a callable returning tasks"
        )

    def _folder(self, root: Path, base: Path) -> list[TaskRef]:
        root = root if root.is_absolute() else base / root
        if not root.is_dir():
            raise PluginError(f"plugin {self.label}: task folder not found: {root}")
        refs = scan_folder(root, self.origin, prefix=f"{self.name}/")
        if not refs:
            raise PluginError(f"plugin {self.label}: no *.yaml task files in {root}")
        return refs

    def _entry(self, key: str, value: object, base: Path) -> TaskRef:
        address = f"{self.name}/{key}"
        if not key or key.startswith(("_", "/")) or key.endswith("/"):
            raise PluginError(f"plugin {self.label}: bad task name {key!r}")
        if isinstance(value, TaskSpec):
            return TaskRef(address, base, self.origin, spec=value)
        if isinstance(value, Mapping):
            return TaskRef(address, base, self.origin, spec=spec_from_data(value, address))
        if isinstance(value, (str, os.PathLike)):
            path = Path(value) if Path(value).is_absolute() else base / Path(value)
            if not path.is_file():
                raise PluginError(f"plugin {self.label}: task {key!r}: file not found: {path}")
            return TaskRef(address, path, self.origin)
        raise PluginError(
            f"plugin {self.label}: task {key!r} is a {type(value).__name__}; expected a "
            "TaskSpec, a mapping or a file path"
        )


def _package_dir(module: ModuleType) -> Path:
    paths = list(getattr(module, "__path__", []))
    if not paths:
        raise HarnessError(
            f"module {module.__name__} is not a package; point the entry point at a package "
            "whose folder holds the task files, or at a callable"
        )
    return Path(paths[0])


def _module_dir(obj: object) -> Path:
    module = sys.modules.get(getattr(obj, "__module__", "") or "")
    file = getattr(module, "__file__", None)
    return Path(file).resolve().parent if file else Path.cwd()


def from_plugin(plugin: Plugin) -> TaskProvider:
    """A provider for one installed ``harness.tasks`` entry point."""
    return TaskProvider(plugin.name, plugin.origin, plugin.label,
                        functools.partial(plugins.load, plugin))


def installed() -> list[TaskProvider]:
    """Providers for every installed ``harness.tasks`` entry point (nothing imported yet)."""
    return [from_plugin(p) for p in plugins.discover(plugins.TASKS)]
