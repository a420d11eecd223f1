"""What a leaderboard run costs, measured: CPU seconds per task at the plan's own sizes.

**Why measured per task at plan size.** A decode step's fixed cost is shared by the rows of a
batch, and batches are larger at plan size (30–93 items per bucket) than in a small trial run, so
seconds per prompt measured at 2 items per bucket overstate the cost 2–3×; wall time on a shared
machine overstates it again. The table therefore holds, per model and task, the **process CPU
seconds** of the model calls (``<task>.model_cpu_s`` in results.json ``timings``: every thread of
the process, so independent of other load) of a run at the plan's limit, with the run's load
average, wall seconds and prompt count beside it. A task answered partly from the response cache
(``<task>.cache_hits`` > 0) was not timed whole and is not recorded.

**The estimate.** ``harness leaderboard plan`` scales each measured task by planned prompts over
measured prompts (exact when the limits agree) and sums; tasks with no measurement are listed,
and the total is then a lower bound. A task timed under another task file than today's (each
entry records the spec hash it ran under) counts as not measured. ``harness leaderboard costs
RUN...`` adds runs to the table (``--out`` the shipped ``costs.json``, or a file of your own for
``plan --costs``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.errors import HarnessError, first_problem
from harness.leaderboard.board_file import engine_label

SHIPPED = Path(__file__).with_name("costs.json")  # the project's measurements


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TaskCost(_Frozen):
    """One task's measured cost for one model."""

    limit: int | None  # --limit-per-bucket of the measured run (None: every item)
    prompts: int  # samples the run wrote for the task
    cpu_s: float  # process CPU seconds of its model calls
    wall_s: float  # wall seconds of its model calls (cpu_s / wall_s: threads kept busy)
    load_avg: float | None  # 1-minute load average, mean of the run's start and end
    engine: str  # engine and weights as the run's model identity names them
    spec_sha256: str | None = Field(  # the task file it was timed under (None: recorded before
        None, exclude_if=lambda v: v is None)  # hashes were): another one's cost is not today's


class CostTable(_Frozen):
    """Measured costs: model spec (as given to ``--model``) → task address → cost."""

    note: str = ""  # where and how the numbers were measured
    models: dict[str, dict[str, TaskCost]] = Field(default_factory=dict)


def read_table(path: Path | None = None) -> CostTable:
    """The cost table at ``path`` (default: the shipped one); an absent file is an empty table."""
    p = path or SHIPPED
    if not p.exists():
        if path is not None:
            raise HarnessError(f"{p}: no such cost table")
        return CostTable()
    try:
        return CostTable.model_validate_json(p.read_text(encoding="utf-8"))
    except ValidationError as e:
        raise HarnessError(f"{p}: not a cost table: {first_problem(e)}") from None
    except (OSError, UnicodeError) as e:
        raise HarnessError(f"{p}: cannot read the cost table ({e})") from None


def write_table(table: CostTable, path: Path) -> None:
    """Write ``table`` as sorted, indented JSON (stable diffs)."""
    data = table.model_dump(mode="json")
    data["models"] = {m: dict(sorted(t.items())) for m, t in sorted(data["models"].items())}
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def measured(run_dir: Path) -> tuple[str, dict[str, TaskCost], list[str]]:
    """The model spec, the task costs a finished run measured, and the tasks it skipped (with
    why) from its results.json."""
    path = run_dir / "results.json" if run_dir.is_dir() else run_dir
    try:
        res = json.loads(path.read_text(encoding="utf-8"))
        spec, timings, tasks = res["run"]["model"], res["timings"], res["tasks"]
        ident = res["model"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise HarnessError(f"{path}: not a results.json with timings ({e})") from None
    loads = [timings[k] for k in ("loadavg_1m_start", "loadavg_1m_end") if k in timings]
    engine = engine_label(str(ident.get("backend", "")), ident.get("dtype"))
    out: dict[str, TaskCost] = {}
    skipped = []
    for t in tasks:
        name = t["task"]
        cpu = timings.get(f"{name}.model_cpu_s")
        hits = timings.get(f"{name}.cache_hits")
        if hits is None and res["run"].get("use_cache") is False:
            hits = 0  # --no-cache: every response came from the model
        if hits is not None:  # answers replayed from an earlier run (--replay) were not timed
            hits += timings.get(f"{name}.replayed", 0)
        if cpu is None or hits is None:
            skipped.append(f"{name}: no CPU timing (a run from before costs were recorded)")
            continue
        if hits > 0:
            skipped.append(f"{name}: {int(hits)} responses came from the cache")
            continue
        prompts = sum(int(tpl["n"]) for tpl in t["templates"])
        out[name] = TaskCost(limit=res["run"].get("limit_per_bucket"), prompts=prompts,
                             cpu_s=round(cpu, 1), wall_s=round(timings[f"{name}.model_s"], 1),
                             load_avg=round(sum(loads) / len(loads), 2) if loads else None,
                             engine=engine, spec_sha256=t.get("spec_sha256"))
    return spec, out, skipped


def add_runs(table: CostTable, runs: Iterable[Path]) -> tuple[CostTable, list[str]]:
    """``table`` with the tasks measured by ``runs`` added (a later run replaces an entry)."""
    models = {m: dict(t) for m, t in table.models.items()}
    notes = []
    for run in runs:
        spec, costs, skipped = measured(run)
        models.setdefault(spec, {}).update(costs)
        notes += [f"{run}: {s}" for s in skipped]
    return table.model_copy(update={"models": models}), notes


def current(table: CostTable, model: str, specs: Mapping[str, str]) -> dict[str, TaskCost]:
    """``model``'s measured tasks, less those timed under another task file than today's
    (``specs``: task → today's spec hash; a task file change, such as a larger answer budget,
    can change its cost many times over)."""
    return {t: c for t, c in table.models.get(model, {}).items()
            if c.spec_sha256 is None or specs.get(t, c.spec_sha256) == c.spec_sha256}


def estimate(table: CostTable, model: str, planned: Sequence[tuple[str, int]],
             specs: Mapping[str, str] | None = None) -> tuple[dict[str, float], list[str]]:
    """CPU seconds per task for ``planned`` (task, prompts) under ``model``, and the tasks with
    no measurement (or one under another task file than ``specs`` names, ``current``)."""
    known = current(table, model, specs or {})
    est: dict[str, float] = {}
    missing = []
    for task, prompts in planned:
        c = known.get(task)
        if c is None or c.prompts <= 0:
            missing.append(task)
        else:
            est[task] = c.cpu_s * prompts / c.prompts
    return est, missing


def scaled_mark(cost: TaskCost | None, limit: int | None) -> str:
    """``<=`` for a cost timed on fewer items per bucket than *limit* (smaller batches cost more
    per prompt: an upper bound), ``>=`` for more, ``""`` at the same size or unmeasured."""
    if cost is None or cost.limit == limit:
        return ""
    if limit is None or (cost.limit is not None and cost.limit < limit):
        return "<="
    return ">="


def core_hours(seconds: float) -> str:
    """``seconds`` of CPU as core-hours, one decimal (never rounded to 0)."""
    return f"{max(math.ceil(seconds / 360) / 10, 0.1):.1f} core-h"
