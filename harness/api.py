"""The extension API: the one module a plugin package (or any code extending the harness)
imports. Every name is re-exported from the module that defines it, each imported on first use
(PEP 562), so ``from harness.api import generator`` loads the generator registry and nothing
else. Names outside this module are internal and may move.

What each pluggable kind needs (the registry's decorator, its types, the entry-point group a
package declares, see docs/writing-a-task-package.md):

- tasks (``harness.tasks``): ``TaskSpec``, ``load_spec``, ``TaskProvider``;
- generators (``harness.generators``): ``@generator``, ``GENERATORS``, ``Slot``;
- metrics (``harness.metrics``): ``@metric``, ``METRICS``, ``normalize_answer``;
- extractors (``harness.extractors``): ``@extractor``, ``EXTRACTORS``;
- analyses (``harness.analyses``): ``@analysis``, ``AnalysisParams``, ``AnalysisResult``,
  ``ANALYSES``, ``SampleRecord``, ``Bucket``, ``derive_seed``, ``percentile_ci``;
- gaps (``harness.gaps``): ``@gap``, ``GapContext``, ``GAPS``, the score intervals
  (``proportion``, ``diff_interval``, ``ratio_interval``);
- strategies (``harness.strategies``): ``@strategy``, ``StrategyInput``, ``STRATEGIES``;
- model backends (``harness.models``): a factory ``BackendFactory`` returning an ``LM``
  (``ModelIdentity``, ``OnDone``, the request and response types, ``ModelLoadError``),
  ``BACKENDS``;
- output types (built in only): ``OutputType``, ``OUTPUT_TYPES``;
- testing a package: ``check_task_package``, ``ScriptedLM``, ``scripted_backend``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name → the module that defines it
_EXPORTS: dict[str, str] = {
    # errors
    "HarnessError": "harness.errors",
    "ModelLoadError": "harness.errors",
    "TaskSpecError": "harness.errors",
    "Registry": "harness.registry",
    "derive_seed": "harness.seeding",
    # tasks
    "TaskSpec": "harness.spec.task",
    "Bucket": "harness.spec.buckets",
    "ChatTurn": "harness.spec.chat",
    "load_spec": "harness.tasks.loader",
    "TaskProvider": "harness.tasks.providers",
    # generators, metrics, extractors
    "generator": "harness.generators.registry",
    "GENERATORS": "harness.generators.registry",
    "Slot": "harness.generators.registry",
    "metric": "harness.answers.metrics",
    "METRICS": "harness.answers.metrics",
    "normalize_answer": "harness.answers.metrics",
    "extractor": "harness.answers.extract",
    "EXTRACTORS": "harness.answers.extract",
    # analyses and gaps
    "analysis": "harness.analyses.registry",
    "ANALYSES": "harness.analyses.registry",
    "AnalysisParams": "harness.analyses.registry",
    "AnalysisResult": "harness.analyses.registry",
    "SampleRecord": "harness.scoring.records",
    "percentile_ci": "harness.scoring.stats",
    "gap": "harness.gaps.registry",
    "GAPS": "harness.gaps.registry",
    "GapContext": "harness.gaps.registry",
    "proportion": "harness.scoring.intervals",
    "diff_interval": "harness.scoring.intervals",
    "ratio_interval": "harness.scoring.intervals",
    # strategies
    "strategy": "harness.strategies.registry",
    "STRATEGIES": "harness.strategies.registry",
    "StrategyInput": "harness.strategies.base",
    # model backends
    "LM": "harness.lm",
    "ModelIdentity": "harness.lm",
    "OnDone": "harness.lm",
    "BACKENDS": "harness.models.backends",
    "BackendFactory": "harness.models.backends",
    "GenerateRequest": "harness.requests",
    "GenerateResponse": "harness.requests",
    "LoglikelihoodRequest": "harness.requests",
    "LoglikelihoodResponse": "harness.requests",
    "RollingRequest": "harness.requests",
    # output types
    "OutputType": "harness.outputs.base",
    "OUTPUT_TYPES": "harness.outputs",
    # testing a package
    "check_task_package": "harness.testing",
    "ScriptedLM": "harness.testing",
    "scripted_backend": "harness.testing",
}

if TYPE_CHECKING:
    from harness.analyses.registry import ANALYSES, AnalysisParams, AnalysisResult, analysis
    from harness.answers.extract import EXTRACTORS, extractor
    from harness.answers.metrics import METRICS, metric, normalize_answer
    from harness.errors import HarnessError, ModelLoadError, TaskSpecError
    from harness.gaps.registry import GAPS, GapContext, gap
    from harness.generators.registry import GENERATORS, Slot, generator
    from harness.lm import LM, ModelIdentity, OnDone
    from harness.models.backends import BACKENDS, BackendFactory
    from harness.outputs import OUTPUT_TYPES
    from harness.outputs.base import OutputType
    from harness.registry import Registry
    from harness.requests import (
        GenerateRequest,
        GenerateResponse,
        LoglikelihoodRequest,
        LoglikelihoodResponse,
        RollingRequest,
    )
    from harness.scoring.intervals import diff_interval, proportion, ratio_interval
    from harness.scoring.records import SampleRecord
    from harness.scoring.stats import percentile_ci
    from harness.seeding import derive_seed
    from harness.spec.buckets import Bucket
    from harness.spec.chat import ChatTurn
    from harness.spec.task import TaskSpec
    from harness.strategies.base import StrategyInput
    from harness.strategies.registry import STRATEGIES, strategy
    from harness.tasks.loader import load_spec
    from harness.tasks.providers import TaskProvider
    from harness.testing import ScriptedLM, check_task_package, scripted_backend


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'harness.api' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = ["ANALYSES", "analysis", "AnalysisParams", "AnalysisResult", "BackendFactory",
    "BACKENDS", "Bucket", "ChatTurn", "check_task_package", "derive_seed", "diff_interval",
    "extractor", "EXTRACTORS", "gap", "GapContext", "GAPS", "GenerateRequest", "GenerateResponse",
    "generator", "GENERATORS", "HarnessError", "LM", "load_spec", "LoglikelihoodRequest",
    "LoglikelihoodResponse", "metric", "METRICS", "ModelIdentity", "ModelLoadError",
    "normalize_answer", "OnDone", "OUTPUT_TYPES", "OutputType", "percentile_ci", "proportion",
    "ratio_interval", "Registry", "RollingRequest", "SampleRecord", "scripted_backend",
    "ScriptedLM", "Slot", "STRATEGIES", "strategy", "StrategyInput", "TaskProvider", "TaskSpec",
    "TaskSpecError"]
