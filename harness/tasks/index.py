"""Task index: built-in tasks, ``--include-path`` folders and installed plugins, by name.

Files are indexed by path without being parsed: ``<root>/<suite>/<name>.yaml`` is addressed as
``suite/name``. Files whose name starts with ``_`` are include-only bases, not tasks. A task's
suites are its folder plus the ``suites:`` it lists (parsed only when a suite name is asked for).

Plugin tasks (``harness.tasks`` entry points, see ``harness.tasks.providers``) are addressed
``<entry-point name>/<task>`` and loaded lazily: an address ``ns/task`` imports only the plugins
named ``ns``; a bare name or a suite name imports every task plugin, since any of them could
define it. A plugin that fails is a one-line warning and is skipped. A plugin task with the
address of a built-in or ``--include-path`` task is skipped with a warning naming both (the
built-in keeps working). The same address from two plugins is an error naming both, raised when
that address (or its name or suite) is used; ``harness tasks list`` warns and lists the rest.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness import plugins
from harness.errors import HarnessError, UnknownNameError, did_you_mean
from harness.plugins import PluginError
from harness.spec.task import TaskSpec
from harness.tasks.loader import load_spec
from harness.tasks.providers import TaskProvider, installed
from harness.tasks.refs import TaskRef, scan_folder
from harness.tasks.summaries import SummaryCache, TaskSummary, code_stamp

__all__ = ["TaskIndex", "TaskRef", "builtin_tasks_dir"]


def builtin_tasks_dir() -> Path:
    """The built-in ``tasks/`` folder: inside the wheel, or at the root of a checkout."""
    here = Path(__file__).resolve().parent.parent
    for cand in (here / "_builtin_tasks", here.parent / "tasks"):
        if cand.is_dir():
            return cand
    raise HarnessError("built-in tasks folder not found (broken installation?)")


def _source(ref: TaskRef) -> str:
    return f"{ref.origin} ({ref.where})"


def shadowed_message(address: str, kept: TaskRef, plugin: TaskRef) -> str:
    """The warning for a plugin task whose address a built-in or --include-path task has."""
    return (f"plugin task {address!r} of {_source(plugin)} clashes with {_source(kept)}, "
            "which is used; the plugin must rename its task or namespace")


def conflict_error(address: str, refs: Sequence[TaskRef]) -> HarnessError:
    """The one-line error for an address defined by more than one source."""
    return HarnessError(f"task {address!r} is defined twice: "
                        + " and ".join(_source(r) for r in refs))


@dataclass
class TaskIndex:
    """All known tasks by address; specs are parsed on first use and kept."""

    refs: dict[str, TaskRef]  # address → where it lives (plugin tasks once their plugin loaded)
    providers: list[TaskProvider] | None = None  # plugins not loaded yet; None: not discovered
    _specs: dict[str, TaskSpec] = field(default_factory=dict, repr=False)
    _conflicts: dict[str, list[TaskRef]] = field(default_factory=dict, repr=False)
    _broken: dict[str, str] = field(default_factory=dict, repr=False)  # invalid plugin tasks
    _failed: dict[str, str] = field(default_factory=dict, repr=False)  # namespace → its error
    _summaries: dict[str, TaskSummary] = field(default_factory=dict, repr=False)
    # plugin tasks skipped because a built-in or --include-path task has their address
    shadowed: dict[str, list[TaskRef]] = field(default_factory=dict, repr=False)

    @classmethod
    def build(cls, include_paths: Iterable[Path] = (),
              providers: Iterable[TaskProvider] | None = None) -> TaskIndex:
        """Index built-in tasks and every ``--include-path`` folder; ``providers`` (default:
        the installed ``harness.tasks`` plugins, discovered on first need) load lazily."""
        refs: dict[str, TaskRef] = {}
        roots = [(builtin_tasks_dir(), "builtin")]
        for inc in include_paths:
            if not inc.is_dir():
                raise HarnessError(f"--include-path: not a folder: {inc}")
            roots.append((inc, f"include:{inc}"))
        for root, origin in roots:
            for ref in scan_folder(root, origin):
                if ref.address in refs:
                    raise conflict_error(ref.address, [refs[ref.address], ref])
                refs[ref.address] = ref
        return cls(refs, None if providers is None else list(providers))

    # --- plugins -----------------------------------------------------------------------------

    def _pending(self) -> list[TaskProvider]:
        if self.providers is None:
            self.providers = installed()
        return self.providers

    def load_providers(self, names: Collection[str] | None = None, strict: bool = False,
                       quiet: bool = False) -> None:
        """Load the pending plugins named in ``names`` (all when None) and index their tasks.

        A plugin that fails is a one-line warning and is skipped (``strict``: raise instead;
        ``quiet``: no warning, the caller reports the failure)."""
        pending = self._pending()
        todo = [p for p in pending if names is None or p.name in names]
        if not todo:
            return
        self.providers = [p for p in pending if p not in todo]
        for prov in todo:
            try:
                new = prov.refs()
            except PluginError as e:
                if strict:
                    raise
                self._failed.setdefault(prov.name, str(e))
                if not quiet:
                    plugins.warn(str(e))
                continue
            for ref in new:
                self._add(ref)

    def _add(self, ref: TaskRef) -> None:
        old = self.refs.get(ref.address)
        if ref.is_plugin and old is not None and not old.is_plugin:
            # a built-in or --include-path task keeps its address: the plugin's is skipped
            self.shadowed.setdefault(ref.address, []).append(ref)
            plugins.warn(f"{shadowed_message(ref.address, old, ref)} (skipped)")
            return
        if ref.address in self._conflicts:
            self._conflicts[ref.address].append(ref)
        elif ref.address in self.refs:
            self._conflicts[ref.address] = [self.refs.pop(ref.address), ref]
        else:
            self.refs[ref.address] = ref

    def check_conflicts(self, addresses: Iterable[str] | None = None) -> None:
        """Raise the conflict error of the first of ``addresses`` (default: any) in conflict."""
        wanted = self._conflicts if addresses is None else set(addresses)
        for address, refs in self._conflicts.items():
            if address in wanted:
                raise conflict_error(address, refs)

    def all_refs(self) -> dict[str, TaskRef]:
        """Every task, plugins included (imports every task plugin). An address that two
        plugins define is a warning naming both and left out (using it is an error)."""
        self.load_providers()
        for address, refs in self._conflicts.items():
            plugins.warn(f"{conflict_error(address, refs)} (left out; using it is an error)")
        return dict(self.refs)

    # --- specs and suites --------------------------------------------------------------------

    def spec(self, ref: TaskRef) -> TaskSpec:
        """The validated spec of ``ref`` (parsed once)."""
        if ref.address not in self._specs:
            if ref.spec is not None:
                from harness.tasks.checks import check_spec

                check_spec(ref.spec, ref.address)
                self._specs[ref.address] = ref.spec
            else:
                self._specs[ref.address] = load_spec(ref.path)
        return self._specs[ref.address]

    def usable_spec(self, ref: TaskRef) -> TaskSpec | None:
        """``spec(ref)``, except that an invalid plugin task is a warning and gives None."""
        if ref.address in self._broken:
            return None
        try:
            return self.spec(ref)
        except HarnessError as e:
            if not ref.is_plugin:
                raise
            self._broken[ref.address] = f"plugin task {ref.address} ({ref.origin}): {e}"
            plugins.warn(f"{self._broken[ref.address]} (skipped)")
            return None

    def summaries(self, refs: Iterable[TaskRef], skip_invalid: bool = False
                  ) -> dict[str, TaskSummary]:
        """Listing facts of ``refs`` by address, from the on-disk cache where the files are
        unchanged (see ``harness.tasks.summaries``), else parsed; invalid plugin tasks are
        warnings and left out, other invalid tasks raise as ``spec`` does (``skip_invalid``:
        a one-line warning each, and left out: ``tasks list``)."""
        todo = [r for r in refs if r.address not in self._summaries]
        cache: SummaryCache | None = None
        if any(r.spec is None for r in todo):
            found = sorted(f"{p.group}:{p.name}:{p.origin}" for p in plugins.discover_all())
            cache = SummaryCache(code_stamp() + "\0" + "\0".join(found))
        try:
            for ref in todo:
                path = os.path.abspath(ref.path) if ref.spec is None else None
                hit = cache.get(path) if cache is not None and path is not None else None
                if hit is None:
                    try:
                        spec = self.usable_spec(ref)
                    except HarnessError as e:
                        if not skip_invalid:
                            raise
                        first = str(e).splitlines()[0] if str(e) else type(e).__name__
                        plugins.warn(f"{first} (skipped: {ref.address})")
                        continue
                    if spec is None:
                        continue
                    hit = TaskSummary.of(spec)
                    if cache is not None and path is not None:
                        cache.put(path, spec, hit)
                self._summaries[ref.address] = hit
        finally:
            if cache is not None:
                cache.save()
        return {r.address: self._summaries[r.address] for r in refs
                if r.address in self._summaries}

    def suites(self) -> dict[str, list[str]]:
        """Suite name → task addresses of the tasks indexed so far (from task summaries)."""
        out: dict[str, list[str]] = {}
        for address, summary in self.summaries(list(self.refs.values())).items():
            ref = self.refs[address]
            for s in {ref.folder, *summary.suites} - {""}:
                out.setdefault(s, []).append(address)
        return {k: sorted(v) for k, v in sorted(out.items())}

    def _suite_conflicts(self, name: str) -> None:
        for address, refs in self._conflicts.items():
            declared: set[str] = set()
            for r in refs:  # parsed without caching: the cache is by address
                with contextlib.suppress(HarnessError):  # an invalid task declares nothing
                    declared.update((r.spec or load_spec(r.path)).suites)
            if name == refs[0].folder or name == refs[0].name or name in declared:
                raise conflict_error(address, refs)

    # --- resolving names ---------------------------------------------------------------------

    def resolve(self, names: Sequence[str]) -> list[TaskRef]:
        """Task addresses, unambiguous bare names and suite names → tasks, without duplicates."""
        out: dict[str, TaskRef] = {}
        for raw in names:
            for name in (n.strip() for n in raw.split(",")):
                if name:
                    for ref in self._resolve_one(name):
                        out.setdefault(ref.address, ref)
        if not out:
            raise HarnessError("--tasks: no task names given")
        return list(out.values())

    def _resolve_one(self, name: str) -> list[TaskRef]:
        namespace = name.split("/", 1)[0]
        # an address: only the plugins of its namespace can define it; a bare name or a suite:
        # any plugin could. A failed plugin is a warning, except the one ``name`` asks for by
        # its namespace: that failure is the error (printed once), unless the name resolves
        self.load_providers({namespace} if "/" in name else None, quiet=True)
        for ns, message in self._failed.items():
            if ns != namespace:
                plugins.warn(message)
        if "/" in name:
            self.check_conflicts([name])
        found = self._lookup(name, namespace)
        if namespace in self._failed:
            plugins.warn(self._failed[namespace])
        return found

    def _lookup(self, name: str, namespace: str) -> list[TaskRef]:
        if name in self.refs:
            return [self.refs[name]]
        if "/" not in name:
            self._suite_conflicts(name)
        bare = [r for r in self.refs.values() if r.name == name]
        folder = [r for r in self.refs.values() if r.folder == name]
        if len(bare) == 1 and not folder:
            return bare
        if len(bare) > 1:
            raise HarnessError(
                f"task name {name!r} is ambiguous: {', '.join(sorted(r.address for r in bare))} "
                "(give one of these addresses)"
            )
        suites = self.suites()
        if namespace in self._failed and name not in suites:  # asked for a broken plugin's tasks
            raise HarnessError(self._failed[namespace])
        invalid = sorted(a for a in self._broken if a.split("/", 1)[0] == name)
        if invalid:  # asked for its own namespace: an error (the problems are warned above)
            raise HarnessError(f"{name}: invalid plugin task(s) {', '.join(invalid)} (their "
                               "problems are in the warning above)")
        if name in suites:
            return [self.refs[a] for a in suites[name]]
        known = [*self.refs, *(r.name for r in self.refs.values()), *suites]
        raise UnknownNameError(f"unknown task or suite {name!r}" + did_you_mean(name, known))
