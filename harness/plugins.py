"""Installed plugins: entry points of other distributions in the ``harness.*`` groups (``GROUPS``).

A package adds tasks, generators, metrics, analyses, model backends, prompting strategies or
answer extractors by declaring entry points:

- ``harness.tasks``: name = namespace (tasks are addressed ``<name>/<task>``); object = a
  package whose folder holds YAML task files, a folder path, or a callable returning either;
- ``harness.generators`` / ``harness.metrics`` / ``harness.analyses`` / ``harness.gaps`` /
  ``harness.extractors``: name = registry name; object = the function;
- ``harness.strategies``: name = ``--strategy`` name; object = a chain function or a strategy;
- ``harness.models``: name = ``--model`` prefix; object = a backend factory.

Discovery only reads installed metadata; nothing is imported until a name is asked for (or a
command lists it). A plugin that fails to import is reported once, on one stderr line naming the
distribution and the error (``warning: plugin DIST (GROUP:NAME) failed to load: Type: message``,
``failed_message``), and skipped wherever it was not asked for by name; where it was asked for,
the same message is the error instead.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points

from harness.errors import HarnessError

# the entry-point groups a plugin package can register under: named here only
TASKS = "harness.tasks"
GENERATORS = "harness.generators"
METRICS = "harness.metrics"
ANALYSES = "harness.analyses"
GAPS = "harness.gaps"
MODELS = "harness.models"
STRATEGIES = "harness.strategies"
EXTRACTORS = "harness.extractors"
GROUPS: tuple[str, ...] = (TASKS, GENERATORS, METRICS, ANALYSES, GAPS, MODELS, STRATEGIES,
                           EXTRACTORS)


class PluginError(HarnessError):
    """A plugin could not be imported or gave something unusable (one line naming it)."""


@dataclass(frozen=True)
class Plugin:
    """One entry point of one installed distribution."""

    group: str  # entry-point group, e.g. "harness.tasks"
    name: str  # entry-point name: task namespace, generator/metric name or model prefix
    value: str  # "module:attribute" the entry point points at
    dist: str  # distribution name, e.g. "genharness-example-plugin"
    version: str  # distribution version
    entry_point: EntryPoint = field(compare=False, repr=False)  # what ``load`` imports

    @property
    def origin(self) -> str:
        """Provenance recorded in results.json: ``plugin:<dist>==<version>``."""
        return f"plugin:{self.dist}=={self.version}"

    @property
    def label(self) -> str:
        """How messages name the plugin: ``<dist> (<group>:<name>)``."""
        return f"{self.dist} ({self.group}:{self.name})"


_DISCOVERED: dict[str, list[Plugin]] = {}
_LOADED: dict[Plugin, object] = {}
_FAILED: dict[Plugin, str] = {}
_WARNED: set[str] = set()


def from_entry_point(group: str, ep: EntryPoint) -> Plugin:
    """The ``Plugin`` of one entry point (its distribution read from metadata)."""
    dist = getattr(ep, "dist", None)  # None for entry points built by hand
    return Plugin(group=group, name=ep.name, value=ep.value,
                  dist=(dist.name if dist is not None else None) or "unknown",
                  version=(dist.version if dist is not None else None) or "unknown",
                  entry_point=ep)


def discover(group: str) -> list[Plugin]:
    """Every installed entry point of ``group`` (read from metadata once; nothing imported)."""
    if group not in _DISCOVERED:
        found = [from_entry_point(group, ep) for ep in entry_points(group=group)]
        _DISCOVERED[group] = sorted(found, key=lambda p: (p.name, p.dist))
    return list(_DISCOVERED[group])


def discover_all(groups: Iterable[str] = GROUPS) -> list[Plugin]:
    """Entry points of several groups, group by group."""
    return [p for g in groups for p in discover(g)]


def refresh() -> None:
    """Forget discovered metadata (after installing a package in a running process) and which
    warnings were printed already."""
    _DISCOVERED.clear()
    _WARNED.clear()


def conflict_message(kind: str, name: str, plugins: list[Plugin]) -> str:
    """The one-line error for a name that two distributions both provide."""
    who = " and ".join(f"{p.dist}=={p.version} ({p.value})" for p in plugins)
    return f"{kind} {name!r} is provided by more than one plugin: {who}; uninstall one of them"


def find(group: str, name: str, kind: str | None = None,
         candidates: Iterable[Plugin] | None = None) -> Plugin | None:
    """The entry point called ``name`` in ``group`` (or among ``candidates``); None when no
    plugin provides it. Two distributions providing the same name raise ``PluginError``."""
    pool = discover(group) if candidates is None else candidates
    hits = [p for p in pool if p.name == name]
    if len(hits) > 1:
        raise PluginError(conflict_message(kind or group, name, hits))
    return hits[0] if hits else None


def one_line(exc: BaseException) -> str:
    """``Type: message`` on a single line (newlines in the message collapsed)."""
    msg = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def load(plugin: Plugin) -> object:
    """Import ``plugin`` (once) and return its object; failures raise ``PluginError``."""
    if plugin in _LOADED:
        return _LOADED[plugin]
    if plugin in _FAILED:
        raise PluginError(failed_message(plugin))
    try:
        obj = plugin.entry_point.load()
    except Exception as e:  # any import-time failure belongs to the plugin
        _FAILED[plugin] = one_line(e)
        raise PluginError(failed_message(plugin)) from e
    _LOADED[plugin] = obj
    return obj


def failed_message(plugin: Plugin) -> str:
    """The one message of a plugin that failed to import, the same in every command:
    ``plugin DIST (GROUP:NAME) failed to load: Type: message``."""
    return f"plugin {plugin.label} failed to load: {_FAILED.get(plugin, 'unknown error')}"


def warn(message: str) -> None:
    """Print ``warning: <message>`` on stderr, once per process (one line)."""
    line = "warning: " + " ".join(message.split())
    if line not in _WARNED:
        _WARNED.add(line)
        print(line, file=sys.stderr, flush=True)


def failure(plugin: Plugin) -> str | None:
    """``Type: message`` of the plugin's failed import; None when it did not fail."""
    return _FAILED.get(plugin)


def status(plugin: Plugin) -> str:
    """``not loaded``, ``ok`` or ``error: Type: message``."""
    if plugin in _LOADED:
        return "ok"
    if plugin in _FAILED:
        return f"error: {_FAILED[plugin]}"
    return "not loaded"


def loaded_distributions() -> dict[str, str]:
    """Distribution → version of every plugin imported so far in this process."""
    return {p.dist: p.version for p in sorted(_LOADED, key=lambda p: p.dist)}


def plugin_of_module(module: str) -> Plugin | None:
    """The installed plugin whose package holds ``module`` (None: the harness's or no plugin's):
    a module inside the top-level package of a plugin's entry point belongs to that plugin.
    Several entry points of one distribution share its package; the first one is returned."""
    top = module.partition(".")[0]
    if not top or top == "harness":
        return None
    for p in discover_all():
        if p.value.partition(":")[0].strip().partition(".")[0] == top:
            return p
    return None
