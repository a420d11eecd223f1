"""``--restrict-paths``: confine the local files a task file reads.

By design a task file may read local files: ``include:`` bases, ``source.path`` data files, a
dataset's ``local_path`` and a ``templates_from`` table, anywhere the user running it can read.
With ``--restrict-paths`` (``harness eval``, ``harness tasks ...``) those reads are confined to the
task file's own folder and the data root (``$GENHARNESS_DATA``, when set); anything else is one
line naming the file and the key. Off by default; ``GENHARNESS_RESTRICT_PATHS=1`` turns it on
too.
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.errors import TaskSpecError

_ENV = "GENHARNESS_RESTRICT_PATHS"  # "1": on; set by the option, inherited by worker processes


def restrict_paths(on: bool = True) -> None:
    """Turn confinement on (``--restrict-paths``) or off for this process and its children."""
    if on:
        os.environ[_ENV] = "1"
    else:
        os.environ.pop(_ENV, None)


def restricted() -> bool:
    """Whether ``--restrict-paths`` is on."""
    return os.environ.get(_ENV, "") == "1"


def allowed_roots(task_dir: Path) -> list[Path]:
    """Where a task in ``task_dir`` may read: its folder and the data root."""
    roots = [task_dir.resolve()]
    data = os.environ.get("GENHARNESS_DATA")
    if data:
        roots.append(Path(data).expanduser().resolve())
    return roots


def check_read(target: Path, task_file: Path | str, key: str, task_dir: Path | None = None
               ) -> None:
    """With ``--restrict-paths`` on, refuse ``target`` outside the task's folder and the data
    root (symlinks resolved): ``TaskSpecError`` naming ``task_file`` and ``key``."""
    if not restricted():
        return
    folder = task_dir if task_dir is not None else Path(task_file).parent
    try:
        real = target.resolve()
    except (OSError, ValueError, RuntimeError):
        real = target
    roots = allowed_roots(folder)
    if not any(real == r or real.is_relative_to(r) for r in roots):
        raise TaskSpecError(f"{task_file}: {key}: {str(target)!r} is outside the task folder "
                            f"and the data root (--restrict-paths)")
