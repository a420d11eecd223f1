"""Which tasks of a board ran with a spec that differs from this checkout's task files
(``stale_tasks``), on items this checkout makes differently (``drifted``), or with a horizon
search this checkout runs otherwise (``searched_otherwise``)."""

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


OBSOLETE_ENDS = frozenset({"output"})  # what ended a search's range then and cannot now: the
# answer budget (searches raise it up to the model's context since budgets grew with targets)


def searched_otherwise(runs: Iterable[tuple[Path, Iterable[str]]]) -> list[str]:
    """Of ``runs`` ([(run folder, the tasks read from it)]), the tasks with a horizon search
    whose range ended where today's search would go on (``OBSOLETE_ENDS``): its "≥" was the
    harness's limit, not the model's (sorted). Rescoring cannot mend it: it recomputes the
    search's answers, not the range it asked them over."""
    import json

    out: set[str] = set()
    for run_dir, used in runs:
        wanted = set(used)
        run = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
        for task in run.get("tasks") or []:
            if task.get("task") in wanted and any(
                    h.get("range_end") in OBSOLETE_ENDS for h in task.get("horizons") or []):
                out.add(str(task["task"]))
    return sorted(out)


def board_runs(board: Path) -> list[tuple[Path, list[str]]]:
    """The run folders a built board names, each with the tasks it takes from it."""
    import json

    data = json.loads((board / "leaderboard.json").read_text(encoding="utf-8"))
    return [((board / s["path"]).parent, list(s.get("used_tasks") or []))
            for s in data.get("sources", [])]


def drifted_tasks(board: Path, include_paths: Sequence[Path] = ()) -> list[str]:
    """Of the tasks a built board shows, those whose items this checkout makes differently
    from the items its runs asked (``drifted``, over the runs its leaderboard.json names)."""
    return drifted(board_runs(board), include_paths)


def drifted(runs: Iterable[tuple[Path, Iterable[str]]], include_paths: Sequence[Path] = ()
            ) -> list[str]:
    """Of ``runs`` ([(run folder, the tasks read from it)]), the tasks whose items this
    checkout makes differently from the items the runs asked (sorted). Each run's items are
    made again (today's spec, the run's seed, items per bucket and pool; once for runs that
    agree on them) and every sample's reference answer, and its choices, compared with those
    of the item of the same id. A change to a generator or a data file keeps the spec's hash,
    so ``stale_tasks`` cannot see it; this does. Not made again: tasks whose spec hash is not
    today's and tasks found nowhere (``stale_tasks`` names both), and those whose items are
    measured in the model's tokens (a generator that needs the tokenizer)."""
    import json

    from harness.generators.registry import get_generator
    from harness.items import Instance, build_instances
    from harness.outputs import output_type
    from harness.outputs.prompts import target_text
    from harness.run.rescore import task_records
    from harness.run.results import spec_hash
    from harness.spec.sources import GeneratorSource
    from harness.tasks.index import TaskIndex

    index = TaskIndex.build([p for p in include_paths if p.is_dir()])
    out: set[str] = set()
    made: dict[tuple[object, ...], dict[str, Instance]] = {}
    for run_dir, used in runs:
        wanted = set(used) - out
        if not wanted:
            continue
        run = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
        cfg = run.get("run") or {}
        for task in run.get("tasks") or []:
            name = str(task.get("task"))
            if name not in wanted or name in out:
                continue
            try:
                ref = index.resolve([name])[0]
            except HarnessError:
                continue  # a task found nowhere: stale_tasks names it
            spec = index.spec(ref)
            if ref.address != name or task.get("spec_sha256") != spec_hash(spec):
                continue  # another spec than today's: stale_tasks names it
            if isinstance(spec.source, GeneratorSource) and get_generator(
                    spec.source.name).needs_tokenizer:
                continue
            key = (name, cfg.get("seed", 0),
                   cfg.get("limit_per_bucket"), bool(cfg.get("matched_control")))
            if key not in made:
                made[key] = {i.id: i for i in build_instances(
                    spec, name, int(cfg.get("seed", 0)), ref.base_dir,
                    cfg.get("limit_per_bucket"),
                    matched_control=bool(cfg.get("matched_control"))).items}
            items = made[key]
            templates = {t.id: t for t in spec.templates}
            kind = output_type(spec)
            for r in task_records(run_dir, task):
                item = items.get(r.id)
                tpl = templates.get(r.template, spec.templates[0])
                if (item is None or target_text(spec, tpl, item) != r.target
                        or (r.choices is not None and kind.choices(spec, item) != r.choices)):
                    out.add(name)
                    break
    return sorted(out)
