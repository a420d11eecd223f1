"""``check_task``: everything ``harness eval`` checks of a loaded task before any model loads,
and ``harness tasks validate`` with it (one validation path for both)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import HarnessError, TaskSpecError
from harness.sources.read import check_source
from harness.spec.sources import GeneratorSource
from harness.spec.task import TaskSpec
from harness.tasks.item_checks import item_problems
from harness.tasks.record_checks import record_problems
from harness.tasks.variants import FindTask, check_items_from, close_addresses, index_finder
from harness.templates import one_line

if TYPE_CHECKING:
    from harness.tasks.index import TaskIndex
    from harness.tasks.refs import TaskRef

# what a name that is no task of the index is told (harness eval, tasks sample)
NOT_INDEXED = " (not a built-in or installed task: pass the folder it is in with --include-path)"


def check_task(spec: TaskSpec, path: Path | str, base_dir: Path, items: bool = True,
               find: FindTask | None = None, address: str | None = None,
               hint: Callable[[str], str] = lambda name: "") -> None:
    """Each record source (a local data file of a known format, a regular file within its size
    bound: never a device such as ``/dev/zero``; inside ``--restrict-paths``); with ``items``,
    one item per bucket of each generator source (``check_items``) and every record of each
    local data file (``record_checks``); with ``find`` (how the task
    an ``items_from`` names is found), that the task it names makes the same items
    (``harness.tasks.variants``; ``address``: this task's own; ``hint(name)``: added for a
    name that is no task). A ``TaskSpecError`` lists every problem, one line each, at the
    file and line of its key where ``path`` is a task file."""
    problems: list[tuple[str, Exception]] = []
    for key, src in (("source", spec.source), ("fewshot.source", spec.fewshot.source)):
        if src is not None and not isinstance(src, GeneratorSource):
            try:
                check_source(src, base_dir)
            except HarnessError as e:
                text = one_line(str(e)) + _package_data_hint(str(e), base_dir)
                problems.append((f"{path}: {key}.{text.removeprefix('source.')}"
                                 if text.startswith("source.") else f"{path}: {key}: {text}", e))
    unreadable = bool(problems)
    if find is not None:
        try:
            check_items_from(spec, path, base_dir, find, address, hint)
        except TaskSpecError as e:
            problems.append((str(e), e))
    if items:
        problems += item_problems(spec, path)
        if not unreadable:  # a data file that could not be opened has nothing more to say
            problems += record_problems(spec, path, base_dir)
    if problems:  # the first cause kept: the plugin that raised can be named, its stack shown
        from harness.tasks.loader import placed

        lines = placed(path, [line for line, _ in problems])
        raise TaskSpecError("\n".join(lines)) from problems[0][1]


def _package_data_hint(problem: str, base_dir: Path) -> str:
    """For a data file missing beside an installed task file: the packaging step it needs."""
    if "file not found" not in problem or not {"site-packages", "dist-packages"} & set(
            base_dir.parts):
        return ""
    return ("; the task is installed: list its data files as package data (docs/"
            "writing-a-task-package.md, \"Data files\")")


def check_records(spec: TaskSpec, path: Path | str, base_dir: Path) -> None:
    """Only the records of ``spec``'s local data files (``record_checks``), for a task file
    whose spec has problems of its own: ``validate`` shows both in one pass. A source that
    cannot be read (or lies outside ``--restrict-paths``) is left to the full check."""
    for src in (spec.source, spec.fewshot.source):
        if src is not None and not isinstance(src, GeneratorSource):
            try:
                check_source(src, base_dir)
            except HarnessError:
                return
    problems = record_problems(spec, path, base_dir)
    if problems:
        from harness.tasks.loader import placed

        raise TaskSpecError("\n".join(placed(path, [line for line, _ in problems])))


def check_indexed(index: TaskIndex, ref: TaskRef, spec: TaskSpec, items: bool = True,
                  note: str = NOT_INDEXED) -> None:
    """``check_task`` on a task of ``index``, the task an ``items_from`` names found in the same
    index: what ``harness eval``, ``tasks sample``, ``plugins list --check`` and
    ``check_task_package`` check of a task (``note``: added for a name that is no task)."""
    check_task(spec, ref.where if ref.spec is None else ref.address, ref.base_dir, items=items,
               find=index_finder(index), address=ref.address,
               hint=lambda name: close_addresses(name, index.refs) + note)
