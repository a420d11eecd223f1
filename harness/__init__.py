"""genharness: measure how language models generalize beyond what they have seen.

Public API (re-exported from private modules)::

    from harness import RunConfig, evaluate, load_spec, TaskIndex, LM
"""

from __future__ import annotations

__version__ = "0.1.0"

from harness.config import RunConfig
from harness.errors import HarnessError
from harness.evaluate import evaluate
from harness.models.base import LM, ChatTurn, ModelIdentity
from harness.requests import (
    GenerateRequest,
    GenerateResponse,
    LoglikelihoodRequest,
    LoglikelihoodResponse,
    RollingRequest,
)
from harness.tasks.loader import load_spec
from harness.tasks.registry import TaskIndex, TaskRef
from harness.tasks.spec import TaskSpec

__all__ = [
    "LM", "ChatTurn", "GenerateRequest", "GenerateResponse", "HarnessError", "LoglikelihoodRequest",
    "LoglikelihoodResponse", "ModelIdentity", "RollingRequest", "RunConfig", "TaskIndex",
    "TaskRef", "TaskSpec", "__version__", "evaluate", "load_spec",
]
