"""One registry pattern for everything a task file names: generators, metrics, analyses.

A ``Registry`` holds the items that built-in modules register with a decorator when imported
(imported lazily, the first time a name is looked up), and falls back to the plugin entry points
of its group: an entry point named after the item, whose module registers it on import or whose
object is the item itself.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from harness.errors import HarnessError, UnknownNameError, did_you_mean

T = TypeVar("T")


class Registry(Generic[T]):
    """Named items of one kind, from built-in modules and one entry-point group."""

    def __init__(self, kind: str, group: str, builtin_modules: Sequence[str] = (),
                 from_object: Callable[[str, object], T] | None = None,
                 list_known: bool = False) -> None:
        self.kind = kind  # what an item is called in messages, e.g. "metric"
        self.group = group  # entry-point group plugins register under
        self.builtin_modules = tuple(builtin_modules)  # modules that register built-ins
        self.items: dict[str, T] = {}  # registered items by name
        self._from_object = from_object  # turns a plugin's callable into an item
        self._list_known = list_known  # unknown-name errors list every known name

    def add(self, name: str, item: T, same: Callable[[T, T], bool] | None = None) -> None:
        """Register *item*; a second, different item under one name is a programming error."""
        old = self.items.get(name)
        if old is not None and not (same(old, item) if same else old is item):
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self.items[name] = item

    def load_builtins(self) -> None:
        """Import the built-in modules (each registers its items once)."""
        for mod in self.builtin_modules:
            importlib.import_module(mod)

    def plugin_names(self) -> list[str]:
        """Names offered by installed plugins (listed without importing them)."""
        from harness import plugins

        return [p.name for p in plugins.discover(self.group)]

    def names(self) -> list[str]:
        """Every name ``get`` accepts: built-in, registered, and plugin entry points."""
        self.load_builtins()
        return sorted(set(self.items) | set(self.plugin_names()))

    def get(self, name: str) -> T:
        """The item called *name*; unknown names raise ``UnknownNameError`` with a hint."""
        self.load_builtins()
        if name in self.items:
            return self.items[name]
        from harness import plugins

        plugin = plugins.find(self.group, name, kind=self.kind)
        if plugin is not None:
            try:
                obj = plugins.load(plugin)  # a module using the decorator registers on import
            except plugins.PluginError as e:
                raise plugins.PluginError(f"{self.kind} {name!r}: {e}") from e
            if name in self.items:
                return self.items[name]
            if not callable(obj) or self._from_object is None:
                raise HarnessError(
                    f"{self.kind} {name!r}: plugin {plugin.label}: {plugin.value} is not callable"
                )
            self.items[name] = self._from_object(name, obj)
            return self.items[name]
        known = self.names()
        tail = f"; known {self.kind}s: {', '.join(known)}" if self._list_known else ""
        raise UnknownNameError(f"unknown {self.kind} {name!r}{did_you_mean(name, known)}{tail}")
