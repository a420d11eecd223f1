"""A task's run plan: what every stage of one task's run asks of its items, built once.

``plan_task`` makes the items (``items.build_instances``) and settles, from the task file and the
run's options, the templates, the few-shot conditions with the bucket labels each evaluates and
draws exemplars from, the items' id ranks and the prompt count. The stages after it (the
runner, the progress count, the horizon search) take the plan and pass it on; none goes back to
``items.py`` for buckets, labels, pools or conditions. The plan also renders prompts
(``prepare``) and makes the horizon search's items at one difficulty (``at``), with the same
seeds, pools and exemplar rules as the fixed buckets.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import product

from harness.answers.budget import answer_budget, target_tokens
from harness.config import RunConfig
from harness.errors import HarnessError, did_you_mean
from harness.gaps.shift import MATCHED
from harness.generators.registry import CountTokens
from harness.items import (
    GeneratedItems,
    Instance,
    InstanceSet,
    build_instances,
    items_address,
    labels,
    select_fewshot,
)
from harness.lm import LM
from harness.outputs.prompts import prepare_item, target_text
from harness.scoring.prepared import Prepared
from harness.spec.buckets import Bucket, format_value
from harness.spec.chat import ChatTurn
from harness.spec.sources import GeneratorSource
from harness.spec.task import FewShotCondition, GenerateOutput, TaskSpec, TemplateSpec
from harness.tasks.index import TaskRef

HORIZON_STREAM = "horizon"  # the horizon search's item stream (never the fixed run's "eval")


def pick_templates(spec: TaskSpec, wanted: Sequence[str] | None, task: str
                   ) -> list[TemplateSpec]:
    """The templates a run uses: the task's first by default, ``all``, or the named ones."""
    if not wanted:
        return list(spec.templates) if spec.default_templates == "all" else [spec.templates[0]]
    if list(wanted) == ["all"]:
        return list(spec.templates)
    by_id = {t.id: t for t in spec.templates}
    missing = [w for w in wanted if w not in by_id]
    if len(missing) == len(wanted):
        raise HarnessError(
            f"--templates: task {task} has no template {missing[0]!r}"
            + did_you_mean(missing[0], by_id) + f" (templates: {', '.join(by_id)})"
        )
    return [by_id[w] for w in wanted if w in by_id]


def conditions(spec: TaskSpec, buckets: Sequence[Bucket] = (), matched_control: bool = False,
               num_fewshot: int | None = None) -> list[FewShotCondition]:
    """The task's few-shot conditions; one unnamed condition when it declares none, followed by
    the matched-exemplar control (``gaps/shift``) on the OOD ``buckets`` when it is asked for
    (``matched_control``, or the task file's ``fewshot.matched_control``) and the task has
    exemplars (``num_fewshot``: the run's override of ``fewshot.k``). A task that declares
    conditions keeps its own design."""
    if spec.fewshot.conditions:
        return list(spec.fewshot.conditions)
    out = [FewShotCondition(id="")]
    k = spec.fewshot.k if num_fewshot is None else num_fewshot
    oods: list[str | float] = [b.label for b in buckets if b.role == "OOD"]
    if (matched_control or spec.fewshot.matched_control) and k > 0 and oods:
        out.append(FewShotCondition(id=MATCHED, matched=True, evaluate=oods))
    return out


def check_run(cfg: RunConfig, specs: Sequence[tuple[TaskRef, TaskSpec]]) -> None:
    """The run's arguments against every task, before any model loads: ``--strategy`` (known,
    and able to run the task's output type), ``--templates`` (each task has one of them) and
    ``--num-fewshot`` (a generator's exemplar pool holds that many); a ``HarnessError`` naming
    the argument otherwise."""
    from harness.strategies.registry import check_strategy
    from harness.tasks.item_checks import check_pool

    strategy = check_strategy(cfg.strategy)
    check = getattr(strategy, "check", None)
    for ref, spec in specs:
        pick_templates(spec, cfg.templates, ref.address)
        if callable(check):
            check(spec, ref.address)
        if cfg.num_fewshot is not None:
            fewshot = spec.fewshot.model_copy(update={"k": cfg.num_fewshot})
            try:
                check_pool(spec.model_copy(update={"fewshot": fewshot}), ref.address)
            except HarnessError as e:
                raise HarnessError(f"--num-fewshot {cfg.num_fewshot}: {e}") from None


@dataclass(frozen=True)
class Condition:
    """A few-shot condition as the run applies it."""

    spec: FewShotCondition  # the condition as declared (or the matched control)
    evaluated: frozenset[str] | None  # bucket labels it asks (None: every bucket)
    pool: frozenset[str] | None  # bucket labels its exemplars come from (None: the ID buckets)
    k: int  # exemplars per prompt, the run's --num-fewshot applied

    @property
    def id(self) -> str:
        return self.spec.id


def _frozen(values: Sequence[str | float] | None) -> frozenset[str] | None:
    found = labels(values)
    return None if found is None else frozenset(found)


@dataclass(frozen=True)
class RunPlan:
    """One task of one run: its items and everything the run's stages ask of them."""

    task: str  # the task's address
    spec: TaskSpec  # the task file
    seed: int  # the run seed
    items_of: str  # whose items and exemplar draws (``items_from``, or the task itself)
    inst: InstanceSet  # items, buckets, exemplar pool, dropped records
    templates: tuple[TemplateSpec, ...]  # the templates the run uses
    conditions: tuple[Condition, ...]  # the few-shot conditions, matched control last
    base: Condition  # the unnamed ID-exemplar condition (what probes and baselines are asked in)
    shared: bool  # every item gets the same exemplars (``fewshot.shared``)
    chat: Callable[[list[ChatTurn]], str] | None  # chat template, when the run applies one
    count_tokens: CountTokens | None  # the model's token counter (lengths in model tokens)
    context: int | None = None  # the model's context in tokens (None: unknown)
    cap: int | None = None  # the run's --max-answer-tokens (None: budgets fit their targets)
    _budgets: dict[tuple[str, int], int | None] = field(default_factory=dict, compare=False,
                                                 repr=False)  # (template, bucket) → budget

    @cached_property
    def ranks(self) -> array[int]:
        """Per item position, its rank by id within its bucket (what the aggregates sort by)."""
        return self.inst.id_ranks()

    @property
    def buckets(self) -> list[Bucket]:
        return self.inst.buckets

    @property
    def pool(self) -> list[Instance]:
        return self.inst.pool

    @property
    def edge(self) -> float:
        """The largest ID difficulty (0 without ID buckets)."""
        return max((b.top for b in self.buckets if b.role == "ID"), default=0.0)

    def prompts(self) -> int:
        """Prompts the run sends (templates × conditions × items), without making items."""
        return len(self.templates) * sum(self.inst.count(c.evaluated)
                                         for c in self.conditions)

    def prepared(self) -> Iterator[Prepared]:
        """Every (template, condition, item) triple with its exact prompt and target, template
        by template and condition by condition (the runner streams them in chunks)."""
        for tpl, cond in product(self.templates, self.conditions):
            for pos, item in enumerate(self.inst.items):
                if cond.evaluated is None or item.bucket.label in cond.evaluated:
                    yield self.prepare(tpl, cond, item, position=pos)

    def prepare(self, tpl: TemplateSpec, cond: Condition, item: Instance,
                pool: Sequence[Instance] | None = None, position: int = 0,
                budget: int | None = None) -> Prepared:
        """One item under one template and condition, its exemplars from ``pool`` (the plan's
        own pool by default), with the answer budget of its bucket (``budget``: this one)."""
        allowed = {item.bucket.label} if cond.spec.matched else (
            None if cond.pool is None else set(cond.pool))
        shots = select_fewshot(item, self.pool if pool is None else pool, cond.k, self.seed,
                               self.items_of, allowed, cond.id, self.shared)
        p = prepare_item(self.spec, self.task, tpl, cond.id, item, shots, self.chat, position)
        if budget is None and isinstance(self.spec.output, GenerateOutput):
            key = (tpl.id, item.bucket.index)
            if key not in self._budgets:
                self._budgets[key] = self.budget(tpl, (
                    i for i in self.inst.items if i.bucket.index == item.bucket.index))
            budget = self._budgets[key]
        if budget is None:
            return p
        return self._within_room(p, budget)

    def _within_room(self, p: Prepared, budget: int) -> Prepared:
        """``p`` with ``budget``, or what the context leaves after its prompt where that is less
        (``context_bound`` then, where the prompt is counted in the model's tokens: counted in
        bytes it is a cap, but not known to be the context's, and a cut answer stays the
        budget's)."""
        room = self.room(p)  # this prompt, exemplars and chat turns included
        if room is None or budget <= room:
            return replace(p, max_tokens=budget, context_bound=False)
        counted = self.count_tokens is not None and self.count_tokens(p.prompt) is not None
        return replace(p, max_tokens=max(1, room), context_bound=counted)

    def room(self, p: Prepared) -> int | None:
        """The tokens the model's context leaves after ``p``'s prompt (a token kept for the
        BOS the backend may add; the prompt's UTF-8 bytes where the token counter is unknown);
        None where the context is unknown. A budget past it would make the backend cut the
        prompt from the left: exemplars, or the question itself, the model would not see."""
        if self.context is None:
            return None
        return self.context - target_tokens(p.prompt, self.count_tokens) - 1

    def budget(self, tpl: TemplateSpec, items: Iterable[Instance], floor: int | None = None
               ) -> int | None:
        """The answer budget of ``items`` under ``tpl`` (``answers/budget``): their longest
        target in the model's tokens, with the task's margin, at least its ``max_tokens``
        (``floor``: at least this instead) and within the run's cap; None for a task whose
        answers are not generated. One pass over ``items``. What the context leaves is each
        item's own (``room``): ``prepare`` caps the budget there."""
        out = self.spec.output
        if not isinstance(out, GenerateOutput):
            return None
        target = 0  # the longest target, in tokens
        for i in items:
            target = max(target, target_tokens(target_text(self.spec, tpl, i), self.count_tokens))
        return answer_budget(max(out.max_tokens, floor or 0), target, out.budget_margin, self.cap)

    def raised(self, p: Prepared) -> Prepared | None:
        """``p`` with its answer budget doubled, within what the model's context leaves after
        its prompt (None when it cannot grow): for an answer the budget cut short."""
        if p.max_tokens is None:
            return None
        grown = 2 * p.max_tokens if self.cap is None else min(2 * p.max_tokens, self.cap)
        more = self._within_room(p, grown)
        return more if more.max_tokens is not None and more.max_tokens > p.max_tokens else None

    def bucket_at(self, d: int) -> Bucket:
        """A bucket of the one difficulty ``d`` (its role from the ID edge)."""
        return Bucket(index=d, label=format_value(d), lo=d, hi=d, closed=True,
                      role="ID" if d <= self.edge else "OOD")

    def at(self, d: int, n: int, stream: str = HORIZON_STREAM, start: int = 0
           ) -> list[Instance]:
        """Items ``start`` to ``start + n`` of difficulty ``d`` from the generator's ``stream``
        (the horizon search's own, its exemplar pool's, a probe's)."""
        src = self.spec.source
        if not isinstance(src, GeneratorSource):
            raise HarnessError(f"{self.task}: items at one difficulty need a generator source")
        gen = GeneratedItems(self.spec, self.task, src, [self.bucket_at(d)], self.seed,
                             start + n, stream, self.count_tokens, self.items_of)
        return list(gen[start:start + n])

    def prepared_at(self, d: int, n: int, tpl: TemplateSpec | None = None,
                    cond: Condition | None = None, stream: str = HORIZON_STREAM, start: int = 0
                    ) -> list[Prepared]:
        """``at``'s items, prepared under ``tpl`` and ``cond`` (default: the first template, the
        unnamed condition); a matched condition's exemplars come from ``d``'s own exemplar
        stream."""
        tpl, cond = tpl or self.templates[0], cond or self.base
        own = self.at(d, self.spec.fewshot.pool_size, "fewshot") if cond.spec.matched else []
        pool = [*self.pool, *own]
        items = self.at(d, n, stream, start)
        h = self.spec.horizon  # the search's items fit their own answers
        budget = self.budget(tpl, items, h.max_tokens if h is not None else None)
        return [self.prepare(tpl, cond, it, pool, budget=budget) for it in items]


def plan_task(ref: TaskRef, spec: TaskSpec, cfg: RunConfig, model: LM | None = None
              ) -> RunPlan:
    """The plan of ``ref``'s run under ``cfg`` (``model``: its token counter and chat
    template)."""
    count = model.count_tokens if model is not None else None
    inst = build_instances(spec, ref.address, cfg.seed, ref.base_dir, cfg.limit_per_bucket,
                           count, cfg.matched_control)
    return RunPlan(
        task=ref.address, spec=spec, seed=cfg.seed, items_of=items_address(spec, ref.address),
        inst=inst, templates=tuple(pick_templates(spec, cfg.templates, ref.address)),
        conditions=tuple(_condition(spec, c, cfg.num_fewshot) for c in conditions(
            spec, inst.buckets, cfg.matched_control, cfg.num_fewshot)),
        base=_condition(spec, FewShotCondition(id=""), cfg.num_fewshot),
        shared=spec.fewshot.shared if cfg.fewshot_shared is None else cfg.fewshot_shared,
        chat=model.apply_chat_template if model is not None and cfg.apply_chat_template
        else None,
        count_tokens=count,
        context=model.context_length() if model is not None else None,
        cap=cfg.max_answer_tokens,
    )


def _condition(spec: TaskSpec, cond: FewShotCondition, num_fewshot: int | None) -> Condition:
    k = cond.k if cond.k is not None else spec.fewshot.k
    k = k if num_fewshot is None or cond.k is not None else num_fewshot
    return Condition(cond, _frozen(cond.evaluate), _frozen(cond.pool), k)

