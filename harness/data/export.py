"""Training-split export: ID items of a generator task, rendered exactly as ``harness eval
--num-fewshot 0`` renders them (same ``build_instances``, ``GeneratedItems`` and ``build_prompt``),
streamed one JSON line per item and never containing a prompt the same-seed evaluation tests.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from harness.errors import HarnessError
from harness.items import GeneratedItems, Instance, build_instances
from harness.outputs.prompts import build_prompt, target_text
from harness.seeding import derive_seed
from harness.spec.buckets import Bucket, assign, format_value
from harness.spec.sources import GeneratorSource
from harness.spec.task import TaskSpec, TemplateSpec
from harness.tasks.refs import TaskRef

_MAX_SKIPS = 10_000  # eval prompts in a row after which a slot's space counts as used up


@dataclass
class ExportReport:
    """What an export wrote and how it relates to the evaluation items."""

    written: int = 0  # rows written
    skipped_eval: int = 0  # generated items dropped because the same-seed eval tests that prompt
    eval_items: int = 0  # distinct same-seed eval prompts (every bucket)
    other_seeds: list[int] = field(default_factory=list)  # eval seeds checked for overlap
    other_eval_items: int = 0  # distinct eval prompts of those seeds (exported role's buckets)
    other_hit: int = 0  # of those, how many appear among the written rows
    difficulty_name: str = "difficulty"  # the task's name of the difficulty variable
    histogram: Counter[float] = field(default_factory=Counter)  # difficulty value -> rows
    used_up: list[str] = field(default_factory=list)  # slots left out: every item an eval prompt

    def lines(self) -> list[str]:
        """The report as text lines."""
        out = [f"wrote {self.written} rows; skipped {self.skipped_eval} generated items equal to "
               f"one of the {self.eval_items} same-seed eval prompts (each replaced by another "
               f"item of the same {self.difficulty_name})"]
        if self.histogram:
            out.append(f"rows per {self.difficulty_name}: " + ", ".join(
                f"{format_value(v)}: {n}" for v, n in sorted(self.histogram.items())))
        for label in self.used_up:
            out.append(f"no rows of {self.difficulty_name} {label}: {_MAX_SKIPS} generated items "
                       f"in a row were same-seed eval prompts (its space is used up; the other "
                       f"values share its rows)")
        if self.other_seeds:
            pct = 100.0 * self.other_hit / self.other_eval_items if self.other_eval_items else 0.0
            out.append(f"overlap with eval seeds {self.other_seeds}: {self.other_hit} of "
                       f"{self.other_eval_items} of their eval prompts ({pct:.1f}%) are in the "
                       f"export (a small item space cannot avoid them)")
        return out


def _template(spec: TaskSpec, task: str, template: str | None) -> TemplateSpec:
    if template is None:
        return spec.templates[0]
    for t in spec.templates:
        if t.id == template:
            return t
    raise HarnessError(f"--template: {task} has no template {template!r} "
                       f"(templates: {', '.join(t.id for t in spec.templates)})")


def _zero_shot(spec: TaskSpec) -> TaskSpec:
    """``spec`` at --num-fewshot 0: no exemplar pool is built (the eval items do not depend on
    it, and a pool from a file source would be read for nothing)."""
    fs = spec.fewshot.model_copy(update={"k": 0, "conditions": []})
    return spec.model_copy(update={"fewshot": fs})


def _eval_prompts(spec: TaskSpec, ref: TaskRef, seed: int, role: str | None) -> set[str]:
    """Zero-shot prompts (every template) of the items ``harness eval`` tests at ``seed`` in the
    buckets of ``role`` (None: every bucket)."""
    inst = build_instances(_zero_shot(spec), ref.address, seed, ref.base_dir, None)
    return {build_prompt(spec, t, it, []) for it in inst.items
            if role is None or it.bucket.role == role for t in spec.templates}


def _slots(spec: TaskSpec, ref: TaskRef, role: str, seed: int
           ) -> tuple[list[Bucket], list[Bucket], str]:
    """What rows are drawn from: the role's buckets, or for ``--role ID`` of a task with
    ``roles.id_range`` one slot per value of the range; also every eval bucket and the draw."""
    buckets = build_instances(_zero_shot(spec), ref.address, seed, ref.base_dir, 1).buckets
    rng = spec.roles.id_range
    if role == "ID" and rng is not None:
        values = range(rng.min, rng.max + 1)
        return ([Bucket(i, format_value(v), v, v, True, "ID") for i, v in enumerate(values)],
                buckets, rng.draw)
    mine = [b for b in buckets if b.role == role]
    if not mine:
        raise HarnessError(f"--role: {ref.address} has no {role} bucket")
    return mine, buckets, "every"


def iter_rows(spec: TaskSpec, ref: TaskRef, role: str, seed: int, template: str | None,
              report: ExportReport) -> Iterator[dict[str, str | float | None]]:
    """Endless stream of rows {prompt, target, bucket, difficulty}, none of them a prompt that
    ``harness eval --seed seed`` tests.

    Row ``j`` is drawn from slot ``j mod n`` (draw ``every``: any ``k * n`` consecutive rows
    hold each slot ``k`` times) or from a seeded uniform draw of the slot (``uniform``), where
    the slots are the role's buckets or, for ``--role ID`` with ``roles.id_range``, the range's
    values. A generated item the evaluation tests is skipped and replaced by the slot's next
    item, so skips never change the mix; a slot whose every item is an eval prompt (2-bit
    parity) is left out, and the report names it. ``bucket`` is the eval bucket holding the row's
    difficulty, or None for a range value no bucket holds."""
    src = spec.source
    if not isinstance(src, GeneratorSource):
        raise HarnessError(f"{ref.address}: source is {src.type!r}, not a generator; "
                           f"export needs a generator-backed task")
    tpl = _template(spec, ref.address, template)
    slots, buckets, draw = _slots(spec, ref, role, seed)
    banned = _eval_prompts(spec, ref, seed, None)
    report.eval_items = len(banned)
    report.difficulty_name = spec.difficulty_name
    per = 2**40  # item k of a slot depends only on (seed, task, "train", slot label, k)
    gen = GeneratedItems(spec, ref.address, src, slots, seed, per, "train")
    pick = random.Random(derive_seed(seed, src.seed, ref.address, "train", "draw"))
    taken = [0] * len(slots)  # items generated so far, per slot
    live = list(range(len(slots)))  # slots whose space is not used up by the eval
    row = 0
    while True:
        pos = live[row % len(live) if draw == "every" else pick.randrange(len(live))]
        got = _fresh(gen, pos, per, taken, lambda i: build_prompt(spec, tpl, i, []), banned,
                     report)
        if got is None:  # every item of this slot is an eval prompt: the others share its rows
            live.remove(pos)
            report.used_up.append(slots[pos].label)
            if not live:
                raise HarnessError(
                    f"{ref.address}: every {role} {spec.difficulty_name} value is used up by the "
                    f"seed-{seed} evaluation ({_MAX_SKIPS} generated items in a row were eval "
                    f"prompts); the space is too small to export")
            continue
        row += 1
        it, prompt = got
        home = assign(buckets, it.difficulty)
        report.histogram[it.difficulty] += 1
        yield {"prompt": prompt, "target": target_text(spec, tpl, it),
               "bucket": home.label if home is not None else None, "difficulty": it.difficulty}


def _fresh(gen: GeneratedItems, pos: int, per: int, taken: list[int],
           prompt: Callable[[Instance], str], banned: set[str], report: ExportReport
           ) -> tuple[Instance, str] | None:
    """The slot's next item whose prompt the evaluation does not test; None after
    ``_MAX_SKIPS`` eval prompts in a row (the slot's space is used up)."""
    for _ in range(_MAX_SKIPS):
        it = gen[pos * per + taken[pos]]
        taken[pos] += 1
        text = prompt(it)
        if text not in banned:
            return it, text
        report.skipped_eval += 1
    return None


def export(spec: TaskSpec, ref: TaskRef, out: TextIO, n: int, role: str = "ID", seed: int = 0,
           template: str | None = None, overlap_seeds: int = 3) -> ExportReport:
    """Write ``n`` rows to ``out`` (JSON lines); the report of what was written."""
    report = ExportReport()
    others = [s for s in range(seed + 1, seed + 1 + overlap_seeds)]
    other = set().union(*(_eval_prompts(spec, ref, s, role) for s in others)) if others else set()
    report.other_seeds, report.other_eval_items = others, len(other)
    hit: set[str] = set()
    rows = iter_rows(spec, ref, role, seed, template, report)
    for _ in range(n):
        row = next(rows)
        if row["prompt"] in other:
            hit.add(str(row["prompt"]))
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
        report.written += 1
    report.other_hit = len(hit)
    return report


def export_to(spec: TaskSpec, ref: TaskRef, path: Path, n: int, role: str, seed: int,
              template: str | None, overlap_seeds: int) -> ExportReport:
    """``export`` into ``path`` (written to a temporary name, then renamed)."""
    tmp = path.with_name(path.name + ".partial")
    try:
        with tmp.open("w", encoding="utf-8") as f:
            rep = export(spec, ref, f, n, role, seed, template, overlap_seeds)
        tmp.replace(path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise HarnessError(f"--out: cannot write {path}: {e.strerror}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)  # no half-written file left under the final name
        raise
    return rep
