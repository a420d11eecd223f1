"""Training-split export: ID items of a generator task, rendered exactly as ``harness eval
--num-fewshot 0`` renders them (same ``build_instances``, ``GeneratedItems`` and ``build_prompt``),
streamed one JSON line per item and never containing a prompt the same-seed evaluation tests.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from harness.errors import HarnessError
from harness.tasks.instances import GeneratedItems, build_instances
from harness.tasks.prompts import build_prompt, target_text
from harness.tasks.refs import TaskRef
from harness.tasks.spec import GeneratorSource, TaskSpec, TemplateSpec

_MAX_SKIPS = 100_000  # consecutive eval-equal items after which the space counts as used up


@dataclass
class ExportReport:
    """What an export wrote and how it relates to the evaluation items."""

    written: int = 0  # rows written
    skipped_eval: int = 0  # generated items dropped because the same-seed eval tests that prompt
    eval_items: int = 0  # distinct same-seed eval prompts in the exported buckets
    other_seeds: list[int] = field(default_factory=list)  # eval seeds checked for overlap
    other_eval_items: int = 0  # distinct eval prompts of those seeds (exported buckets)
    other_hit: int = 0  # of those, how many appear among the written rows

    def lines(self) -> list[str]:
        """The report as text lines."""
        out = [f"wrote {self.written} rows; skipped {self.skipped_eval} generated items equal to "
               f"one of the {self.eval_items} same-seed eval prompts"]
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


def _eval_prompts(spec: TaskSpec, ref: TaskRef, seed: int, role: str) -> set[str]:
    """Zero-shot prompts (every template) of the items ``harness eval`` tests at ``seed``."""
    inst = build_instances(_zero_shot(spec), ref.address, seed, ref.base_dir, None)
    return {build_prompt(spec, t, it, []) for it in inst.items if it.bucket.role == role
            for t in spec.templates}


def iter_rows(spec: TaskSpec, ref: TaskRef, role: str, seed: int, template: str | None,
              report: ExportReport) -> Iterator[dict[str, str | float]]:
    """Endless stream of rows {prompt, target, bucket, difficulty} not tested at ``seed``."""
    src = spec.source
    if not isinstance(src, GeneratorSource):
        raise HarnessError(f"{ref.address}: source is {src.type!r}, not a generator; "
                           f"export needs a generator-backed task")
    tpl = _template(spec, ref.address, template)
    buckets = [b for b in build_instances(_zero_shot(spec), ref.address, seed, ref.base_dir,
                                          1).buckets
               if b.role == role]
    if not buckets:
        raise HarnessError(f"--role: {ref.address} has no {role} bucket")
    banned = _eval_prompts(spec, ref, seed, role)
    report.eval_items = len(banned)
    per = 2**40  # item j of a bucket depends only on (seed, task, "train", bucket, j)
    gen = GeneratedItems(spec, ref.address, src, buckets, seed, per, "train")
    run = 0  # consecutive items skipped
    for j in itertools.count():  # one item of each bucket in turn: any prefix is balanced
        for pos in range(len(buckets)):
            it = gen[pos * per + j]
            prompt = build_prompt(spec, tpl, it, [])
            if prompt in banned:
                report.skipped_eval += 1
                run += 1
                if run >= _MAX_SKIPS:
                    raise HarnessError(
                        f"{ref.address}: {_MAX_SKIPS} generated {role} items in a row are all "
                        f"tested by the seed-{seed} evaluation; the space is too small to export")
                continue
            run = 0
            yield {"prompt": prompt, "target": target_text(spec, tpl, it),
                   "bucket": it.bucket.label, "difficulty": it.difficulty}


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
