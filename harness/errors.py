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


class ItemError(HarnessError):
    """Code a task runs (its generator, extractor or metric) failed on one item: the message,
    and where (``item``: the item id, ``bucket``: its label, ``template``: the template id when
    a prompt was made; ``answer``: the model's answer an extractor or metric failed on);
    ``located`` adds the task and run seed and the command that makes the failure again. The
    exception that was raised is its ``__cause__`` (shown with ``GENHARNESS_TRACEBACK=1``)."""

    def __init__(self, message: str, item: str, bucket: str, template: str | None = None,
                 answer: str | None = None) -> None:
        super().__init__(message)
        self.message, self.item, self.bucket, self.template = message, item, bucket, template
        self.answer = answer

    def located(self, task: str, seed: int) -> str:
        """The message with task, template, bucket, item and seed, and ``harness tasks sample``
        with the options that make this item (and, with ``--score``, its answer's scoring)
        fail again, on one line."""
        index = self.item.rpartition("/")[2] if self.item.startswith(f"{self.bucket}/") \
            else self.item
        tpl = f"template {self.template}, " if self.template else ""
        cmd = (f"harness tasks sample {task} --bucket {self.bucket} --item {index} --seed {seed}"
               + (f" --template {self.template}" if self.template else ""))
        if self.answer is not None:
            cmd += (f" --score {shell_word(self.answer)}" if len(self.answer) <= ANSWER_SHOWN
                    else f" --score ANSWER (ANSWER: the model's {len(self.answer):,}-character "
                    "answer, too long to repeat here)")
        named = "" if self.message.startswith(f"{task}: ") else f"task {task}, "
        return (f"{self.message} ({named}{tpl}bucket {self.bucket}, item {index}, seed {seed}; "
                f"again: {cmd}; its stack: {TRACEBACK_ENV}=1)")


ANSWER_SHOWN = 500  # longest answer ItemError.located repeats in the command it gives


def shell_word(text: str) -> str:
    """``text`` as one shell word on one line: quoted with ``'...'``, or, when it holds a line
    break or another unprintable character, with bash's ``$'...'`` and backslash escapes."""
    import shlex

    if text.isprintable():
        return shlex.quote(text)
    named = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t", "\r": "\\r"}
    return "$'" + "".join(named.get(c) or (c if c.isprintable() else
                                           f"\\x{ord(c):02x}" if ord(c) < 256 else
                                           f"\\u{ord(c):04x}" if ord(c) < 65536 else
                                           f"\\U{ord(c):08x}") for c in text) + "'"


TRACEBACK_ENV = "GENHARNESS_TRACEBACK"  # set to 1: a plugin's failure prints its stack too


def traceback_wanted() -> bool:
    """Whether ``GENHARNESS_TRACEBACK`` (or ``--traceback``) asks for the stack of a failure."""
    import os

    return os.environ.get(TRACEBACK_ENV, "").strip() not in ("", "0")


def print_stack(e: BaseException) -> None:
    """When asked for (``traceback_wanted``): the stack of what ``e`` was raised from (its
    cause, or ``e`` itself), on stderr, after the one-line message."""
    if not traceback_wanted():
        return
    import sys
    import traceback

    cause = e.__cause__ or e.__context__ or e
    sys.stderr.write("".join(traceback.format_exception(cause)))


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
