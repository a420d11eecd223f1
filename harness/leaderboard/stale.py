"""Which tasks of a board ran with a spec that differs from this checkout's task files."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from harness.errors import HarnessError


def stale_tasks(specs: Mapping[str, Iterable[str]],
                include_paths: Sequence[Path] = ()) -> list[str]:
    """Of ``task → spec hashes the runs used``, the tasks whose hash is not today's (sorted).
    ``include_paths``: task folders beside the shipped ones (those the runs were given with
    ``--include-path``), so their tasks are checked too; a task found nowhere is stale."""
    from harness.run.results import spec_hash
    from harness.tasks.index import TaskIndex

    index = TaskIndex.build([p for p in include_paths if p.is_dir()])
    out = []
    for task, hashes in sorted(specs.items()):
        try:
            ref = index.resolve([task])[0]
            today = spec_hash(index.spec(ref)) if ref.address == task else None
        except HarnessError:
            today = None
        if any(h != today for h in hashes):
            out.append(task)
    return out
