"""What ``harness tasks list`` and suite lookups need from a task, cached on disk.

Listing 1,000 task files would otherwise parse and validate every one of them on every call.
A task's ``TaskSummary`` (declared suites, difficulty name, ID/OOD bucket labels, output type,
number of templates) is stored in ``<cache dir>/task-index/summaries.json`` under the task
file's path, with the size and mtime of the file and of every file it includes. It is used
only while all of those are unchanged and the cache key still matches: the harness version,
the newest source file of the ``harness`` package (a code change invalidates everything) and
the installed plugins (their generators and metrics decide what is valid). Only tasks that
validated are stored, so an invalid file is parsed, and reported, every time; a paraphrase
table (``templates_from``) counts as a dependency, where the environment says it is. Tasks
given in code by plugins are never cached. ``GENHARNESS_CACHE_DIR`` moves the cache; an
unwritable cache only costs time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import harness
from harness.cache_paths import cache_root
from harness.files import write_atomic
from harness.spec.buckets import build_buckets
from harness.spec.task import TaskSpec

_VERSION = 1
_INCLUDE = re.compile(r"^include[ \t]*:(.*)$", re.MULTILINE)


@dataclass(frozen=True)
class TaskSummary:
    """The listing facts of one valid task."""

    suites: list[str]  # suites the task declares (its folder is added by the caller)
    difficulty: str  # the difficulty variable's name
    id_buckets: list[str]  # labels of the ID buckets, in order
    ood_buckets: list[str]  # labels of the OOD buckets, in order
    output: str  # "generate" or "multiple_choice"
    templates: int  # number of templates

    @classmethod
    def of(cls, spec: TaskSpec) -> TaskSummary:
        """The summary of a validated spec."""
        buckets = build_buckets(spec.buckets, spec.roles)
        return cls(suites=list(spec.suites), difficulty=spec.difficulty_name,
                   id_buckets=[b.label for b in buckets if b.role == "ID"],
                   ood_buckets=[b.label for b in buckets if b.role == "OOD"],
                   output=spec.output.type, templates=len(spec.templates))


def _stat(path: str) -> list[Any]:
    try:
        st = os.stat(path)
    except OSError:
        return [path, None, None]
    return [path, st.st_mtime_ns, st.st_size]


def _data_file(raw: str, task_file: str) -> str:
    """Where ``templates_from.path`` points for this environment (as ``expand_templates``)."""
    path = os.path.expandvars(os.path.expanduser(raw))
    return path if os.path.isabs(path) else os.path.join(os.path.dirname(task_file), path)


def include_chain(path: Path) -> list[Path]:
    """``path`` and every file it includes, transitively (what its spec depends on)."""
    out: list[Path] = []
    todo = [path.resolve()]
    while todo:
        p = todo.pop()
        if p in out:
            continue
        out.append(p)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError:
            continue
        m = _INCLUDE.search(text)
        if m is None:
            continue
        import yaml

        value = m.group(1).strip()
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present
        try:  # a scalar or a flow list on the line itself; else the whole file
            names = (yaml.load(value, Loader=loader)
                     if value and not value.startswith("#") else None)
            if names is None:
                names = (yaml.load(text, Loader=loader) or {}).get("include")
        except yaml.YAMLError:
            continue
        for name in [names] if isinstance(names, str) else names or []:
            if isinstance(name, str):
                todo.append((p.parent / name).resolve())
    return out


def code_stamp() -> str:
    """Changes whenever a source file of the installed ``harness`` package changes."""
    root = Path(harness.__file__).parent
    newest = 0
    for dirpath, _, files in os.walk(root):
        for f in files:
            if f.endswith(".py"):
                with contextlib.suppress(OSError):
                    newest = max(newest, os.stat(os.path.join(dirpath, f)).st_mtime_ns)
    return f"{harness.__version__}:{newest}"


class SummaryCache:
    """Summaries by task file, valid while the files and the cache key are unchanged."""

    def __init__(self, key: str, path: Path | None = None) -> None:
        if path is None:
            path = cache_root() / "task-index" / "summaries.json"
        self.path = path
        self.key = hashlib.sha256(f"{_VERSION}\0{key}".encode()).hexdigest()[:32]
        self._entries: dict[str, Any] = {}
        self._dirty = False
        with contextlib.suppress(OSError, ValueError, AttributeError):
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("key") == self.key:
                self._entries = dict(data["entries"])

    def get(self, task_file: str) -> TaskSummary | None:
        """The cached summary of ``task_file`` (an absolute path), if every file it depends on
        is unchanged (and a ``templates_from`` table is still looked for in the same place)."""
        entry = self._entries.get(task_file)
        if entry is None or any(_stat(d[0]) != d for d in entry["deps"]):
            return None
        raw, where = entry.get("data") or (None, None)
        if raw is not None and _data_file(raw, task_file) != where:
            return None
        try:
            return TaskSummary(**entry["summary"])
        except TypeError:
            return None

    def put(self, task_file: str, spec: TaskSpec, summary: TaskSummary) -> None:
        """Remember ``summary`` for ``task_file`` (an absolute path)."""
        deps = [str(p) for p in include_chain(Path(task_file))]
        data = None
        if spec.templates_from is not None:  # the table (or its absence) is a dependency too
            data = [spec.templates_from.path, _data_file(spec.templates_from.path, task_file)]
            deps.append(data[1])
        self._entries[task_file] = {"deps": [_stat(d) for d in deps], "data": data,
                                    "summary": asdict(summary)}
        self._dirty = True

    def save(self) -> None:
        """Write the cache back if anything was added (atomically; errors are ignored)."""
        if not self._dirty:
            return
        self._dirty = False
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.path, json.dumps({"key": self.key, "entries": self._entries}),
                         durable=False)
