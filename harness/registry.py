"""One registry pattern for every pluggable kind: generators, metrics, extractors, analyses,
gaps, strategies, model backends and output types.

A ``Registry`` gets its built-ins one of two ways, both imported only when needed:

- **lazy entries**, ``name → "module:object"``: the object is imported when that name is first
  looked up (and made an item by the registry's ``from_object``); nothing else is needed, so a
  backend or an output type is one module plus one entry;
- **a package** whose modules register their items with the registry's decorator
  (``Registry.decorator``) when imported: every module of the package is imported at the first
  lookup, so a new generator, analysis, gap or strategy is one module plus its decorator.

Then come the plugin entry points of the registry's group: an entry point named after the item,
whose module registers it on import or whose object is the item itself (made an item by
``from_object``). A name whose built-in module needs a package that is not installed is one
error line.

A plugin entry point with a built-in's name never silently wins or loses: the built-in is used,
and the first lookup of that name prints a warning naming both (``harness plugins list --check``
fails on it). Unknown names list the near names and point at ``harness <kind>s list``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar

from harness import plugins
from harness.errors import HarnessError, UnknownNameError, did_you_mean

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
P = ParamSpec("P")


def resolve(ref: str) -> object:
    """The object a ``"module:attr.attr"`` reference names (a bare ``"module"``: the module)."""
    module, _, attr = ref.partition(":")
    obj: object = importlib.import_module(module.strip())
    for part in filter(None, attr.strip().split(".")):
        obj = getattr(obj, part)
    return obj


def _same_item(a: object, b: object) -> bool:
    """Two registrations of one function (a module imported twice) are the same item."""
    return getattr(a, "fn", a) is getattr(b, "fn", b)


class Registry(Generic[T]):
    """Named items of one kind, from built-in entries or a built-in package, and one
    entry-point group.

    The ``*_error`` methods word the errors of a lookup; a registry whose messages differ (the
    model backends' name ``--model``) overrides them."""

    def __init__(self, kind: str, group: str | None, *, entries: Mapping[str, str] | None = None,
                 package: str | None = None,
                 from_object: Callable[[str, object], T] | None = None,
                 list_known: bool = False, plural: str | None = None) -> None:
        self.kind = kind  # what an item is called in messages, e.g. "metric"
        self.group = group  # entry-point group plugins register under (None: built in only)
        # built-in name → "module:object" (imported when that name is looked up)
        self.builtin_names: dict[str, str] = dict(entries or {})
        self.package = package  # every module of it registers built-ins with the decorator
        self.items: dict[str, T] = {}  # registered items by name
        self.plural = plural or f"{kind}s"  # command group listing them: harness <plural> list
        self.origins: dict[str, str] = {}  # name → "plugin:<dist>==<version>" (plugin items)
        self._from_object = from_object  # turns an entry's object into an item
        self._list_known = list_known  # unknown-name errors list every known name
        self._checked: set[str] = set()  # names already checked for a shadowing plugin
        self._package_loaded = package is None

    def decorator(self, make: Callable[Concatenate[str, F, P], T]
                  ) -> Callable[Concatenate[str, P], Callable[[F], F]]:
        """The kind's decorator: ``@deco("name", *options)`` registers ``make(name, fn,
        *options)`` and gives the function back unchanged."""

        def register(name: str, /, *args: P.args, **kwargs: P.kwargs) -> Callable[[F], F]:
            def deco(fn: F) -> F:
                self.add(name, make(name, fn, *args, **kwargs))
                return fn

            return deco

        return register

    def item_decorator(self, make: Callable[Concatenate[str, F, P], T]
                       ) -> Callable[Concatenate[str, P], Callable[[F], T]]:
        """Like ``decorator``, but the decorated name becomes the registered item (analyses and
        gaps: calling one checks its parameters as a run does)."""

        def register(name: str, /, *args: P.args, **kwargs: P.kwargs) -> Callable[[F], T]:
            def deco(fn: F) -> T:
                item = make(name, fn, *args, **kwargs)
                self.add(name, item)
                return item

            return deco

        return register

    def add(self, name: str, item: T) -> None:
        """Register *item*; a second, different item under one name is a programming error (the
        same function registered again, by a module imported twice, is not)."""
        old = self.items.get(name)
        if old is not None and not _same_item(old, item):
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
        if name not in self.items:
            return "unknown"
        owner = plugins.plugin_of_module(module_of(self.items[name]))  # under another name
        return owner.origin if owner is not None else f"code:{module_of(self.items[name])}"

    def shadowing(self, name: str) -> list[plugins.Plugin]:
        """The plugin entry points of this group named like the built-in *name* (ignored)."""
        if not self.is_builtin(name):
            return []
        return [p for p in self.entry_points() if p.name == name]

    def _check_shadowing(self, name: str) -> None:
        self._checked.add(name)
        for p in self.shadowing(name):
            plugins.warn(f"{self.kind} {name!r} of plugin {p.dist}=={p.version} ({p.value}) is "
                         f"ignored: the built-in {self.kind} of that name is used; the plugin "
                         "must rename it")

    def load_builtins(self) -> None:
        """Import the built-in package's modules (each registers its items once) and every
        lazy entry."""
        self._load_package()
        for name in self.builtin_names:
            self._load_entry(name)

    def _load_package(self) -> None:
        if self._package_loaded or self.package is None:
            return
        pkg = importlib.import_module(self.package)
        for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
            if not info.ispkg and not info.name.startswith("_"):
                importlib.import_module(f"{self.package}.{info.name}")
        self._package_loaded = True

    def _load_entry(self, name: str) -> None:
        """Import the lazy entry of *name* (when it has one and is not loaded yet)."""
        ref = self.builtin_names.get(name)
        if ref is None or name in self.items:
            return
        try:
            obj = resolve(ref)
        except ImportError as e:
            raise self.missing_dependency_error(name, e) from e
        if name in self.items:  # the module registered it with the decorator on import
            return
        if ":" not in ref or self._from_object is None:  # pragma: no cover - a wiring mistake
            raise HarnessError(f"{self.kind} {name!r}: {ref} did not register it")
        self.items[name] = self._from_object(name, obj)

    def entry_points(self) -> list[plugins.Plugin]:
        """The installed entry points of this registry's group (none without a group)."""
        return plugins.discover(self.group) if self.group else []

    def plugin_names(self) -> list[str]:
        """Names offered by installed plugins (listed without importing them)."""
        return [p.name for p in self.entry_points()]

    def names(self) -> list[str]:
        """Every name ``get`` accepts: built-in, registered, and plugin entry points (lazy
        entries are listed without importing them)."""
        self._load_package()
        return sorted(set(self.builtin_names) | set(self.items) | set(self.plugin_names()))

    def get(self, name: str) -> T:
        """The item called *name*; unknown names raise ``UnknownNameError`` with a hint."""
        if name in self._checked:  # the fast path: once per name and process
            return self.items[name]
        self._load_package()
        self._load_entry(name)
        if name in self.items:
            self._check_shadowing(name)
            return self.items[name]
        plugin = plugins.find(self.group or "", name, kind=self.kind,
                              candidates=self.entry_points())
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
            if others := self.other_names(name, obj):
                plugins.warn(self.misnamed_message(name, plugin, others))
            self._checked.add(name)
            return self.items[name]
        raise self.unknown_error(name, self.names())

    def other_names(self, name: str, obj: object) -> list[str]:
        """Names other than *name* under which *obj* (a plugin entry point's object) is
        registered: a decorator that names it differently from its entry point."""
        return sorted(n for n, item in self.items.items() if n != name and _same_item(item, obj))

    def misnamed_message(self, name: str, plugin: plugins.Plugin, others: list[str]) -> str:
        """The warning (``plugins list --check``: the error) for an entry point whose object
        its code also registers under ``others``."""
        names = " and ".join(repr(o) for o in others)
        return (f"{self.kind} entry point {name!r} of {plugin.dist}=={plugin.version} "
                f"({plugin.value}) is registered by its code as {names} too (@{self.kind}"
                f"({others[0]!r})), so it answers to both names, and {names} only once "
                f"something has imported it; give the decorator the entry point's name")

    # -- the errors of a lookup -----------------------------------------------------------------

    def unknown_error(self, name: str, known: list[str]) -> HarnessError:
        """*name* is neither built in nor offered by a plugin; *known* are the names that are."""
        tail = f"; known {self.plural}: {', '.join(known)}" if self._list_known else ""
        return UnknownNameError(f"unknown {self.kind} {name!r}{did_you_mean(name, known)}{tail}"
                                f" (every {self.kind}: harness {self.plural} list)")

    def missing_dependency_error(self, name: str, e: ImportError) -> HarnessError:
        """The module of the built-in *name* (a lazy entry) needs a package not installed."""
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
