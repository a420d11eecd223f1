"""Prompt templates: Jinja2 in a sandboxed, immutable environment (no code, no attribute tricks)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment


@lru_cache(maxsize=1)
def _env() -> ImmutableSandboxedEnvironment:
    return ImmutableSandboxedEnvironment(
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False
    )


@lru_cache(maxsize=4096)
def compile_template(source: str) -> jinja2.Template:
    """Compile once; raises ``jinja2.TemplateSyntaxError`` on bad syntax."""
    return _env().from_string(source)


def render(source: str, fields: Mapping[str, Any]) -> str:
    """Render ``source`` with the item's fields; an unknown field raises ``jinja2.UndefinedError``."""
    return compile_template(source).render(**fields)
