"""The whole run: resolve tasks → load the model → run each task → write results.json."""

from __future__ import annotations

import time
from collections.abc import Callable

from harness.config import RunConfig
from harness.models.base import LM
from harness.results import SCHEMA_VERSION, Results, environment, harness_info, write_results
from harness.runner import run_task
from harness.tasks.registry import TaskIndex


def evaluate(cfg: RunConfig, model: LM | None = None,
             on_progress: Callable[[str], None] | None = None,
             index: TaskIndex | None = None) -> Results:
    """Run ``cfg`` end to end; ``model`` overrides loading ``cfg.model`` (tests, plugins);
    ``index`` overrides the task index built from ``cfg.include_paths`` and installed plugins."""
    t_start = time.perf_counter()
    index = index if index is not None else TaskIndex.build(cfg.include_paths)
    refs = index.resolve(cfg.tasks)
    specs = [(ref, index.spec(ref)) for ref in refs]  # validate every task before loading a model
    t_load = time.perf_counter()
    if model is None:
        from harness.models.registry import load_model

        model = load_model(cfg.model, cfg.model_args, cfg.batch_size)
    timings: dict[str, float] = {"resolve_s": t_load - t_start,
                                 "model_load_s": time.perf_counter() - t_load}
    results = []
    for ref, spec in specs:
        outcome = run_task(ref, spec, model, cfg, on_progress)
        results.append(outcome.result)
        for k, v in outcome.timings.items():
            timings[f"{ref.address}.{k}"] = v
    timings["total_s"] = time.perf_counter() - t_start
    res = Results(
        schema_version=SCHEMA_VERSION, harness=harness_info(), run=cfg, model=model.identity,
        environment=environment(), tasks=results, timings={k: round(v, 4) for k, v in timings.items()},
    )
    write_results(res, cfg.output_dir)
    return res
