"""Prompt templates from a paraphrase table (``templates_from:`` in a task file).

The table is a CSV in the format of Mizrahi et al. 2024 ("State of What Art? A Call for
Multi-Prompt LLM Evaluation", files ``automatic paraphrases/<benchmark>/<task>.csv``): one row per
instruction template with the columns ``prompt idx``, ``default prompt`` (True for the
benchmark's official prompts), ``method`` (how the paraphrase was made), ``prompt template``
(Python ``str.format`` placeholders such as ``{word1}``) and ``correct`` (1 when a person judged it
a faithful paraphrase).

``expand_templates`` runs when a task file is loaded: the selected rows become ``TemplateSpec``s
with id ``<id_prefix><prompt idx>`` (official prompts are "seen" or "unseen" as ``defaults`` says;
paraphrases are unseen), appended to or replacing the inline ``templates``. A row is eligible only
when it uses exactly the placeholders of the official prompts (when the table has any). When the
file is absent (for instance ``GENHARNESS_DATA`` is not set) the task keeps its inline templates,
so it can still be listed; its data comes from the same mirror, so an evaluation fails there.

Every ``multi_prompt`` analysis of the task without a ``seen`` parameter gets one: the ids of the
task's seen templates, so the analysis needs nothing but the samples and its parameters.
"""

from __future__ import annotations

import csv
import io
import os
import random
import re
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError, TaskSpecError
from harness.sources.paths import check_read
from harness.spec.scoring import AnalysisSpec
from harness.spec.task import TaskSpec, TemplatesFromSpec, TemplateSpec

_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_]\w*)\}")
_COLUMNS = ("prompt idx", "prompt template")


@dataclass(frozen=True)
class Paraphrase:
    """One row of a paraphrase table."""

    index: int  # "prompt idx"
    template: str  # Python-format template text
    method: str  # generation method ("default", "rephrase", "meta_cot", ...)
    correct: bool  # judged a faithful paraphrase
    default: bool  # one of the benchmark's official prompts

    @property
    def placeholders(self) -> frozenset[str]:
        """Field names the template uses."""
        return frozenset(m.group(1) for m in _TOKEN.finditer(self.template) if m.group(1))


def _truthy(x: str | None) -> bool:
    return (x or "").strip().lower() in ("1", "true", "yes")


def read_paraphrases(path: Path) -> list[Paraphrase]:
    """All rows of the table at ``path``, in file order (``TaskSpecError`` when malformed)."""
    from harness.sources.files import read_data

    try:
        rows = list(csv.DictReader(io.StringIO(read_data(path, "templates_from.path"),
                                               newline="")))
    except HarnessError as e:
        raise TaskSpecError(str(e)) from None
    if not rows or any(c not in rows[0] for c in _COLUMNS):
        raise TaskSpecError(f"templates_from.path: {path} needs the columns {list(_COLUMNS)}")
    out = []
    for n, r in enumerate(rows, 2):
        try:
            idx = int(r["prompt idx"])
        except (TypeError, ValueError):
            raise TaskSpecError(f"{path}:{n}: 'prompt idx' is not an integer") from None
        out.append(Paraphrase(idx, r["prompt template"] or "", (r.get("method") or "").strip(),
                              _truthy(r.get("correct")), _truthy(r.get("default prompt"))))
    return out


def _literal(text: str) -> str:
    if "{" not in text and "}" not in text:
        return text
    if "endraw" in text:
        raise ValueError(f"cannot quote template text containing 'endraw': {text!r}")
    return "{% raw %}" + text + "{% endraw %}"


def to_jinja(template: str) -> str:
    """A Python ``str.format`` template as an equivalent Jinja2 template: ``{name}`` becomes
    ``{{ name }}``, ``{{``/``}}`` become literal braces, and other text is kept verbatim."""
    parts: list[str] = []
    buf, pos = "", 0
    for m in _TOKEN.finditer(template):
        buf += template[pos : m.start()]
        pos = m.end()
        if m.group(1):
            parts += [_literal(buf), "{{ " + m.group(1) + " }}"]
            buf = ""
        else:
            buf += m.group(0)[0]
    parts.append(_literal(buf + template[pos:]))
    return "".join(parts)


def select(rows: list[Paraphrase], spec: TemplatesFromSpec) -> list[Paraphrase]:
    """The rows ``spec`` asks for: official prompts as ``defaults`` says, then the eligible
    paraphrases (explicit ``ids``, or a seeded draw of ``limit``), in file order."""
    defaults = [r for r in rows if r.default]
    wanted = defaults[0].placeholders if defaults else None
    keep = [] if spec.defaults == "skip" else defaults
    pool = [
        r for r in rows if not r.default
        and (r.correct or not spec.correct_only)
        and (spec.methods is None or r.method in spec.methods)
        and (wanted is None or r.placeholders == wanted)
    ]
    if spec.ids is not None:
        by_idx = {r.index: r for r in rows}
        missing = [i for i in spec.ids if i not in by_idx]
        if missing:
            raise ValueError(f"templates_from.ids: no paraphrase with index {missing[0]}")
        pool = [by_idx[i] for i in spec.ids]
    elif spec.limit is not None and spec.limit < len(pool):
        chosen = set(random.Random(spec.sample_seed).sample(range(len(pool)), spec.limit))
        pool = [r for i, r in enumerate(pool) if i in chosen]
    picked = {id(r) for r in keep + pool}
    return [r for r in rows if id(r) in picked]


def paraphrase_templates(rows: list[Paraphrase], spec: TemplatesFromSpec) -> list[TemplateSpec]:
    """``TemplateSpec``s for the selected rows of a paraphrase table."""
    out = []
    for r in select(rows, spec):
        seen = r.default and spec.defaults == "seen"
        out.append(TemplateSpec(id=f"{spec.id_prefix}{r.index}", prompt=to_jinja(r.template),
                                seen=seen))
    return out


def _with_seen_param(analyses: list[AnalysisSpec], seen: list[str]) -> list[AnalysisSpec]:
    return [
        a.model_copy(update={"params": {**a.params, "seen": seen}})
        if a.name == "multi_prompt" and "seen" not in a.params else a
        for a in analyses
    ]


def expand_templates(spec: TaskSpec, task_file: Path | str) -> TaskSpec:
    """``spec`` with its ``templates_from`` rows added to ``templates`` and the seen template ids
    filled into its ``multi_prompt`` analyses (``TaskSpecError`` naming the file and key)."""
    templates = list(spec.templates)
    src = spec.templates_from
    if src is not None:
        raw = Path(os.path.expandvars(os.path.expanduser(src.path)))
        path = raw if raw.is_absolute() else Path(task_file).parent / raw
        try:
            present = path.is_file()
        except (OSError, ValueError):  # a NUL byte, a name too long
            present = False
        if present:
            check_read(path, task_file, "templates_from.path")
            try:
                extra = paraphrase_templates(read_paraphrases(path), src)
            except (ValueError, OSError) as e:  # UnicodeDecodeError is a ValueError
                raise TaskSpecError(f"{task_file}: templates_from: {e}") from None
            templates = extra if src.mode == "replace" else templates + extra
            if not templates:
                raise TaskSpecError(f"{task_file}: templates_from: no template selected")
    ids = [t.id for t in templates]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise TaskSpecError(f"{task_file}: templates_from: duplicate template ids {dup}")
    seen = [t.id for t in templates if t.seen]
    return spec.model_copy(update={"templates": templates,
                                   "analyses": _with_seen_param(list(spec.analyses), seen)})
