"""Test helpers for task packages (and the harness's own tests): a scripted model and a check
that validates and dry-runs every task of a package.

In a task package's test suite::

    from harness.testing import check_task_package

    def test_tasks(tmp_path):
        check_task_package("mybench", output_dir=tmp_path)  # the harness.tasks entry-point name
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from harness import plugins
from harness.config import RunConfig
from harness.items import build_instances
from harness.lm import LM, ModelIdentity, OnDone
from harness.outputs import Oracle, output_type
from harness.requests import (
    GenerateRequest,
    GenerateResponse,
    LoglikelihoodRequest,
    LoglikelihoodResponse,
    RollingRequest,
)
from harness.run.evaluate import evaluate
from harness.run.isolation import failure_line
from harness.run.plan import plan_task
from harness.run.results import TaskResult, read_samples
from harness.spec.chat import ChatTurn
from harness.spec.sources import GeneratorSource
from harness.spec.task import TaskSpec
from harness.tasks.index import TaskIndex
from harness.tasks.namespaces import folder_namespace
from harness.tasks.providers import TaskProvider, from_plugin
from harness.tasks.refs import TaskRef
from harness.tasks.task_checks import NOT_INDEXED, check_indexed
from harness.templates import template_variables

__all__ = ["ScriptedLM", "TaskCheck", "check_task_package", "oracle_model", "scripted_backend"]


class ScriptedLM(LM):
    """A deterministic stand-in model: answers come from a function of the prompt, a table
    prompt → answer (unknown prompts: ``default``) or one fixed string; continuations are scored
    by ``score(context, continuation)`` or a table (unknown pairs: minus their length).
    ``name`` and ``backend`` make its ``identity`` (``backend``: the prefix ``load_model``
    loaded it under, when it did). Its tokens are whitespace-separated words: an answer longer
    than a request's ``max_tokens`` words is cut there, and reported as stopped on the budget."""

    def __init__(
        self,
        answer: Callable[[str], str] | Mapping[str, str] | str = "",
        score: Callable[[str, str], float] | Mapping[tuple[str, str], float] | None = None,
        *,
        name: str = "scripted",
        default: str = "",
        backend: str = "scripted",
    ) -> None:
        self._answer = answer
        self._score = score
        self._name = name
        self._backend = backend  # identity.backend: the prefix it was loaded under
        self._default = default
        self.prompts: list[str] = []  # every prompt seen, in call order

    @property
    def identity(self) -> ModelIdentity:
        return ModelIdentity(backend=self._backend, name=self._name)

    def loaded_as(self, prefix: str) -> None:
        self._backend = prefix  # e.g. "mybench-scripted", registered with scripted_backend

    def _text(self, prompt: str) -> str:
        if isinstance(self._answer, str):
            return self._answer
        if isinstance(self._answer, Mapping):
            return self._answer.get(prompt, self._default)
        return self._answer(prompt)

    def generate(
        self, requests: Sequence[GenerateRequest], on_done: OnDone[GenerateResponse] | None = None
    ) -> list[GenerateResponse]:
        out = []
        for i, r in enumerate(requests):
            self.prompts.append(r.prompt)
            text = self._text(r.prompt)
            cut = min((text.index(s) for s in r.stop if s and s in text), default=len(text))
            answer = text[:cut]
            words = answer.split()  # its tokens are words, cut at the request's budget
            if len(words) > r.max_tokens:
                answer = (" " if answer[:1].isspace() else "") + " ".join(words[:r.max_tokens])
            out.append(GenerateResponse(text=answer, n_tokens=min(len(words), r.max_tokens)))
            if on_done:
                on_done(i, out[-1])
        return out

    def _logprob(self, context: str, continuation: str) -> float:
        if self._score is None:
            return -float(len(continuation))
        if isinstance(self._score, Mapping):
            return self._score.get((context, continuation), -float(len(continuation)))
        return self._score(context, continuation)

    def loglikelihood(
        self,
        requests: Sequence[LoglikelihoodRequest],
        on_done: OnDone[LoglikelihoodResponse] | None = None,
    ) -> list[LoglikelihoodResponse]:
        out = []
        for i, r in enumerate(requests):
            self.prompts.append(r.context)
            out.append(LoglikelihoodResponse(self._logprob(r.context, r.continuation), False,
                                             len(r.continuation)))
            if on_done:
                on_done(i, out[-1])
        return out

    def loglikelihood_rolling(
        self, requests: Sequence[RollingRequest], on_done: OnDone[float] | None = None
    ) -> list[float]:
        return [-float(len(r.text)) for r in requests]

    def apply_chat_template(self, turns: Sequence[ChatTurn]) -> str:
        return "".join(f"<{t.role}>{t.content}</{t.role}>" for t in turns) + "<assistant>"


def scripted_backend(name: str, model_args: dict[str, str],
                     batch_size: int | Literal["auto"]) -> ScriptedLM:
    """A ``harness.models`` factory: ``scripted:empty`` answers nothing, ``scripted:TEXT``
    always answers TEXT (useful to run the CLI end to end without a real model). Registered
    under a name of a package's own (``mybench-scripted``), its runs record that name as their
    backend (``ModelIdentity.backend``, loaded through ``load_model``)."""
    return ScriptedLM("" if name == "empty" else name, name=name)


def oracle_model(spec: TaskSpec, ref: TaskRef, cfg: RunConfig) -> ScriptedLM:
    """A model that gives every prompt of ``cfg``'s run of ``ref`` its reference answer
    (generation) or puts the gold choice first (multiple choice)."""
    probe = ScriptedLM()
    out, oracle = output_type(spec), Oracle()
    for p in plan_task(ref, spec, cfg, probe).prepared():
        out.teach(spec, p, oracle)
    return ScriptedLM(oracle.answers, oracle.scores, name="oracle")


@dataclass(frozen=True)
class TaskCheck:
    """What ``check_task_package`` found for one task."""

    address: str  # task address, e.g. "mybench/digitsum"
    origin: str  # provenance, e.g. "plugin:my-dist==1.0"
    result: TaskResult  # the task's entry in the dry run's results.json
    n_samples: int  # lines in its samples file (items × templates)


def _task_refs(package: str | Path, namespace: str | None
               ) -> tuple[TaskIndex, list[TaskRef], list[Path], str]:
    """The index to check ``package`` in, its tasks, the folders to record as the run's
    ``--include-path`` and what an ``items_from`` naming no task is told."""
    if isinstance(package, Path):
        ns = namespace or folder_namespace(package)
        if ns is None:  # addressed as --include-path addresses them
            index = TaskIndex.build([package], providers=[])
            refs = [r for r in index.refs.values() if r.origin != "builtin"]
            return index, refs, [package], (
                f" (not a task of {package} nor a built-in task; no pyproject.toml above "
                f"{package} names it as a harness.tasks entry point, so its tasks are addressed "
                "by their path below it: pass namespace='NAME' to address them NAME/TASK, as "
                "once installed)")
        origin = f"include:{package}"
        index = TaskIndex.build(providers=[TaskProvider(
            ns, origin, f"folder {package} (namespace {ns})", lambda: package)])
        index.load_providers(strict=True)
        index.check_conflicts()
        return index, [r for r in index.refs.values() if r.origin == origin], [package], (
            f" (not a task of {package}, whose tasks are {ns}/TASK, nor a built-in task)")
    if namespace is not None:
        raise TypeError("check_task_package: namespace= is for a Path; an installed package's "
                        "namespace is its harness.tasks entry-point name")
    found = [from_plugin(p) for p in plugins.discover(plugins.TASKS) if p.name == package]
    if not found:
        names = sorted({p.name for p in plugins.discover(plugins.TASKS)})
        raise AssertionError(f"no installed package has a {plugins.TASKS!r} entry point named "
                             f"{package!r} (installed: {', '.join(names) or 'none'})")
    index = TaskIndex.build(providers=found)
    index.load_providers(strict=True)
    index.check_conflicts()
    return index, [r for r in index.refs.values() if r.is_plugin], [], NOT_INDEXED


def check_task_package(package: str | Path, *, model: LM | None = None, limit_per_bucket: int = 2,
                       seed: int = 0, output_dir: Path | None = None,
                       namespace: str | None = None) -> list[TaskCheck]:
    """Validate every task of a package and dry-run each through the runner.

    ``package`` is the name of a ``harness.tasks`` entry point (an installed package) or a
    ``Path`` to a folder of task files. A folder's tasks get the addresses they will have once
    installed, ``NAMESPACE/TASK``: ``namespace``, by default the name of the ``harness.tasks``
    entry point that names the folder in the nearest ``pyproject.toml`` above it; a folder that
    none names is addressed as ``--include-path`` addresses it (``<sub>/<name>``). For every
    task: the checks ``harness tasks validate`` and ``eval`` make (schema, generator, metric,
    templates, sources, the task an ``items_from`` names), each problem at its file and line;
    a generator source's items are made twice and must be the same (the generator is
    deterministic in its ``rng``), each with every field the templates read;
    ``limit_per_bucket`` items per bucket of every template run
    through the runner with ``model``, by default an oracle that answers each prompt with its
    reference answer, so every sample must then score 1.0 (a check that extraction and metric
    accept the task's own answers); results.json and the samples file are written under
    ``output_dir`` (default: a temporary folder) and read back. Problems raise
    ``AssertionError`` (or ``HarnessError`` for an invalid task) naming the task.
    """
    index, refs, include, note = _task_refs(package, namespace)
    if not refs:
        raise AssertionError(f"{package}: no task files found")
    with tempfile.TemporaryDirectory(prefix="harness-check-") as tmp:
        root = output_dir if output_dir is not None else Path(tmp)
        return [_check_one(index, ref, model, limit_per_bucket, seed, root, include, note)
                for ref in sorted(refs, key=lambda r: r.address)]


def _check_items(spec: TaskSpec, ref: TaskRef, cfg: RunConfig) -> None:
    """A generator source's items: the same twice (deterministic in ``rng`` alone), and each
    with every field the templates and the output type read."""
    if not isinstance(spec.source, GeneratorSource):
        return
    name = spec.source.name
    first = build_instances(spec, ref.address, cfg.seed, ref.base_dir, cfg.limit_per_bucket)
    again = build_instances(spec, ref.address, cfg.seed, ref.base_dir, cfg.limit_per_bucket)
    needed = {(f"template {t.id}", v) for t in spec.templates
              for src in (t.prompt, t.target) if src is not None for v in template_variables(src)}
    needed |= {(key, field) for key, field in output_type(spec).fields_read(spec).items()}
    for a, b in zip(first.items, again.items, strict=True):
        if a.record != b.record:
            raise AssertionError(
                f"{ref.address}: generator {name!r} made item {a.id} differently twice "
                f"({dict(a.record)!r:.200} then {dict(b.record)!r:.200}): take every random "
                "choice from its rng argument (not the random module, time or set order)")
        missing = sorted((what, f) for what, f in needed if f not in a.record)
        if missing:
            what, field = missing[0]
            raise AssertionError(
                f"{ref.address}: generator {name!r} made item {a.id} without the field "
                f"{field!r} that {what} reads (its fields: {', '.join(sorted(a.record))})")


def _check_one(index: TaskIndex, ref: TaskRef, model: LM | None, limit: int, seed: int,
               root: Path, include: list[Path], note: str) -> TaskCheck:
    spec = index.spec(ref)
    check_indexed(index, ref, spec, note=note)  # as validate and eval check it
    out = root / ref.address.replace("/", "__")
    cfg = RunConfig(model="scripted:oracle", tasks=[ref.address], seed=seed,
                    limit_per_bucket=limit, templates=["all"], output_dir=out,
                    include_paths=include)
    _check_items(spec, ref, cfg)
    lm = model if model is not None else oracle_model(spec, ref, cfg)
    res = evaluate(cfg, model=lm, index=index, overwrite=True)  # a dry run's own folder
    if res.failed:
        raise AssertionError(failure_line(res.failed[0]))
    if not (out / "results.json").is_file():
        raise AssertionError(f"{ref.address}: results.json was not written")
    (task,) = res.tasks
    samples = read_samples(out / task.samples_file)
    expected = sum(rep.n for rep in task.templates)
    if not samples or len(samples) != expected:
        raise AssertionError(f"{ref.address}: {len(samples)} samples in {task.samples_file}, "
                             f"results.json counts {expected}")
    missing = {t.id for t in spec.templates} - {s.template for s in samples}
    if missing:
        raise AssertionError(f"{ref.address}: no samples for template(s) {', '.join(missing)}")
    for rep in task.templates:
        empty = [b.bucket for b in rep.buckets if b.n == 0]
        if empty:
            raise AssertionError(f"{ref.address}: no items in bucket(s) {', '.join(empty)}")
    if model is None:
        for s in samples:
            if s.score != 1.0:
                raise AssertionError(
                    f"{ref.address}: item {s.id} (template {s.template}): the reference answer "
                    f"{s.target!r} scored {s.score} (output {s.output!r}, extracted "
                    f"{s.extracted!r}); check scoring.extract, scoring.metric and output.stop"
                )
    return TaskCheck(ref.address, ref.origin, task, len(samples))
