"""``harness tasks sample``: prompts and targets exactly as the model sees them, an item alone
(as an error of eval names it), and ``--score`` to score an answer with the task's metric."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from harness.cli.task_args import IncludeOpt, RestrictOpt, restrict, task_index
from harness.errors import TRACEBACK_ENV, HarnessError, ItemError

if TYPE_CHECKING:
    from harness.scoring.prepared import Prepared
    from harness.spec.task import TaskSpec

ITEM_HELP = (
    "Only this item: its index within --bucket (as an error of eval names it) or its id (as "
    "samples files record it; a generator's items: BUCKET/INDEX). An id starting with fs: is an "
    "item of the few-shot exemplar pool (made like the task's items but in a stream of their "
    "own, never evaluated), shown as if it were asked.")
SCORE_HELP = (
    "Score ANSWER as the model's answer to each item shown, as eval does: the task's "
    "scoring.extract, then its scoring.metric against the item's target (an error of eval's "
    "extractor or metric gives the command with this option that fails the same way).")


def sample(
    task: str,
    n: Annotated[int, typer.Option("-n", min=1, help="How many items: the first N that eval "
                                   "--limit-per-bucket N asks (of --bucket).")] = 3,
    bucket: Annotated[str | None, typer.Option(help="Only this bucket label.")] = None,  # noqa: UP007
    item: Annotated[str | None, typer.Option(help=ITEM_HELP)] = None,  # noqa: UP007
    template: Annotated[str | None, typer.Option(help="Template id (default: first).")] = None,  # noqa: UP007
    seed: Annotated[int, typer.Option(help="Run seed.")] = 0,
    num_fewshot: Annotated[int | None, typer.Option(min=0, help="Override few-shot k.")] = None,  # noqa: UP007
    score: Annotated[str | None, typer.Option(  # noqa: UP007
        "--score", metavar="ANSWER", help=SCORE_HELP)] = None,
    traceback: Annotated[bool, typer.Option(
        "--traceback", help="Print the stack of a generator's, extractor's or metric's failure "
        "(GENHARNESS_TRACEBACK=1).")] = False,
    include_path: IncludeOpt = None,
    restrict_paths: RestrictOpt = False,
) -> None:
    """Print rendered prompts and targets exactly as the model would see them: -n N shows the
    first N items that harness eval --seed SEED --limit-per-bucket N asks (of --bucket); --score
    ANSWER also scores an answer to each."""
    restrict(restrict_paths)
    from harness.config import RunConfig
    from harness.items import FEWSHOT_ID_PREFIX
    from harness.run.plan import plan_task
    from harness.tasks.task_checks import check_indexed

    if traceback:
        os.environ[TRACEBACK_ENV] = "1"
    index = task_index(include_path)
    ref = index.resolve([task])[0]
    spec = index.spec(ref)
    check_indexed(index, ref, spec, items=False)  # a source eval refuses: at its file and line
    tpls = {t.id: t for t in spec.templates}
    if template is not None and template not in tpls:
        raise HarnessError(f"--template: {ref.address} has no template {template!r} "
                           f"(templates: {', '.join(tpls)})")
    if score is not None:
        _check_scorable(spec, ref.address)
    exemplar = item is not None and item.startswith(FEWSHOT_ID_PREFIX)
    # the run eval makes with --limit-per-bucket N: its first N items of a bucket are these
    # (an exemplar of any bucket: the pool made for every bucket, as --matched-control does)
    cfg = RunConfig(model="sample", tasks=[ref.address], seed=seed, num_fewshot=num_fewshot,
                    templates=[template or spec.templates[0].id], matched_control=exemplar,
                    limit_per_bucket=n if item is None else None, output_dir=Path("."))
    try:
        plan = plan_task(ref, spec, cfg)
        tpl, base = plan.templates[0], plan.base
        labels = [b.label for b in plan.buckets]
        if bucket is not None and bucket not in labels:
            raise HarnessError(f"--bucket: {ref.address} has no bucket {bucket!r} "
                               f"(buckets: {', '.join(labels)})")
        picked = pick_items(plan.inst, bucket, item, n, ref.address)
        if not picked:
            raise HarnessError(f"--bucket: bucket {bucket} of {ref.address} holds no item "
                               f"(harness tasks validate {ref.address} says why)")
        for it in picked:
            kind = " (a few-shot exemplar, never evaluated)" if exemplar else ""
            typer.echo(f"--- {it.id}  bucket={it.bucket.label} role={it.bucket.role} "
                       f"{spec.difficulty_name}={it.difficulty:g}{kind}")
            try:
                p = plan.prepare(tpl, base, it, budget=plan.budget(tpl, [it]))
            except HarnessError as e:  # a template the item cannot fill: name the file
                raise HarnessError(f"{ref.path}: {e}") from None
            typer.echo(p.prompt)
            typer.echo(f">>> target: {p.target}")
            if score is not None:
                typer.echo(_scored(spec, p, score))
    except ItemError as e:  # a generator, extractor or metric failing: where, as eval says it
        raise HarnessError(e.located(ref.address, seed)) from e


def _check_scorable(spec: TaskSpec, address: str) -> None:
    from harness.outputs import output_type

    if not output_type(spec).generates:
        raise HarnessError(f"--score: {address} is a {spec.output.type} task: the model picks "
                           "one of its choices and writes no answer to score (drop --score)")


def _scored(spec: TaskSpec, p: Prepared, answer: str) -> str:
    """``answer`` to the prepared item ``p`` scored as eval scores it: the line that says how."""
    from harness.outputs import output_type

    rec = output_type(spec).score_answer(spec, p, answer)  # an ItemError names the item
    others = "".join(f", {name} {value:g}" for name, value in rec.scores.items())
    return (f">>> answer {answer!r}: extracted {rec.extracted!r} ({spec.scoring.extract.kind}), "
            f"score {rec.score:g} ({spec.scoring.metric}){others}")


def pick_items(inst: Any, bucket: str | None, item: str | None, n: int,
               task: str) -> list[Any]:
    """The items ``tasks sample`` shows: ``item`` alone (an index within ``bucket``, an id, or
    the id of an exemplar of the few-shot pool: ``fs:``), else the first ``n`` (of
    ``bucket``), generating no other item."""
    from itertools import islice

    from harness.items import FEWSHOT_ID_PREFIX, GeneratedItems

    items = inst.items
    if item is not None and item.startswith(FEWSHOT_ID_PREFIX):
        found = [p for p in inst.pool if p.id == item and bucket in (None, p.bucket.label)]
        if found:
            return found
    elif isinstance(items, GeneratedItems):  # positions computed: items are made on demand
        starts = {b.label: pos * items.per_bucket for pos, b in enumerate(items.buckets)}
        if item is not None:
            label, _, j = (f"{bucket}/{item}" if bucket is not None and "/" not in item
                           else item).rpartition("/")
            if label in starts and j.isdigit() and int(j) < items.per_bucket:
                return [items[starts[label] + int(j)]]
        else:
            first = starts[bucket] if bucket is not None else 0
            last = first + items.per_bucket if bucket is not None else len(items)
            return [items[i] for i in range(first, min(first + n, last))]
    else:
        chosen = (it for it in items if bucket is None or it.bucket.label == bucket)
        if item is None:
            return list(islice(chosen, n))
        found = list(chosen)
        by_id = [it for it in found if it.id == item]
        if by_id:
            return by_id
        if item.isdigit() and bucket is not None and int(item) < len(found):
            return [found[int(item)]]
    raise HarnessError(f"--item: {task} has no item {item!r}"
                       + (f" in bucket {bucket}" if bucket is not None else "")
                       + " (an index within --bucket, an item id, or fs:ID for an exemplar of "
                       "the few-shot pool)")
