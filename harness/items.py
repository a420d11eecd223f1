"""Spec + seed → items (id, record, difficulty, bucket), and few-shot exemplar selection.

Items of a generator source are made per bucket; item ``i`` of a bucket depends only on
(run seed, task seed, task, bucket, i), so ``--limit-per-bucket 20`` gives the first 20 of the
items a larger limit gives, and the items are made on demand (``GeneratedItems``) instead of
being held in memory. File and dataset sources keep, per bucket, the items with the smallest
seeded hash of their id (again a prefix property). Few-shot pools hold ID items only.
"""

from __future__ import annotations

import math
import random
from array import array
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

from harness import plugins
from harness.errors import HarnessError, ItemError
from harness.filelock import os_reason
from harness.generators.registry import CountTokens, Slot, get_generator, run_generator
from harness.seeding import derive_seed
from harness.sources.files import missing_data_hint, shown
from harness.sources.read import read_source
from harness.spec.buckets import Bucket, assign, build_buckets, format_value
from harness.spec.difficulty import parse_difficulty
from harness.spec.sources import GeneratorSource
from harness.spec.task import TaskSpec

FEWSHOT_ID_PREFIX = "fs:"  # ids of few-shot pool items start with this (never an evaluated id)


@dataclass(frozen=True)
class Instance:
    """One evaluation item."""

    id: str  # stable item id
    record: Mapping[str, Any]  # the item's fields (template variables)
    difficulty: float  # difficulty value
    bucket: Bucket  # bucket (with role) the item falls in


@dataclass(frozen=True)
class InstanceSet:
    """The items of one task for one run, and the few-shot pool."""

    buckets: list[Bucket]  # ordered buckets with roles
    items: Sequence[Instance]  # evaluation items (generator sources: made on demand, per bucket)
    pool: list[Instance]  # exemplar candidates (ID buckets only)
    dropped: int  # source records outside every bucket

    def count(self, allowed: Collection[str] | None = None) -> int:
        """Items in the buckets labelled ``allowed`` (None: all), without generating any."""
        if allowed is None:
            return len(self.items)
        if isinstance(self.items, GeneratedItems):
            return self.items.per_bucket * sum(b.label in allowed for b in self.items.buckets)
        return sum(1 for it in self.items if it.bucket.label in allowed)

    def id_ranks(self) -> array[int]:
        """For each item position, a rank that orders items by id within their bucket (what the
        aggregates sort by), computed without generating the items."""
        ranks = array("q", bytes(8 * len(self.items)))
        if isinstance(self.items, GeneratedItems):  # ids "<label>/<j>": contiguous per bucket
            per, ids = self.items.per_bucket, self.items.item_id
            for start in range(0, len(ranks) if per else 0, per):
                for r, i in enumerate(sorted(range(start, start + per), key=ids)):
                    ranks[i] = r
        else:
            items = self.items
            for r, i in enumerate(sorted(range(len(items)), key=lambda i: items[i].id)):
                ranks[i] = r
        return ranks


def _difficulty(rec: Mapping[str, Any], field: str, where: str, pattern: str | None = None
                ) -> float | None:
    if field not in rec:
        raise HarnessError(f"{where}: record has no difficulty field {field!r} (fields.difficulty)")
    if pattern is not None:  # e.g. "Level 3" → 3.0; no match → None (the record is dropped)
        return parse_difficulty(rec[field], pattern)
    try:
        return float(rec[field])
    except (TypeError, ValueError):
        raise HarnessError(
            f"{where}: difficulty field {field!r} is not a number: {rec[field]!r}") from None


class GeneratedItems(Sequence[Instance]):
    """The items of a generator source, made on demand rather than held in memory.

    Item ``i`` of a bucket depends only on (run seed, task seed, task, stream, bucket, i), so the
    sequence can make any item again at any time: iterating it (once per template and few-shot
    condition) regenerates the items in the same order, and memory does not grow with the number
    of items. Items are laid out bucket by bucket, ``per_bucket`` each.
    """

    def __init__(
        self, spec: TaskSpec, task: str, src: GeneratorSource, buckets: Sequence[Bucket],
        seed: int, per_bucket: int, stream: str, count_tokens: CountTokens | None = None,
        seed_task: str | None = None,
    ) -> None:
        self._gen = get_generator(src.name)
        self._spec, self._task, self._src, self._seed = spec, task, src, seed
        self._seed_task = seed_task or task  # whose items (``items_address``)
        self._stream, self._count_tokens = stream, count_tokens
        self._prefix = FEWSHOT_ID_PREFIX if stream == "fewshot" else ""  # of every item id
        self.buckets = list(buckets)  # the buckets the items fall in, in item order
        self.per_bucket = per_bucket  # items per bucket
        self._grid = grid_points(src.grid)
        self._values: list[list[int]] = []
        for b in self.buckets:
            values = b.values()
            if not values:
                raise HarnessError(f"{task}: bucket {b.label} holds no integer difficulty value")
            self._values.append(values)
        if per_bucket:  # bad generator params fail here, before any model call
            for pos in range(len(self.buckets)):
                self._make(pos, 0)

    def __len__(self) -> int:
        return self.per_bucket * len(self.buckets)

    @overload
    def __getitem__(self, i: int) -> Instance: ...

    @overload
    def __getitem__(self, i: slice) -> list[Instance]: ...

    def __getitem__(self, i: int | slice) -> Instance | list[Instance]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"item {i} of {n}")
        pos, j = divmod(i % n, self.per_bucket)
        return self._make(pos, j)

    def __iter__(self) -> Iterator[Instance]:
        for pos in range(len(self.buckets)):
            for j in range(self.per_bucket):
                yield self._make(pos, j)

    def item_id(self, i: int) -> str:
        """The id of item ``i`` (without generating it)."""
        pos, j = divmod(i, self.per_bucket)
        return f"{self._prefix}{self.buckets[pos].label}/{j}"

    def _make(self, pos: int, j: int) -> Instance:
        b, values = self.buckets[pos], self._values[pos]
        value = values[j % len(values)]
        s = derive_seed(self._seed, self._src.seed, self._seed_task, self._stream, b.label, j)
        params = self._src.params
        if self._grid:  # the j-th cell of the second axis: every cell gets an equal share
            params = {**params, **self._grid[j % len(self._grid)]}
        item = f"{self._prefix}{b.label}/{j}"
        where = f"{self._task}: generator {self._src.name!r}"
        slot = None
        if self._gen.needs_slot:  # the items of this bucket with this value and grid cell
            cells = len(self._grid) or 1
            slot = Slot(derive_seed(self._seed, self._src.seed, self._seed_task, self._stream,
                                    b.label, value, j % cells, "slot"),
                        j // math.lcm(len(values), cells))
        try:
            rec = run_generator(self._gen, s, value, params, self._count_tokens, slot)
        except (TypeError, ValueError, LookupError, ArithmeticError, AttributeError, RecursionError,
                MemoryError, RuntimeError, AssertionError) as e:
            # bad params (TypeError, ValueError) speak for themselves; a crash keeps its type
            what = (_one(str(e)) if isinstance(e, (TypeError, ValueError)) and str(e)
                    else plugins.one_line(e))
            raise ItemError(f"{where}: {what}{_data_hint(e, params)}", item, b.label) from e
        except OSError as e:  # e.g. a data file whose name is too long for the system
            what = (f"cannot read {shown(e.filename)}: {os_reason(e)}" if e.filename
                    else plugins.one_line(e))
            raise ItemError(f"{where}: {what}", item, b.label) from e
        except HarnessError as e:  # e.g. a data file neither in the mirror nor downloadable
            raise ItemError(f"{where}: {_one(str(e))}{_data_hint(e, params)}", item,
                            b.label) from e
        if not isinstance(rec, dict):
            raise ItemError(f"{where}: returned {type(rec).__name__}, not a dict of fields",
                            item, b.label)
        rec.setdefault(self._spec.fields.difficulty, value)
        return Instance(item, rec, float(value), b)


def _one(text: str) -> str:
    from harness.templates import one_line  # jinja2: loaded only for an error message

    return one_line(text)


def _data_hint(e: Exception, params: Mapping[str, Any]) -> str:
    """For a missing data file: where the local mirror is looked for (``GENHARNESS_DATA``)."""
    text = str(e)
    if "GENHARNESS_DATA" in text or not ("not found" in text or "cannot download" in text):
        return ""
    raw = next((v for v in params.values() if isinstance(v, str) and "$" in v), None)
    return missing_data_hint(raw)


def grid_points(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of a ``source.grid`` (keys in file order, the last varying fastest)."""
    points: list[dict[str, Any]] = [{}]
    for key, values in grid.items():
        points = [{**p, key: v} for p in points for v in values]
    return points if grid else []


def _from_records(
    spec: TaskSpec, task: str, records: list[dict[str, Any]], buckets: Sequence[Bucket]
) -> tuple[list[Instance], int]:
    items, dropped, seen = [], 0, set()
    for n, rec in enumerate(records):
        rid = str(rec[spec.fields.id]) if spec.fields.id and spec.fields.id in rec else str(n)
        if rid in seen:
            raise HarnessError(f"{task}: duplicate item id {rid!r} (fields.id)")
        seen.add(rid)
        d = _difficulty(rec, spec.fields.difficulty, f"{task}: item {rid}",
                        spec.fields.difficulty_pattern)
        b = assign(list(buckets), d) if d is not None else None
        if d is None or b is None:
            dropped += 1
            continue
        items.append(Instance(rid, rec, d, b))
    return items, dropped


def _limit(items: list[Instance], limit: int | None, seed: int, task: str) -> list[Instance]:
    if limit is None:
        return items
    by_bucket: dict[int, list[Instance]] = {}
    for it in items:
        by_bucket.setdefault(it.bucket.index, []).append(it)
    keep: set[str] = set()
    for group in by_bucket.values():
        ranked = sorted(group, key=lambda it: derive_seed(seed, task, "subset", it.id))
        keep.update(it.id for it in ranked[:limit])
    return [it for it in items if it.id in keep]


def items_address(spec: TaskSpec, task: str) -> str:
    """The address whose items (and exemplar draws) the task ``task`` evaluates: its own, or
    the task its ``items_from`` names."""
    return spec.items_from or task


def labels(values: Sequence[str | float] | None) -> set[str] | None:
    """Bucket labels as written in a task file (numbers or strings) → label strings."""
    if values is None:
        return None
    return {format_value(v) if isinstance(v, (int, float)) else str(v) for v in values}


def pool_buckets(spec: TaskSpec, buckets: Sequence[Bucket]) -> list[Bucket]:
    """Buckets exemplars may come from: the ID buckets, plus any a condition names explicitly."""
    wanted = {b.label for b in buckets if b.role == "ID"}
    for cond in spec.fewshot.conditions:
        wanted |= labels(cond.pool) or set()
    return [b for b in buckets if b.label in wanted]


def _buckets(spec: TaskSpec, task: str, records: list[dict[str, Any]] | None) -> list[Bucket]:
    """The task's buckets; quantile buckets are cut from the records' difficulties."""
    if spec.buckets.quantiles is None:
        return build_buckets(spec.buckets, spec.roles)
    if records is None:
        raise HarnessError(f"{task}: buckets.quantiles needs a files or dataset source")
    values = [
        d for n, rec in enumerate(records)
        if (d := _difficulty(rec, spec.fields.difficulty, f"{task}: record {n}",
                             spec.fields.difficulty_pattern)) is not None
    ]
    try:
        return build_buckets(spec.buckets, spec.roles, values)
    except ValueError as e:
        raise HarnessError(f"{task}: {e}") from None


def _needs_pool(spec: TaskSpec) -> bool:
    return bool(spec.fewshot.k) or any(c.k for c in spec.fewshot.conditions)


def needs_matched_pool(spec: TaskSpec, matched_control: bool = False) -> bool:
    """Whether exemplars may come from any bucket: a condition draws from each item's own
    bucket (``matched``), or the matched-exemplar control runs (the task file's
    ``fewshot.matched_control`` or ``--matched-control``)."""
    return (matched_control or spec.fewshot.matched_control
            or any(c.matched for c in spec.fewshot.conditions))


def build_instances(
    spec: TaskSpec, task: str, seed: int, base_dir: Path, limit_per_bucket: int | None = None,
    count_tokens: CountTokens | None = None, matched_control: bool = False,
) -> InstanceSet:
    """All items of ``task`` for run seed ``seed`` (``base_dir``: the task file's folder;
    ``count_tokens``: the model's token counter, for lengths measured in model tokens;
    ``matched_control``: the pool also holds exemplars of every other bucket, made separately so
    the ID pool stays the same item for item)."""
    src, pool_src = spec.source, spec.fewshot.source or spec.source
    of = items_address(spec, task)
    records = None if isinstance(src, GeneratorSource) else read_source(src, base_dir)
    buckets = _buckets(spec, task, records)
    in_pool = pool_buckets(spec, buckets)
    others = ([b for b in buckets if b not in in_pool]
              if needs_matched_pool(spec, matched_control) else [])
    pool: list[Instance] = []
    if isinstance(src, GeneratorSource):
        n = min(src.per_bucket, limit_per_bucket) if limit_per_bucket else src.per_bucket
        items: Sequence[Instance] = GeneratedItems(spec, task, src, buckets, seed, n, "eval",
                                                   count_tokens, of)
        dropped = 0
    else:
        assert records is not None
        all_items, dropped = _from_records(spec, task, records, buckets)
        items = _limit(all_items, limit_per_bucket, seed, of)
        if pool_src is src:
            pool = all_items
    if _needs_pool(spec):
        if isinstance(pool_src, GeneratorSource):
            per = -(-spec.fewshot.pool_size // len(in_pool))
            pool = list(GeneratedItems(spec, task, pool_src, in_pool, seed, per, "fewshot",
                                       count_tokens, of))
            if others:  # same stream and size: item j of a bucket is the same in either list
                pool += GeneratedItems(spec, task, pool_src, others, seed, per, "fewshot",
                                       count_tokens, of)
        elif pool_src is not src:
            pool, _ = _from_records(spec, task, read_source(pool_src, base_dir), buckets)
            pool = [Instance(f"{FEWSHOT_ID_PREFIX}{p.id}", p.record, p.difficulty, p.bucket)
                    for p in pool]
        keep = {b.label for b in [*in_pool, *others]}
        pool = [p for p in pool if p.bucket.label in keep]
    else:
        pool = []
    return InstanceSet(buckets, items, pool, dropped)


def select_fewshot(
    item: Instance, pool: Sequence[Instance], k: int, seed: int, task: str,
    allowed: set[str] | None = None, condition: str = "", shared: bool = False,
) -> list[Instance]:
    """``k`` exemplars for ``item``, from a stream seeded by (run seed, task, item id[, condition]).

    Never the item itself nor an exemplar with identical fields. Exemplars come from ID buckets,
    or from the bucket labels in ``allowed`` when a few-shot condition names its pool explicitly.
    ``shared``: every item gets the same exemplars in the same order (one seeded shuffle of the
    pool per task and condition, the first ``k`` that are not the item), so all prompts share a
    prefix that a backend can compute once.
    """
    if k == 0:
        return []
    candidates = [
        p for p in pool if (p.bucket.role == "ID" if allowed is None else p.bucket.label in allowed)
    ]
    if not shared:
        candidates = [p for p in candidates if p.id != item.id and p.record != item.record]
    elif len(candidates) > k:
        order = random.Random(derive_seed(seed, task, "fewshot-shared", condition))
        candidates = order.sample(candidates, len(candidates))
        picked = [p for p in candidates[: k + 1] if p.id != item.id and p.record != item.record]
        if len(picked) >= k:
            return picked[:k]
    # Idempotent; also covers a shared pool of exactly k candidates (issue 17, item 1).
    candidates = [p for p in candidates if p.id != item.id and p.record != item.record]
    if len(candidates) < k:
        where = "ID" if allowed is None else f"pool {sorted(allowed)}"
        raise HarnessError(
            f"{task}: few-shot k={k} but only {len(candidates)} {where} exemplars exist")
    if shared:
        return candidates[:k]
    extra = [condition] if condition else []
    rng = random.Random(derive_seed(seed, task, item.id, "fewshot", *extra))
    return rng.sample(candidates, k)
