"""The whole run: resolve tasks → load the model → run each task → write results.json."""

from __future__ import annotations

import time
from collections.abc import Callable

from harness.config import RunConfig
from harness.models.base import LM
from harness.progress import ProgressLM, Reporter
from harness.results import (
    SCHEMA_VERSION,
    CacheReport,
    Results,
    environment,
    harness_info,
    write_results,
)
from harness.runner import run_task
from harness.tasks.registry import TaskIndex


def load(cfg: RunConfig) -> LM:
    """The backend ``cfg.model`` names: one process, or ``cfg.data_parallel`` worker processes."""
    if cfg.data_parallel > 1:
        from harness.models.parallel import DataParallelLM

        return DataParallelLM(cfg.model, cfg.model_args, cfg.batch_size, cfg.data_parallel)
    from harness.models.registry import load_model

    return load_model(cfg.model, cfg.model_args, cfg.batch_size)


def evaluate(cfg: RunConfig, model: LM | None = None,
             on_progress: Callable[[str], None] | None = None,
             index: TaskIndex | None = None, reporter: Reporter | None = None) -> Results:
    """Run ``cfg`` end to end; ``model`` overrides loading ``cfg.model`` (tests, plugins);
    ``index`` overrides the task index built from ``cfg.include_paths`` and installed plugins;
    ``reporter`` receives live progress of model calls."""
    t_start = time.perf_counter()
    index = index if index is not None else TaskIndex.build(cfg.include_paths)
    refs = index.resolve(cfg.tasks)
    specs = [(ref, index.spec(ref)) for ref in refs]  # validate every task before loading a model
    t_load = time.perf_counter()
    owned = model is None
    base = load(cfg) if model is None else model
    timings: dict[str, float] = {"resolve_s": t_load - t_start,
                                 "model_load_s": time.perf_counter() - t_load}
    identity = base.identity
    cached = None
    if cfg.use_cache and owned:  # a model object passed in is the caller's to cache (or not)
        from harness.models.cache import CachedLM, ResponseCache, default_cache_dir

        cached = CachedLM(base, ResponseCache(cfg.cache_dir or default_cache_dir()))
    front: LM = cached or base
    progress = ProgressLM(front, reporter) if reporter else None
    results = []
    try:
        for ref, spec in specs:
            if progress:
                progress.label = ref.address
            outcome = run_task(ref, spec, progress or front, cfg, on_progress)
            results.append(outcome.result)
            for k, v in outcome.timings.items():
                timings[f"{ref.address}.{k}"] = v
    finally:
        if cached:
            cached.cache.close()
        if owned:
            base.close()
    timings["total_s"] = time.perf_counter() - t_start
    res = Results(
        schema_version=SCHEMA_VERSION, harness=harness_info(), run=cfg, model=identity,
        environment=environment(), tasks=results,
        timings={k: round(v, 4) for k, v in timings.items()},
        cache=CacheReport(path=str(cached.cache.path), hits=cached.stats.hits,
                          misses=cached.stats.misses) if cached else None,
    )
    write_results(res, cfg.output_dir)
    return res
