"""Checks that make ``harness tasks validate`` mean it: what would fail once items are made,
caught when the task file loads (``TaskSpecError``: ``file: key.path: problem``, one line).

- regexes compile, are not refused (nested repeats, huge counted repeats) and stay within their
  time bound on hostile probe texts (``harness.spec.patterns``);
- bucket values, edges and ``roles`` numbers are finite;
- generator sources: ``source.params`` (with each ``source.grid`` point) are checked against the
  generator function's signature and type annotations (pydantic, strict), sizes are bounded
  (``LIMITS``), the work one item takes is within the generator's budget (its registered
  estimate, ``harness.generators.registry.WORK_BUDGET``), template variables and
  ``fields.target`` are fields the generator yields (not for a generator that reads a data file,
  a ``path`` parameter: its records carry the file's fields), and few-shot ``k`` is at most the
  exemplar pool.

File and dataset sources are not read here: what their records hold is known only at run time.
``check_items`` (``harness tasks validate``) goes further and makes one item per bucket.
"""

from __future__ import annotations

import inspect
import math
import typing
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from harness.errors import HarnessError, TaskSpecError, did_you_mean
from harness.generators.registry import WORK_BUDGET, GeneratorInfo, estimate_work
from harness.spec.buckets import Bucket, build_buckets
from harness.spec.patterns import check_pattern
from harness.spec.sources import GeneratorSource
from harness.spec.task import TaskSpec


@dataclass(frozen=True)
class Limits:
    """Largest sizes a generator task may ask for (so a typo fails at once instead of hanging)."""

    per_bucket: int = 100_000  # source.per_bucket
    pool_size: int = 100_000  # fewshot.pool_size
    k: int = 1_000  # fewshot.k and each condition's k
    buckets: int = 10_000  # number of buckets
    difficulty: int = 100_000  # |difficulty| of a generator bucket (values and edges)
    bucket_values: int = 100_000  # integer values one edge bucket spans
    int_param: int = 10_000  # |int| generator parameter (names ending in "seed": 2**63)
    str_param: int = 100_000  # characters of a str generator parameter
    list_param: int = 10_000  # items of a list generator parameter (and of a grid axis)
    grid_points: int = 10_000  # combinations of source.grid


LIMITS = Limits()
# generators whose difficulty or parameters are counted in tokens: larger bounds
_WIDE = {("passkey", "difficulty"): 1 << 20, ("passkey", "window"): 1 << 20,
         ("passkey", "reserve"): 1 << 20}


def check_numbers(spec: TaskSpec, path: Path | str) -> None:
    """Regexes compile and bucket numbers are finite (before buckets are built)."""
    _check_regexes(spec, path)
    _check_finite(spec, path)


def check_generator(spec: TaskSpec, gen: GeneratorInfo, path: Path | str) -> None:
    """A generator source's sizes, parameters, work per item, template variables and few-shot
    pool."""
    if not isinstance(spec.source, GeneratorSource):
        return
    problems: list[str] = []  # every problem, not the first: the checks do not depend on

    def passed(check: Callable[..., None], *args: Any) -> bool:  # each other (but work)
        try:
            check(*args)
        except TaskSpecError as e:
            problems.extend(str(e).splitlines())
            return False
        return True

    src = spec.source
    sized = passed(_check_sizes, spec, src, path)
    given = tuple(n for n, on in (("count_tokens", gen.needs_tokenizer),
                                  ("slot", gen.needs_slot)) if on)  # passed by the harness
    if passed(_check_params, src, gen.fn, given, path) and sized:
        passed(check_work, spec, src, gen, path)  # (estimates need parameters that fit)
    if gen.fields and "path" not in inspect.signature(gen.fn).parameters:
        passed(_check_variables, spec, set(gen.fields), src.name, path)
    passed(check_pool, spec, path)
    if problems:
        raise TaskSpecError("\n".join(problems))


_WORK_CHECKS = 20_000  # (bucket, grid point) pairs whose work is estimated, at most


def check_work(spec: TaskSpec, src: GeneratorSource, gen: GeneratorInfo, path: Path | str,
               block: str = "source") -> None:
    """Each bucket's smallest and largest difficulty, with each grid point, within the
    generator's work budget (``harness.generators.registry.WORK_BUDGET``)."""
    from harness.items import grid_points

    if gen.work is None:
        return
    points = grid_points(src.grid) or [{}]
    done = 0
    for b in build_buckets(spec.buckets, spec.roles):
        values = b.values()
        for value in dict.fromkeys(values[:1] + values[-1:]):
            for point in points:
                done += 1
                if done > _WORK_CHECKS:
                    return  # the per-item time budget covers the rest
                try:
                    found = estimate_work(gen, value, {**src.params, **point})
                except (TypeError, ValueError, ArithmeticError) as e:  # e.g. "n_rules: ..."
                    name, _, why = _flat(str(e)).partition(": ")
                    where = ("grid" if name in point else "params") if why and name in (
                        inspect.signature(gen.fn).parameters) else ""
                    raise TaskSpecError(
                        f"{path}: {block}.{where + '.' + name if where else 'params'}: generator "
                        f"{src.name!r}: {why if where else _flat(str(e))}") from None
                if found is not None and found[0] > WORK_BUDGET:
                    steps, key = found
                    field = (f"{block}.grid.{key}" if key in point else "buckets"
                             if key == "difficulty" else f"{block}.params.{key}")
                    raise TaskSpecError(
                        f"{path}: {field}: generator {src.name!r} would take "
                        f"about {steps:.2g} steps per item at difficulty {value} (bucket "
                        f"{b.label}), over its work budget of {WORK_BUDGET:,} "
                        f"(harness.generators.registry.WORK_BUDGET); lower {key}")


def _check_regexes(spec: TaskSpec, path: Path | str) -> None:
    for key, pattern in (("scoring.extract.pattern", spec.scoring.extract.pattern),
                         ("fields.difficulty_pattern", spec.fields.difficulty_pattern)):
        if pattern is not None:
            try:
                check_pattern(pattern, key)
            except TaskSpecError as e:
                raise TaskSpecError(f"{path}: {_flat(str(e))}") from None
            except (OverflowError, RecursionError, ValueError) as e:
                raise TaskSpecError(f"{path}: {key}: invalid regex: {_flat(str(e))}") from None


def _flat(text: str) -> str:
    from harness.templates import one_line

    return one_line(text)


def _check_finite(spec: TaskSpec, path: Path | str) -> None:
    numbers: list[tuple[str, Any]] = []
    for key in ("values", "edges"):
        numbers += [(f"buckets.{key}.{i}", v)
                    for i, v in enumerate(getattr(spec.buckets, key) or [])]
    numbers += [(f"roles.id.{i}", v) for i, v in enumerate(spec.roles.id or [])]
    numbers.append(("roles.id_max", spec.roles.id_max))
    numbers += [(f"fewshot.conditions.{c}.{key}.{i}", v)
                for c, cond in enumerate(spec.fewshot.conditions)
                for key in ("pool", "evaluate") for i, v in enumerate(getattr(cond, key) or [])]
    for key, v in numbers:
        if isinstance(v, float) and not math.isfinite(v):
            raise TaskSpecError(f"{path}: {key}: must be a finite number, not {v}")
    if len(spec.buckets.values or spec.buckets.edges or []) > LIMITS.buckets:
        raise TaskSpecError(f"{path}: buckets: more than {LIMITS.buckets:,} buckets")


def _check_sizes(spec: TaskSpec, src: GeneratorSource, path: Path | str) -> None:
    def over(key: str, value: int, limit: int) -> None:
        if abs(value) > limit:
            raise TaskSpecError(f"{path}: {key}: {value} is over the limit of {limit:,} "
                                "(harness.tasks.item_checks.LIMITS)")

    over("source.per_bucket", src.per_bucket, LIMITS.per_bucket)
    over("fewshot.pool_size", spec.fewshot.pool_size, LIMITS.pool_size)
    over("fewshot.k", spec.fewshot.k, LIMITS.k)
    for i, cond in enumerate(spec.fewshot.conditions):
        over(f"fewshot.conditions.{i}.k", cond.k or 0, LIMITS.k)
    top = _WIDE.get((src.name, "difficulty"), LIMITS.difficulty)
    for key in ("values", "edges"):
        for i, v in enumerate(getattr(spec.buckets, key) or []):
            over(f"buckets.{key}.{i}", int(v), top)
    edges = spec.buckets.edges or []
    for i, (a, b) in enumerate(zip(edges, edges[1:], strict=False)):
        over(f"buckets.edges.{i + 1}", math.ceil(b) - math.ceil(a), LIMITS.bucket_values)
    points = 1
    for key, values in src.grid.items():
        over(f"source.grid.{key}", len(values), LIMITS.list_param)
        points *= max(len(values), 1)
    over("source.grid", points, LIMITS.grid_points)
    for key, value in [*src.params.items(), *((f"{k}.{i}", v) for k, vs in src.grid.items()
                                              for i, v in enumerate(vs))]:
        _check_value(f"source.{'grid' if '.' in key else 'params'}.{_flat(key)}", value, src.name,
                     path, over)


def _check_value(key: str, value: Any, gen: str, path: Path | str,
                 over: Callable[[str, int, int], None]) -> None:
    name = key.split(".")[2]
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int):
        limit = (1 << 63) if name.endswith("seed") else _WIDE.get((gen, name), LIMITS.int_param)
        over(key, value, limit)
    elif isinstance(value, float) and not math.isfinite(value):
        raise TaskSpecError(f"{path}: {key}: must be a finite number, not {value}")
    elif isinstance(value, str):
        over(key, len(value), LIMITS.str_param)
    elif isinstance(value, (list, dict)):
        over(key, len(value), LIMITS.list_param)
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for k, v in items:
            _check_value(f"{key}.{_flat(str(k))}", v, gen, path, over)


@lru_cache(maxsize=256)
def params_model(fn: Callable[..., Any], given: tuple[str, ...]) -> type[BaseModel]:
    """A pydantic model of ``fn``'s keyword parameters (after ``rng`` and ``difficulty``; those
    the harness passes, ``given``, left out); unknown keys are refused unless the
    function takes ``**kwargs``; unresolvable annotations count as ``Any``."""
    sig = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # a plugin's annotation that does not resolve: check names only
        hints = {}
    fields: dict[str, Any] = {}
    open_kwargs = False
    for n, p in enumerate(sig.parameters.values()):
        if p.kind is p.VAR_KEYWORD:
            open_kwargs = True
            continue
        if p.kind in (p.VAR_POSITIONAL, p.POSITIONAL_ONLY) or n < 2:
            continue
        if p.name in given:
            continue
        default = ... if p.default is p.empty else p.default
        fields[p.name] = (hints.get(p.name, Any), default)
    config = ConfigDict(extra="allow" if open_kwargs else "forbid", strict=True,
                        arbitrary_types_allowed=True)
    model: type[BaseModel] = create_model(f"{getattr(fn, '__name__', 'generator')}_params",
                                          __config__=config, **fields)
    return model


def _check_params(src: GeneratorSource, fn: Callable[..., Any], given: tuple[str, ...],
                  path: Path | str) -> None:
    from harness.items import grid_points

    model = params_model(fn, given)
    for point in grid_points(src.grid)[:64] or [{}]:  # every key and type, a few combinations
        try:
            model.model_validate({**src.params, **point})
        except ValidationError as e:
            err = e.errors()[0]
            loc = _flat(".".join(str(x) for x in err["loc"]))
            block = "grid" if err["loc"] and err["loc"][0] in point else "params"
            msg = ("unknown parameter of generator " + repr(src.name)
                   + f" (it takes: {', '.join(model.model_fields) or 'none'})"
                   if err["type"] == "extra_forbidden" else
                   f"required by generator {src.name!r}" if err["type"] == "missing"
                   else _flat(err["msg"]))
            raise TaskSpecError(f"{path}: source.{block}.{loc}: {msg}") from None


def _check_variables(spec: TaskSpec, fields: set[str], gen: str, path: Path | str) -> None:
    from harness.outputs import output_type
    from harness.templates import template_variables

    fields = fields | {spec.fields.difficulty}
    problems = []
    for i, t in enumerate(spec.templates):
        for key, src in (("prompt", t.prompt), ("target", t.target)):
            if src is None:
                continue
            unknown = sorted(template_variables(src) - fields)
            if unknown:
                close = did_you_mean(unknown[0], fields)
                problems.append(
                    f"{path}: templates.{i}.{key}: {_flat(repr(unknown[0]))} is not a field of "
                    f"generator {gen!r}{close} (fields: {', '.join(sorted(fields))})")
    if problems:
        raise TaskSpecError("\n".join(problems))
    needed = output_type(spec).fields_read(spec)  # e.g. output.choices_field, fields.target
    if any(t.target is None for t in spec.templates):
        needed.setdefault("fields.target", spec.fields.target)
    for key, name in needed.items():
        if name not in fields:
            raise TaskSpecError(f"{path}: {key}: {name!r} is not a field of generator {gen!r} "
                                f"(fields: {', '.join(sorted(fields))})")


def check_pool(spec: TaskSpec, path: Path | str) -> None:
    """Few-shot k at most the exemplars a generator pool holds (items per pool bucket times the
    buckets a condition draws from)."""
    from harness.items import labels, pool_buckets

    pool_src = spec.fewshot.source or spec.source
    if not isinstance(pool_src, GeneratorSource):
        return
    buckets = build_buckets(spec.buckets, spec.roles)
    in_pool = pool_buckets(spec, buckets)
    per = -(-spec.fewshot.pool_size // max(len(in_pool), 1))
    wants = [("fewshot.k", spec.fewshot.k, None)] if not spec.fewshot.conditions else [
        (f"fewshot.conditions.{i}.k", c.k if c.k is not None else spec.fewshot.k, c.pool)
        for i, c in enumerate(spec.fewshot.conditions)]
    for key, k, pool in wants:
        allowed = labels(pool) or {b.label for b in buckets if b.role == "ID"}
        size = per * sum(b.label in allowed for b in in_pool)
        if k > size:
            raise TaskSpecError(f"{path}: {key}: k={k} but the exemplar pool holds {size} items "
                                f"({per} per bucket in {sorted(allowed)}; see "
                                "fewshot.pool_size)")


def check_items(spec: TaskSpec, path: Path | str) -> None:
    """One item per bucket of each generator source (the evaluated one, and a few-shot source
    of its own), each within the per-item time budget: a generator that fails or runs too long
    with these parameters is a ``TaskSpecError`` naming the file and the source (both sources'
    problems, when both fail)."""
    raise_problems(item_problems(spec, path))


def raise_problems(problems: list[tuple[str, Exception]]) -> None:
    if problems:  # the first cause kept: the plugin that raised can be named, its stack shown
        raise TaskSpecError("\n".join(line for line, _ in problems)) from problems[0][1]


def item_problems(spec: TaskSpec, path: Path | str) -> list[tuple[str, Exception]]:
    from harness.items import pool_buckets

    buckets = build_buckets(spec.buckets, spec.roles)
    sources = [("source", spec.source, buckets),
               ("fewshot.source", spec.fewshot.source, pool_buckets(spec, buckets))]
    problems: list[tuple[str, Exception]] = []
    for key, src, where in sources:
        if isinstance(src, GeneratorSource) and where:
            problem = _bucket_problem(spec, key, src, where, path)
            if problem is not None:
                problems.append(problem)
    return problems


def _bucket_problem(spec: TaskSpec, key: str, src: GeneratorSource, buckets: list[Bucket],
                    path: Path | str) -> tuple[str, Exception] | None:
    """Item 0 of each bucket, in order, up to the first that fails, which the line names: at
    ``buckets.values`` (or ``edges``) when another bucket works, so only this bucket's
    difficulty is refused; at the source (the parameters) when the last bucket fails too."""
    for pos, b in enumerate(buckets):
        e = _make_first(spec, key, src, b)
        if e is None:
            continue
        text = _flat(str(e))
        also = _make_first(spec, key, src, buckets[-1]) if pos == 0 and len(buckets) > 1 \
            else None
        if pos == 0 and (len(buckets) == 1 or also is not None):  # not this bucket alone
            tail = (f" and the last, bucket {buckets[-1].label}: the parameters, not one "
                    "bucket" if also is not None else "")
            return f"{path}: {text} (bucket {b.label}{tail})", e
        at = "values" if spec.buckets.values is not None else "edges"
        shown = text.removeprefix("source: ") if key == "source" else text
        return f"{path}: buckets.{at}: bucket {b.label}: {shown}", e
    return None


def _make_first(spec: TaskSpec, key: str, src: GeneratorSource, b: Bucket) -> HarnessError | None:
    """The error making item 0 of bucket ``b`` raises (the item the run makes first), if any."""
    from harness.items import GeneratedItems

    try:
        GeneratedItems(spec, key, src, [b], 0, 1, "validate")
    except HarnessError as e:
        return e
    return None
