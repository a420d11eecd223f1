"""Prompt templates: Jinja2 in a sandboxed, immutable environment (no code, no attribute tricks)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import jinja2
from jinja2 import nodes
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


def check_template(source: str) -> None:
    """Raise ``jinja2.TemplateSyntaxError`` for bad syntax or an unknown filter or test, as
    compiling would, without generating code (loading 1,000 task files compiles nothing)."""
    env = _env()
    for node in env.parse(source).find_all((nodes.Filter, nodes.Test)):
        kind, known = (("filter", env.filters) if isinstance(node, nodes.Filter)
                       else ("test", env.tests))
        if node.name not in known:
            raise jinja2.TemplateAssertionError(f"No {kind} named {node.name!r}.", node.lineno)


def render(source: str, fields: Mapping[str, Any]) -> str:
    """Render ``source`` with the item's fields (unknown field: ``jinja2.UndefinedError``)."""
    return compile_template(source).render(**fields)
