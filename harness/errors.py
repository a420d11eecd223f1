"""User-facing errors: each carries one line that names what to fix.

The CLI prints ``str(error)`` and exits with status 2; no traceback reaches the user.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol


class HarnessError(Exception):
    """An error caused by the user's input or environment, reported as one line."""


class TaskSpecError(HarnessError):
    """A task file is malformed or invalid (message: ``file: key.path: problem``)."""


class UnknownNameError(HarnessError):
    """A task, suite, generator, metric or model name that does not exist."""


class ModelLoadError(HarnessError):
    """A model could not be found or loaded (message names what was tried)."""


class Interrupted(HarnessError):
    """Ctrl-C during a run (message: how far it got and that a rerun resumes; exit 130)."""


def did_you_mean(name: str, candidates: Iterable[str], n: int = 3) -> str:
    """Return ``" (did you mean: a, b?)"`` for close matches of *name*, or ``""``."""
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=n, cutoff=0.6)
    return f" (did you mean: {', '.join(close)}?)" if close else ""


class _HasErrors(Protocol):
    def errors(self) -> Sequence[Mapping[str, Any]]: ...


def first_problem(e: _HasErrors, whole: str = "") -> str:
    """``key.path: message`` of a pydantic ``ValidationError``'s first error, on one line
    (``whole`` names the location when the error is about the whole input)."""
    err = e.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or whole
    return f"{where}: {' '.join(str(err['msg']).split())}"
