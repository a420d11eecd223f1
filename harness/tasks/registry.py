"""Task index: built-in tasks, ``--include-path`` folders (and, later, plugins), by name.

Files are indexed by path without being parsed: ``<root>/<suite>/<name>.yaml`` is addressed as
``suite/name``. Files whose name starts with ``_`` are include-only bases, not tasks. A task's
suites are its folder plus the ``suites:`` it lists (parsed only when a suite name is asked for).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import HarnessError, UnknownNameError, did_you_mean
from harness.tasks.loader import load_spec
from harness.tasks.spec import TaskSpec


@dataclass(frozen=True)
class TaskRef:
    """Where a task lives."""

    address: str  # "suite/name"
    path: Path  # the YAML file
    origin: str  # "builtin" or "include:<dir>"

    @property
    def name(self) -> str:
        """The bare task name (file stem)."""
        return self.address.rsplit("/", 1)[-1]

    @property
    def folder(self) -> str:
        """The suite folder the file sits in."""
        return self.address.split("/", 1)[0] if "/" in self.address else ""


def builtin_tasks_dir() -> Path:
    """The built-in ``tasks/`` folder: inside the wheel, or at the root of a checkout."""
    here = Path(__file__).resolve().parent.parent
    for cand in (here / "_builtin_tasks", here.parent / "tasks"):
        if cand.is_dir():
            return cand
    raise HarnessError("built-in tasks folder not found (broken installation?)")


def _scan(root: Path, origin: str) -> list[TaskRef]:
    refs = []
    for p in sorted(root.rglob("*.yaml")):
        rel = p.relative_to(root).with_suffix("")
        if any(part.startswith("_") for part in rel.parts):
            continue
        refs.append(TaskRef(rel.as_posix(), p, origin))
    return refs


@dataclass
class TaskIndex:
    """All known tasks by address; specs are parsed on first use and kept."""

    refs: dict[str, TaskRef]  # address → where it lives
    _specs: dict[str, TaskSpec] = field(default_factory=dict, repr=False)

    @classmethod
    def build(cls, include_paths: Iterable[Path] = ()) -> TaskIndex:
        """Index built-in tasks and every ``--include-path`` folder."""
        refs: dict[str, TaskRef] = {}
        roots = [(builtin_tasks_dir(), "builtin")]
        for inc in include_paths:
            if not inc.is_dir():
                raise HarnessError(f"--include-path: not a folder: {inc}")
            roots.append((inc, f"include:{inc}"))
        for root, origin in roots:
            for ref in _scan(root, origin):
                if ref.address in refs:
                    other = refs[ref.address]
                    raise HarnessError(
                        f"task {ref.address!r} is defined twice: {other.path} and {ref.path}"
                    )
                refs[ref.address] = ref
        return cls(refs)

    def spec(self, ref: TaskRef) -> TaskSpec:
        """The validated spec of ``ref`` (parsed once)."""
        if ref.address not in self._specs:
            self._specs[ref.address] = load_spec(ref.path)
        return self._specs[ref.address]

    def suites(self) -> dict[str, list[str]]:
        """Suite name → task addresses (parses every task file)."""
        out: dict[str, list[str]] = {}
        for ref in self.refs.values():
            names = {ref.folder, *self.spec(ref).suites} - {""}
            for s in names:
                out.setdefault(s, []).append(ref.address)
        return {k: sorted(v) for k, v in sorted(out.items())}

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
        if name in self.refs:
            return [self.refs[name]]
        bare = [r for r in self.refs.values() if r.name == name]
        folder = sorted((r for r in self.refs.values() if r.folder == name), key=lambda r: r.address)
        if len(bare) == 1 and not folder:
            return bare
        if len(bare) > 1:
            raise HarnessError(
                f"task name {name!r} is ambiguous: {', '.join(sorted(r.address for r in bare))}"
            )
        suites = self.suites()
        if name in suites:
            return [self.refs[a] for a in suites[name]]
        known = [*self.refs, *(r.name for r in self.refs.values()), *suites]
        raise UnknownNameError(f"unknown task or suite {name!r}" + did_you_mean(name, known))
