"""The regex compiler of task files: ``scoring.extract.pattern`` and
``fields.difficulty_pattern`` are compiled here, once per pattern."""

from __future__ import annotations

import re
from functools import lru_cache

from harness.errors import TaskSpecError


@lru_cache(maxsize=256)
def compile_pattern(pattern: str, key: str = "scoring.extract.pattern") -> re.Pattern[str]:
    """Compile a task-file regex once; a bad pattern is a task-spec error naming ``key``."""
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise TaskSpecError(f"{key}: invalid regex {pattern!r}: {exc}") from None
