"""One registry pattern for everything a task file names: generators, metrics, analyses.

A ``Registry`` holds the items that built-in modules register with a decorator when imported
(imported lazily, the first time a name is looked up), and falls back to the plugin entry points
of its group: an entry point named after the item, whose module registers it on import or whose
object is the item itself. Built-in modules given as a mapping (name → module) are imported one
by one, only when their own name is looked up (model backends: ``hf:`` never imports vLLM); a
name whose module needs a package that is not installed is one error line.

A plugin entry point with a built-in's name never silently wins or loses: the built-in is used,
and the first lookup of that name prints a warning naming both (``harness plugins list --check``
fails on it). Unknown names list the near names and point at ``harness <kind>s list``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Generic, TypeVar

from harness import plugins
from harness.errors import HarnessError, UnknownNameError, did_you_mean

T = TypeVar("T")


class Registry(Generic[T]):
    """Named items of one kind, from built-in modules and one entry-point group.

    The ``*_error`` methods word the errors of a lookup; a registry whose messages differ (the
    model backends' name ``--model``) overrides them."""

    def __init__(self, kind: str, group: str,
                 builtin_modules: Sequence[str] | Mapping[str, str] = (),
                 from_object: Callable[[str, object], T] | None = None,
                 list_known: bool = False, plural: str | None = None) -> None:
        self.kind = kind  # what an item is called in messages, e.g. "metric"
        self.group = group  # entry-point group plugins register under
        by_name = isinstance(builtin_modules, Mapping)
        # built-in name → the module registering it (imported when that name is looked up);
        # empty when the built-in modules come as a sequence (all imported at the first lookup)
        self.builtin_names: dict[str, str] = (
            dict(builtin_modules) if isinstance(builtin_modules, Mapping) else {})
        self.builtin_modules = tuple(dict.fromkeys(  # modules that register built-ins
            self.builtin_names.values() if by_name else builtin_modules))
        self._by_name = by_name  # built-ins imported one name at a time
        self.items: dict[str, T] = {}  # registered items by name
        self.plural = plural or f"{kind}s"  # command group listing them: harness <plural> list
        self.origins: dict[str, str] = {}  # name → "plugin:<dist>==<version>" (plugin items)
        self._from_object = from_object  # turns a plugin's callable into an item
        self._list_known = list_known  # unknown-name errors list every known name
        self._checked: set[str] = set()  # names already checked for a shadowing plugin

    def add(self, name: str, item: T, same: Callable[[T, T], bool] | None = None) -> None:
        """Register *item*; a second, different item under one name is a programming error."""
        old = self.items.get(name)
        if old is not None and not (same(old, item) if same else old is item):
            raise ValueError(f"{self.kind} {name!r} is already registered by "
                             f"{module_of(old) or 'another module'}")
        self.items[name] = item

    def is_builtin(self, name: str) -> bool:
        """Whether *name* is registered by the harness's own code."""
        if name in self.builtin_names:
            return True
        return name in self.items and module_of(self.items[name]).partition(".")[0] == "harness"

    def origin(self, name: str) -> str:
        """``builtin``, or ``plugin:<dist>==<version>`` of a registered plugin item."""
        if self.is_builtin(name):
            return "builtin"
        if name in self.origins:
            return self.origins[name]
        top = module_of(self.items[name]).partition(".")[0] if name in self.items else ""
        for p in plugins.discover_all():  # registered by a plugin module under another name
            if top and p.value.partition(":")[0].strip().partition(".")[0] == top:
                return p.origin
        return f"code:{module_of(self.items[name])}" if name in self.items else "unknown"

    def shadowing(self, name: str) -> list[plugins.Plugin]:
        """The plugin entry points of this group named like the built-in *name* (ignored)."""
        if not self.is_builtin(name):
            return []
        return [p for p in plugins.discover(self.group) if p.name == name]

    def _check_shadowing(self, name: str) -> None:
        self._checked.add(name)
        for p in self.shadowing(name):
            plugins.warn(f"{self.kind} {name!r} of plugin {p.dist}=={p.version} ({p.value}) is "
                         f"ignored: the built-in {self.kind} of that name is used; the plugin "
                         "must rename it")

    def load_builtins(self) -> None:
        """Import the built-in modules (each registers its items once)."""
        for mod in self.builtin_modules:
            importlib.import_module(mod)

    def _load_builtin(self, name: str) -> None:
        """Import what may register *name*: every built-in module, or by name only its own."""
        if not self._by_name:
            self.load_builtins()
            return
        module = self.builtin_names.get(name)
        if module is None or name in self.items:
            return
        try:
            importlib.import_module(module)
        except ImportError as e:
            raise self.missing_dependency_error(name, e) from e
        if name not in self.items:  # pragma: no cover - a wiring mistake, not a user error
            raise HarnessError(f"{self.kind} {name!r}: module {module} did not register it")

    def plugin_names(self) -> list[str]:
        """Names offered by installed plugins (listed without importing them)."""
        return [p.name for p in plugins.discover(self.group)]

    def names(self) -> list[str]:
        """Every name ``get`` accepts: built-in, registered, and plugin entry points (built-ins
        given by name are listed without importing them)."""
        if not self._by_name:
            self.load_builtins()
        return sorted(set(self.builtin_names) | set(self.items) | set(self.plugin_names()))

    def get(self, name: str) -> T:
        """The item called *name*; unknown names raise ``UnknownNameError`` with a hint."""
        if name in self._checked:  # the fast path: once per name and process
            return self.items[name]
        self._load_builtin(name)
        if name in self.items:
            self._check_shadowing(name)
            return self.items[name]
        plugin = plugins.find(self.group, name, kind=self.kind)
        if plugin is not None:
            try:
                obj = plugins.load(plugin)  # a module using the decorator registers on import
            except plugins.PluginError as e:
                raise self.plugin_error(name, plugin, e) from e
            self.origins[name] = plugin.origin
            if name not in self.items:
                if not callable(obj) or self._from_object is None:
                    raise self.not_callable_error(name, plugin)
                self.items[name] = self._from_object(name, obj)
            self._checked.add(name)
            return self.items[name]
        raise self.unknown_error(name, self.names())

    # -- the errors of a lookup -----------------------------------------------------------------

    def unknown_error(self, name: str, known: list[str]) -> HarnessError:
        """*name* is neither built in nor offered by a plugin; *known* are the names that are."""
        tail = f"; known {self.plural}: {', '.join(known)}" if self._list_known else ""
        return UnknownNameError(f"unknown {self.kind} {name!r}{did_you_mean(name, known)}{tail}"
                                f" (every {self.kind}: harness {self.plural} list)")

    def missing_dependency_error(self, name: str, e: ImportError) -> HarnessError:
        """The module of the built-in *name* (given by name) needs a package not installed."""
        return HarnessError(f"{self.kind} {name!r} needs a package that is not installed ({e})")

    def plugin_error(self, name: str, plugin: plugins.Plugin,
                     e: plugins.PluginError) -> HarnessError:
        """The plugin entry point offering *name* failed to import."""
        return plugins.PluginError(f"{self.kind} {name!r}: {e}")

    def not_callable_error(self, name: str, plugin: plugins.Plugin) -> HarnessError:
        """The plugin entry point offering *name* is neither registered nor callable."""
        return HarnessError(f"{self.kind} {name!r}: plugin {plugin.label}: {plugin.value} is "
                            "not callable")


def module_of(item: object) -> str:
    """The module that defines a registered item (a function, or an object holding one)."""
    fn = getattr(item, "fn", item)
    return str(getattr(fn, "__module__", "") or "")
