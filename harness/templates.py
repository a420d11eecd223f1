"""Prompt templates: Jinja2 in a sandboxed, immutable environment (no code, no attribute tricks),
with limits.

Limits (per render): the output and every intermediate string or list hold at most
``MAX_RENDER_CHARS`` characters (items); a render stops after ``MAX_RENDER_SECONDS`` seconds
(checked at every loop step, call, operator and filter); ``{% include %}``, ``{% import %}`` and
``{% extends %}`` are refused (a template is one self-contained string). Any failure while
rendering (``{{ 1/0 }}``, ``'a' + 1``, an undefined field, recursion, a limit) is a
``TemplateRenderError``: one line, which ``harness.outputs.prompts`` prefixes with the task,
template and item.
"""

from __future__ import annotations

import contextvars
import operator
import re
import time
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

from harness.errors import HarnessError

MAX_RENDER_CHARS = 10_000_000  # characters of output, or of any string/list made on the way
MAX_RENDER_SECONDS = 2.0  # wall-clock seconds per render
_ITER = "__harness_iter"  # the global every for-loop's iterable is wrapped in
_DEADLINE: contextvars.ContextVar[float] = contextvars.ContextVar("template_deadline",
                                                                  default=float("inf"))


class TemplateRenderError(HarnessError):
    """A template failed to render (one line: what went wrong)."""


def _tick() -> None:
    if time.monotonic() > _DEADLINE.get():
        raise TemplateRenderError(f"rendering took over {MAX_RENDER_SECONDS:g} s (time limit)")


def _size(value: Any) -> int:
    return len(value) if isinstance(value, (str, bytes, list, tuple, dict)) else 0


def _checked(value: Any) -> Any:
    if _size(value) > MAX_RENDER_CHARS:
        raise TemplateRenderError(f"a value of over {MAX_RENDER_CHARS:,} characters/items "
                                  "(size limit)")
    return value


_WIDTHS = re.compile(r"%[-#0 +]*(\d*)(?:\.(\d*))?")


def _check_format(fmt: str, args: Iterable[Any]) -> None:
    """Refuse a printf-style format whose widths (or ``*`` arguments) exceed the size limit."""
    widths = [int(w) for pair in _WIDTHS.findall(fmt) for w in pair if w]
    widths += [a for a in args if isinstance(a, int) and not isinstance(a, bool)]
    if any(abs(w) > MAX_RENDER_CHARS for w in widths):
        raise TemplateRenderError(f"a format width over {MAX_RENDER_CHARS:,} (size limit)")


def _counted(iterable: Iterable[Any]) -> Iterator[Any]:
    for n, x in enumerate(iterable):
        if not n & 63:
            _tick()
        yield x


_BINOPS: dict[str, Any] = {"+": operator.add, "-": operator.sub, "*": operator.mul,
                           "/": operator.truediv, "//": operator.floordiv, "%": operator.mod,
                           "**": operator.pow}


class LimitedSandbox(ImmutableSandboxedEnvironment):
    """The immutable sandbox with size and time limits on calls, operators and filters."""

    intercepted_binops = frozenset(_BINOPS)

    def call_binop(self, context: jinja2.runtime.Context, operator: str, left: Any,
                   right: Any) -> Any:
        """Check sizes before ``*`` and ``**`` and after every operator."""
        _tick()
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if _size(seq) and isinstance(n, int) and _size(seq) * n > MAX_RENDER_CHARS:
                    raise TemplateRenderError(
                        f"a value of over {MAX_RENDER_CHARS:,} characters/items (size limit)")
        if operator == "**" and isinstance(right, int) and isinstance(left, int) \
                and abs(left) > 1 and right * max(abs(left).bit_length(), 1) > 1_000_000:
            raise TemplateRenderError("a number of over a million bits (size limit)")
        if operator == "%" and isinstance(left, str):
            _check_format(left, right if isinstance(right, tuple) else (right,))
        return _checked(_BINOPS[operator](left, right))

    def call(__self, __context: jinja2.runtime.Context, __obj: Any, *args: Any,  # noqa: N805
             **kwargs: Any) -> Any:
        """Every call (macros, methods, ``range``) checks the time and the result's size."""
        _tick()
        return _checked(super().call(__context, __obj, *args, **kwargs))


_FORMAT = jinja2.filters.do_format


def _limited_filter(fn: Any) -> Any:
    """A filter that checks the time and its numeric arguments before, and the size after."""

    skip = 2 if hasattr(fn, "jinja_pass_arg") else 1  # (context,) value, arguments...

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        _tick()
        for a in (*args[skip:], *kwargs.values()):
            if isinstance(a, int) and not isinstance(a, bool) and abs(a) > MAX_RENDER_CHARS:
                raise TemplateRenderError(f"a filter argument over {MAX_RENDER_CHARS:,} "
                                          "(size limit)")
        value, rest = (args[skip - 1], args[skip:]) if len(args) >= skip else (None, ())
        if fn is _FORMAT and isinstance(value, str):
            _check_format(value, (*rest, *kwargs.values()))
        if isinstance(value, str) and any(isinstance(a, str) for a in rest):
            longest = max(len(a) for a in rest if isinstance(a, str))
            if len(value) * max(longest, 1) > 64 * MAX_RENDER_CHARS:
                raise TemplateRenderError("a filter result too large (size limit)")
        return _checked(fn(*args, **kwargs))

    for attr in ("jinja_pass_arg",):  # keep pass_context/pass_environment markers
        if hasattr(fn, attr):
            setattr(wrapped, attr, getattr(fn, attr))
    return wrapped


@lru_cache(maxsize=1)
def _env() -> LimitedSandbox:
    env = LimitedSandbox(
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False
    )
    env.filters = {name: _limited_filter(fn) for name, fn in env.filters.items()}
    env.globals[_ITER] = _counted
    return env


_REFUSED = (nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)


def _parse(source: str) -> nodes.Template:
    """Parse ``source``; every for-loop iterates through the time-checking ``_counted``."""
    tree = _env().parse(source)
    for loop in tree.find_all(nodes.For):
        loop.iter = nodes.Call(nodes.Name(_ITER, "load"), [loop.iter], [], None, None,
                               lineno=loop.lineno)
    return tree


@lru_cache(maxsize=4096)
def compile_template(source: str) -> jinja2.Template:
    """Compile once; raises ``jinja2.TemplateSyntaxError`` on bad syntax or a refused tag."""
    check_template(source)
    return _env().from_string(_parse(source))


def check_template(source: str) -> None:
    """Raise ``jinja2.TemplateSyntaxError`` for bad syntax, an unknown filter or test, or an
    include/import/extends tag, as compiling would, without generating code (loading 1,000 task
    files compiles nothing)."""
    env = _env()
    tree = env.parse(source)
    for refused in tree.find_all(_REFUSED):
        tag = "import" if isinstance(refused, nodes.FromImport) else type(refused).__name__.lower()
        raise jinja2.TemplateAssertionError(
            f"{{% {tag} %}} is not allowed (a template is one self-contained string)",
            refused.lineno)
    for node in tree.find_all((nodes.Filter, nodes.Test)):
        assert isinstance(node, (nodes.Filter, nodes.Test))
        kind, known = (("filter", env.filters) if isinstance(node, nodes.Filter)
                       else ("test", env.tests))
        if node.name not in known:
            raise jinja2.TemplateAssertionError(f"No {kind} named {node.name!r}.", node.lineno)


def template_variables(source: str) -> set[str]:
    """The item fields ``source`` reads (names it neither sets nor gets from Jinja's globals)."""
    from jinja2 import meta

    env = _env()
    return set(meta.find_undeclared_variables(env.parse(source))) - set(env.globals)


# every character str.splitlines() breaks at, written as its escape
_LINE_BREAKS = {ord(c): repr(c)[1:-1] for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"}


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line (newlines escaped), cut to ``limit`` characters."""
    flat = text.translate(_LINE_BREAKS)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def render(source: str, fields: Mapping[str, Any]) -> str:
    """Render ``source`` with the item's fields under the limits; any failure is a one-line
    ``TemplateRenderError`` (bad syntax: ``jinja2.TemplateSyntaxError``, as before)."""
    template = compile_template(source)
    token = _DEADLINE.set(time.monotonic() + MAX_RENDER_SECONDS)
    try:
        out: list[str] = []
        size = 0
        for chunk in template.generate(**fields):
            size += len(chunk)
            if size > MAX_RENDER_CHARS:
                raise TemplateRenderError(
                    f"output over {MAX_RENDER_CHARS:,} characters (size limit)")
            out.append(chunk)
        return "".join(out)
    except TemplateRenderError:
        raise
    except jinja2.UndefinedError as e:
        raise TemplateRenderError(one_line(e.message or "undefined variable")) from None
    except jinja2.exceptions.SecurityError as e:
        raise TemplateRenderError(f"not allowed in a template: {one_line(str(e))}") from None
    except RecursionError:
        raise TemplateRenderError("recursion too deep") from None
    except MemoryError:
        raise TemplateRenderError("out of memory (size limit)") from None
    except Exception as e:  # any runtime error of the template (1/0, 'a' + 1, ...)
        raise TemplateRenderError(f"{type(e).__name__}: {one_line(str(e))}") from None
    finally:
        _DEADLINE.reset(token)
