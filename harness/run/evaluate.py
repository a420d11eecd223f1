"""The whole run: resolve tasks → claim the output folder → load the model → run each task →
write results.json.

The output folder belongs to one run at a time (``harness.run.rundir``): it is claimed, and checked
writable, before the model loads. A task that raises is recorded as failed and the others go
on (``harness.run.isolation``). results.json is written atomically, only once every task is done;
an interrupted run (``Interrupted``) leaves its finished samples and no results.json, and its
rerun resumes from the response cache.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from harness.cache_paths import responses_dir
from harness.config import RunConfig
from harness.errors import HarnessError, Interrupted, print_stack
from harness.lm import LM
from harness.models.answer_bounds import BoundedLM
from harness.models.cache import CachedLM, CacheStats, ResponseCache
from harness.plugins import one_line
from harness.run.execute import run_task
from harness.run.isolation import GuardedLM, ModelFault, failure, failure_line
from harness.run.plan import check_run
from harness.run.plugin_use import used_plugins
from harness.run.progress import ProgressLM, Reporter, RunClock
from harness.run.public import (
    public_identity,
    public_origin,
    public_path,
    public_run,
    public_text,
)
from harness.run.replay import ReplayLM, ReplayTable, answers_hash
from harness.run.results import (
    SCHEMA_VERSION,
    CacheReport,
    ReplayReport,
    Results,
    TaskFailure,
    TaskResult,
    environment,
    harness_info,
    samples_path,
    write_results,
)
from harness.run.rundir import OutputError, abandon, claim, finish
from harness.spec.task import TaskSpec
from harness.tasks.index import TaskIndex
from harness.tasks.origins import merge_includers
from harness.tasks.refs import TaskRef


def load(cfg: RunConfig) -> LM:
    """The backend ``cfg.model`` names: one process, or ``cfg.data_parallel`` worker processes."""
    if cfg.data_parallel > 1:
        from harness.models.parallel import DataParallelLM

        return DataParallelLM(cfg.model, cfg.model_args, cfg.batch_size, cfg.data_parallel)
    from harness.models.backends import load_model

    return load_model(cfg.model, cfg.model_args, cfg.batch_size)


@dataclass
class _Progress:
    """How far a run got (for the interruption message)."""

    total: int  # tasks in the run
    finished: list[TaskResult] = field(default_factory=list)  # tasks done, in run order
    failed: list[TaskFailure] = field(default_factory=list)  # tasks that raised
    current: TaskRef | None = None  # the task being run
    clock: RunClock | None = None  # prompts planned and time left (when progress is printed)

    def interrupted(self, cfg: RunConfig) -> Interrupted:
        done = len(self.finished) + len(self.failed)
        where = ""
        if self.current is not None:
            path = samples_path(cfg.output_dir, self.current.address)
            n = 0
            with contextlib.suppress(OSError), path.open("rb") as f:
                n = sum(1 for _ in f)
            where = f" ({self.current.address}: {n} samples written)"
        return Interrupted(f"interrupted: {done} of {self.total} tasks done{where}; rerun the "
                           "same command to resume (finished model responses are cached)")


def _run_tasks(specs: list[tuple[TaskRef, TaskSpec]], model: LM, cfg: RunConfig,
               progress: _Progress, timings: dict[str, float],
               on_progress: Callable[[str], None] | None,
               on_failure: Callable[[str], None] | None, stats: CacheStats | None = None,
               on_task: Callable[[TaskResult], None] | None = None,
               replay: ReplayLM | None = None) -> None:
    guarded = GuardedLM(model)
    for ref, spec in specs:
        hits = stats.hits if stats else 0
        replayed = replay.answered if replay else 0
        progress.current = ref
        if isinstance(model, ProgressLM):
            model.label = ref.address
        try:
            outcome = run_task(ref, spec, guarded, cfg, on_progress)
        except ModelFault as e:  # the model's failure is the run's: nothing to blame a task for
            cause = e.__cause__ or e
            if isinstance(cause, OSError | sqlite3.Error):  # e.g. the response cache's disk full
                raise HarnessError(
                    f"{ref.address}: a model call failed: {one_line(cause)}; finished responses "
                    "are kept in the response cache: fix this and rerun to resume") from None
            raise cause from None
        except OutputError:  # the folder's failure is the run's too
            raise
        except Exception as e:  # anything a task's generator, source or metric raises
            raised: Exception = e
            progress.failed.append(failure(ref, e))
            if progress.clock:
                progress.clock.task_failed(ref.address)
        else:
            progress.finished.append(outcome.result)
            if on_task:  # e.g. its table, printed while the next task runs
                on_task(outcome.result)
            if progress.clock and on_progress:
                on_progress(progress.clock.task_done(ref.address))
            for k, v in outcome.timings.items():
                timings[f"{ref.address}.{k}"] = v
            if stats:  # a task answered partly from the cache was not timed whole (cost model)
                timings[f"{ref.address}.cache_hits"] = stats.hits - hits
            if replay:  # nor one answered partly from an earlier run
                timings[f"{ref.address}.replayed"] = replay.answered - replayed
            continue
        with contextlib.suppress(OSError):  # a failed task leaves no partial samples behind
            samples_path(cfg.output_dir, ref.address).unlink()
        if on_failure:
            on_failure(failure_line(progress.failed[-1]))
            print_stack(raised)  # with GENHARNESS_TRACEBACK=1 (--traceback): for its author
    progress.current = None


def _preflight(cfg: RunConfig, index: TaskIndex, refs: list[TaskRef], progress: _Progress,
               keep_going: bool, on_failure: Callable[[str], None] | None
               ) -> list[tuple[TaskRef, TaskSpec]]:
    """The tasks that load (the task file and its schema) and pass ``check_task`` (record
    sources, one item per bucket of each generator source, ``items_from``), after the run's
    arguments are checked against them (``check_run``); the others stop the run before the
    model loads (``HarnessError``: every problem, one line each, a problem of a file several
    tasks include once, then the same closing line whatever the check), or with
    ``keep_going`` are recorded as failed."""
    from harness.tasks.task_checks import check_indexed

    loaded: list[tuple[TaskRef, TaskSpec]] = []
    refused: dict[str, HarnessError] = {}
    for ref in refs:
        try:
            loaded.append((ref, index.spec(ref)))
        except HarnessError as e:
            refused[ref.address] = e
    check_run(cfg, loaded)  # the run's arguments against the tasks that load
    specs = {ref.address: spec for ref, spec in loaded}
    passed, problems = [], []
    for ref in refs:
        error = refused.get(ref.address)
        if error is None:
            try:
                check_indexed(index, ref, specs[ref.address])
            except HarnessError as e:
                error = e
            else:
                passed.append((ref, specs[ref.address]))
                continue
        problems.extend(str(error).splitlines())
        progress.failed.append(failure(ref, error))
        if keep_going and on_failure:
            on_failure(failure_line(progress.failed[-1]))
            print_stack(error)
    if problems and (not keep_going or not passed):
        n, total = len(progress.failed), len(refs)
        what = f"{n} of {total} tasks failed" if total > 1 else "the task failed"
        hint = "; fix them, or pass --keep-going to run the others" if n < total else ""
        raise HarnessError("\n".join([  # a problem of a file several tasks include: once
            *merge_includers(problems), f"{what} the checks that harness tasks validate makes, "
            f"so no model was loaded and nothing ran{hint}"]))
    return passed


def evaluate(cfg: RunConfig, model: LM | None = None,
             on_progress: Callable[[str], None] | None = None,
             index: TaskIndex | None = None, reporter: Reporter | None = None, *,
             overwrite: bool = False, on_failure: Callable[[str], None] | None = None,
             on_task: Callable[[TaskResult], None] | None = None,
             keep_going: bool = False) -> Results:
    """Run ``cfg`` end to end; ``model`` overrides loading ``cfg.model`` (tests, plugins);
    ``index`` overrides the task index built from ``cfg.include_paths`` and installed plugins;
    ``reporter`` receives live progress of model calls; ``overwrite`` lets the run replace
    another run's results in ``cfg.output_dir``; ``on_failure`` gets the one-line report of
    each task that fails (``Results.failed`` lists them), ``on_task`` each finished task's
    results entry as soon as it is finished. Every task is checked as ``harness tasks validate``
    checks it before the model loads; a task that fails its checks stops the run there, unless
    ``keep_going``: then it is recorded as failed and the others run."""
    t_start = time.perf_counter()
    index = index if index is not None else TaskIndex.build(cfg.include_paths)
    refs = index.resolve(cfg.tasks)
    progress = _Progress(total=len(refs))
    # every task checked as validate checks it, and the run's arguments, before loading a model
    specs = _preflight(cfg, index, refs, progress, keep_going, on_failure)
    files = {samples_path(cfg.output_dir, r.address).relative_to(cfg.output_dir).as_posix()
             for r, _ in specs}
    lock = claim(cfg, files, overwrite)  # before the model loads: a bad folder costs nothing
    try:
        return _evaluate(cfg, model, specs, progress, t_start, on_progress, reporter, on_failure,
                         on_task)
    except KeyboardInterrupt:
        abandon(cfg.output_dir)
        raise progress.interrupted(cfg) from None
    except BaseException:
        abandon(cfg.output_dir)
        raise
    finally:
        lock.release()


def _evaluate(cfg: RunConfig, model: LM | None, specs: list[tuple[TaskRef, TaskSpec]],
              progress: _Progress, t_start: float, on_progress: Callable[[str], None] | None,
              reporter: Reporter | None, on_failure: Callable[[str], None] | None,
              on_task: Callable[[TaskResult], None] | None) -> Results:
    info = harness_info()  # the commit the run starts from (one made during it is not its code)
    t_load = time.perf_counter()
    owned = model is None
    base = load(cfg) if model is None else model
    # durations only: no wall-clock time of day, so a results file names no machine time
    timings: dict[str, float] = {"resolve_s": t_load - t_start,
                                 "model_load_s": time.perf_counter() - t_load,
                                 "loadavg_1m_start": os.getloadavg()[0]}
    identity = base.identity
    cached = None
    replay: ReplayLM | None = None
    try:
        bounded = BoundedLM(base)  # an answer longer than its request allows is cut, uncached
        if cfg.use_cache and owned:  # a model object passed in is the caller's to cache (or not)
            cached = CachedLM(bounded, ResponseCache(cfg.cache_dir or responses_dir()))
        front: LM = cached or bounded
        if cfg.replay:  # answers earlier runs of this model hold (never cached here)
            table = ReplayTable.load(cfg.replay, identity,
                                     {ref.address: answers_hash(spec) for ref, spec in specs})
            front = replay = ReplayLM(front, table)
        front = ProgressLM(front, reporter) if reporter else front
        if on_progress:  # the run's prompt count before the first model call
            progress.clock = RunClock.plan(specs, cfg, base)
            on_progress(progress.clock.announce())
        _run_tasks(specs, front, cfg, progress, timings, on_progress, on_failure,
                   cached.stats if cached else None, on_task, replay)
    finally:
        if cached:
            cached.cache.close()
        if owned:
            base.close()
    timings["total_s"] = time.perf_counter() - t_start
    timings["loadavg_1m_end"] = os.getloadavg()[0]  # how busy the machine was (cost model)
    res = Results(
        schema_version=SCHEMA_VERSION, harness=info, run=public_run(cfg),
        model=public_identity(identity),
        environment=environment(used_plugins(cfg, specs)),
        tasks=[t.model_copy(update={"origin": public_origin(t.origin)}) for t in progress.finished],
        failed=[f.model_copy(update={"origin": public_origin(f.origin),
                                     "error": public_text(f.error, cfg.include_paths)})
                for f in progress.failed],
        timings={k: round(v, 4) for k, v in timings.items()},
        cache=CacheReport(path=public_path(str(cached.cache.path)), hits=cached.stats.hits,
                          misses=cached.stats.misses, regrown=cached.stats.regrown)
        if cached else None,
        replay=ReplayReport(sources=replay.table.sources, answered=replay.answered,
                            grown=replay.grown)
        if replay else None,
    )
    write_results(res, cfg.output_dir)
    finish(cfg.output_dir)
    return res
