"""genharness: measure how language models generalize beyond what they have seen.

Public API (re-exported from private modules, each imported on first use, so that importing a
leaf such as ``harness.errors`` loads nothing else)::

    from harness import RunConfig, evaluate, load_spec, TaskIndex, LM

Code that extends the harness (plugins: generators, metrics, backends, ...) imports from
``harness.api`` instead.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name → the module that defines it
_EXPORTS: dict[str, str] = {
    "RunConfig": "harness.config",
    "HarnessError": "harness.errors",
    "evaluate": "harness.run.evaluate",
    "LM": "harness.lm",
    "ChatTurn": "harness.spec.chat",
    "ModelIdentity": "harness.lm",
    "GenerateRequest": "harness.requests",
    "GenerateResponse": "harness.requests",
    "LoglikelihoodRequest": "harness.requests",
    "LoglikelihoodResponse": "harness.requests",
    "RollingRequest": "harness.requests",
    "load_spec": "harness.tasks.loader",
    "TaskIndex": "harness.tasks.index",
    "TaskRef": "harness.tasks.index",
    "TaskSpec": "harness.spec.task",
}

if TYPE_CHECKING:
    from harness.config import RunConfig
    from harness.errors import HarnessError
    from harness.lm import LM, ModelIdentity
    from harness.requests import (
        GenerateRequest,
        GenerateResponse,
        LoglikelihoodRequest,
        LoglikelihoodResponse,
        RollingRequest,
    )
    from harness.run.evaluate import evaluate
    from harness.spec.chat import ChatTurn
    from harness.spec.task import TaskSpec
    from harness.tasks.index import TaskIndex, TaskRef
    from harness.tasks.loader import load_spec


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "LM", "ChatTurn", "GenerateRequest", "GenerateResponse", "HarnessError", "LoglikelihoodRequest",
    "LoglikelihoodResponse", "ModelIdentity", "RollingRequest", "RunConfig", "TaskIndex",
    "TaskRef", "TaskSpec", "__version__", "evaluate", "load_spec",
]
