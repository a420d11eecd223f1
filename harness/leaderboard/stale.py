"""Which tasks of a board ran with a spec that differs from this checkout's task files."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from harness.errors import HarnessError


def stale_tasks(specs: Mapping[str, Iterable[str]]) -> list[str]:
    """Of ``task → spec hashes the runs used``, the tasks whose hash is not today's (sorted)."""
    from harness.results import spec_hash
    from harness.tasks.index import TaskIndex

    index = TaskIndex.build([])
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
