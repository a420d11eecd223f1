"""Is a committed board still what its inputs and today's tasks give?

- :func:`~harness.leaderboard.stale.stale_tasks` of :func:`board_specs`: tasks whose spec hash
  in a board's runs differs from the spec the task files of this checkout resolve to (or that no
  longer exist): rerun them.
- :func:`rebuild_diff`: rebuild a board from the runs it carries (``runs/*/*/results.json``, in
  the order its build was given them) with the options it records, and list every file whose
  bytes differ.

``leaderboards/manifest.json`` says which boards are ``current`` (both checks must pass; CI runs
them) and which are ``stale`` (the page says so; regenerate with scripts/build_leaderboard.sh).
"""

from __future__ import annotations

import filecmp
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.errors import HarnessError


def board_specs(board: Path) -> dict[str, set[str]]:
    """Task → spec hashes of the rows a built board shows (from its leaderboard.json)."""
    data = json.loads((board / "leaderboard.json").read_text(encoding="utf-8"))
    out: dict[str, set[str]] = {}
    for t in data.get("tasks", []):
        for r in t.get("rows", []):
            out.setdefault(t["task"], set()).add(r["spec_sha256"])
    return out


def board_include_paths(board: Path) -> list[Path]:
    """The task folders the board's runs were given with ``--include-path``, sorted. They are
    recorded relative to the folder the runs ran in: one that is not there from the current
    folder is looked for beside the board's ``leaderboards/`` folder (the repository's root)."""
    found: set[str] = set()
    for res in board_inputs(board):
        try:
            run = json.loads(res.read_text(encoding="utf-8")).get("run", {})
        except (OSError, ValueError) as e:
            raise HarnessError(f"{res}: cannot read: {e}") from None
        found.update(str(p) for p in run.get("include_paths") or [])
    root = board.resolve().parent.parent
    return [Path(p) if Path(p).is_dir() or not (root / p).is_dir() else root / p
            for p in sorted(found)]


def board_inputs(board: Path) -> list[Path]:
    """The results.json copies a board carries, in the order they were given to the build (its
    ``sources``: the last given run of an entry and task wins), then any others in name order."""
    carried = sorted(board.glob("runs/*/*/results.json"))
    try:
        data = json.loads((board / "leaderboard.json").read_text(encoding="utf-8"))
        given = [board / s["path"] for s in data.get("sources", [])]
    except (OSError, ValueError, TypeError, KeyError):
        given = []
    present = set(carried)
    first = [p for p in dict.fromkeys(given) if p in present]
    rest = present - set(first)
    return first + [p for p in carried if p in rest]


def build_options(board: Path) -> dict[str, Any]:
    """The build options a board records (leaderboard.json ``build``)."""
    data = json.loads((board / "leaderboard.json").read_text(encoding="utf-8"))
    opts = data.get("build")
    if not isinstance(opts, dict):
        raise HarnessError(f"{board}/leaderboard.json: no build options recorded (built by an "
                           "older harness: regenerate it)")
    return opts


def rebuild_diff(board: Path, out: Path) -> list[str]:
    """Rebuild *board* from its own inputs into *out*; the files that differ or exist on one
    side only (relative paths, sorted). Empty: byte for byte the same."""
    from harness.leaderboard.build import build

    inputs = board_inputs(board)
    if not inputs:
        raise HarnessError(f"{board}: carries no runs/*/*/results.json to rebuild from")
    opts = build_options(board)
    opts["compare"] = [board / rel for rel in opts.get("compare", [])]
    build(inputs, out, **opts)
    mine = {p.relative_to(board).as_posix() for p in board.rglob("*") if p.is_file()}
    theirs = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    diff = sorted(mine ^ theirs)
    diff += sorted(f for f in mine & theirs
                   if not filecmp.cmp(board / f, out / f, shallow=False))
    return sorted(diff)


def _swap_in(inputs: list[Path], runs: Sequence[Path]) -> list[Path]:
    """``inputs`` with each of ``runs`` in place of the input of the same model and tasks (at
    its position, so the build order holds); a run matching none is added at the end."""
    def key(res: Path) -> tuple[str, tuple[str, ...]]:
        try:
            d = json.loads(res.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise HarnessError(f"{res}: cannot read: {e}") from None
        return d["run"]["model"], tuple(sorted(t["task"] for t in d.get("tasks", [])))

    out = list(inputs)
    for run in runs:
        res = run / "results.json" if run.is_dir() else run
        if not res.is_file():
            raise HarnessError(f"--run {run}: no results.json there")
        at = [i for i, p in enumerate(out) if key(p) == key(res)]
        for i in at:
            out[i] = res
        if not at:
            out.append(res)
    return list(dict.fromkeys(out))


def rescore_board(board: Path, work: Path, title: str | None = None,
                  runs: Sequence[Path] = ()) -> int:
    """Bring a board to this harness's statistics without asking any model: every run it
    carries is copied to ``work``, rescored from its samples (``harness rescore``), and the board
    is built again from the copies, in the order and with the options it records. Returns the
    number of runs rescored. The runs' answers are untouched; their numbers and names (the
    results.json hash) are new. ``title``: a new title (default: the recorded one); ``runs``:
    newer runs that take the place of the board's runs of the same model and tasks (a task run
    again, e.g. with a new answer budget)."""
    import shutil

    from harness.leaderboard.build import build
    from harness.run.rescore import rescore

    inputs = _swap_in(board_inputs(board), runs)
    if not inputs:
        raise HarnessError(f"{board}: carries no runs/*/*/results.json to rescore")
    opts = build_options(board)
    if title is not None:
        opts["title"] = title
    compare = work / "compare"
    shutil.copytree(board / "compare", compare) if (board / "compare").is_dir() else None
    opts["compare"] = [compare / Path(rel).name for rel in opts.get("compare", [])]
    copies = []
    for n, res in enumerate(inputs):
        copy = work / f"{n:03d}"
        shutil.copytree(res.parent, copy)
        rescore(copy)
        copies.append(copy / "results.json")
    build(copies, board, **opts)
    return len(copies)


def manifest(root: Path) -> dict[str, dict[str, Any]]:
    """``leaderboards/manifest.json``: board folder name → {status, note}."""
    path = root / "manifest.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise HarnessError(f"{path}: cannot read: {e}") from None
    boards = data.get("boards") if isinstance(data, dict) else None
    if not isinstance(boards, dict):
        raise HarnessError(f"{path}: expected {{\"boards\": {{NAME: {{\"status\": ...}}}}}}")
    for name, b in boards.items():
        if not isinstance(b, dict) or b.get("status") not in ("current", "stale"):
            raise HarnessError(f"{path}: boards.{name}.status: expected 'current' or 'stale'")
    return boards
