"""results.json and samples/<task>.jsonl: schema, provenance and (streamed) writers."""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from array import array
from collections.abc import Callable, Iterator, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import IO, Any, TypeVar, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness import __version__
from harness.analyses.registry import AnalysisResult
from harness.config import RunConfig
from harness.errors import HarnessError, first_problem
from harness.filelock import os_reason
from harness.files import sha256_file, write_atomic
from harness.gaps.shift import ShiftSplit
from harness.lm import ModelIdentity
from harness.plugins import loaded_distributions
from harness.run.rundir import OutputError, open_new
from harness.scoring.records import SampleRecord
from harness.scoring.report import TemplateReport
from harness.spec.task import TaskSpec

SCHEMA_VERSION = 3  # 3: baselines, floor and answer concentration per bucket; edge gap; shift
T = TypeVar("T")
_LIBRARIES = ("genharness", "pydantic", "jinja2", "numpy", "torch", "transformers", "tokenizers",
              "gguf", "accelerate", "datasets", "vllm", "llama-cpp-python")


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class HarnessInfo(_Model):
    """Which harness produced the file."""

    version: str  # genharness version
    git_commit: str | None  # commit of the checkout the harness ran from, if any
    git_dirty: bool | None  # uncommitted changes in that checkout


class Environment(_Model):
    """Where the run happened."""

    python: str  # Python version
    platform: str  # OS and architecture
    libraries: dict[str, str | None]  # installed versions of relevant libraries
    plugins: dict[str, str] = {}  # plugin distributions imported by the run's process → version


class TaskResult(_Model):
    """Results of one task."""

    task: str  # task address, e.g. "lengthgen/addition"
    origin: str  # where the task came from: "builtin", "include:<dir>", "plugin:<dist>==<version>"
    spec: dict[str, Any]  # the resolved task spec (after includes)
    spec_sha256: str  # hash of the resolved spec
    difficulty_name: str  # human name of the difficulty variable
    n_items: int  # evaluated items (before templates)
    dropped_records: int  # source records outside every bucket
    samples_file: str  # per-sample file, relative to the output directory
    samples_sha256: str | None = None  # sha256 of the samples file's bytes (None: not recorded)
    templates: list[TemplateReport]  # per (template, condition): bucket table, roles and gaps
    analyses: list[AnalysisResult] = []  # task-level analyses the task asked for
    shift: list[ShiftSplit] = Field(  # gap = difficulty + shift per template (gaps/shift)
        default_factory=list, exclude_if=lambda v: not v)
    horizons: list[HorizonResult] = Field(  # the adaptive horizon search (--horizon)
        default_factory=list, exclude_if=lambda v: not v)


class HorizonResult(_Model):
    """The adaptive horizon search of one template and exemplar condition (``--horizon``;
    ``scoring/horizon``): d50, where accuracy falls halfway from the ID level to the baseline."""

    template: str  # prompt template id
    condition: str = ""  # few-shot condition id (the matched-exemplar control: "matched")
    status: str  # measured, above ("≥ max"), below ("≤ min"), floor or misfit (no single fall)
    d50: float | None  # posterior median of d50 (measured only)
    lower: float | None  # 95% credible limits of d50 (measured only) ...
    upper: float | None  # ... upper None: the interval runs past the range
    edge: float  # largest ID difficulty (d50 / edge is the horizon as a multiple of it)
    range_lo: int  # smallest difficulty the search could try
    range_hi: int  # largest difficulty it could try
    range_end: str  # what set range_hi: spec (horizon.max), limit (horizon.limit), cap (the
    # widenings' end), context or generator (runs before answer budgets: also output)
    top: float  # fitted accuracy on easy items (posterior mean)
    spread: float  # σ: the fall's width in ln-difficulty units (geometric posterior mean)
    baseline: float  # the item baseline the fall is measured down to
    items: int  # search answers (in the horizon samples file), the check round's included
    id_items: int  # ID answers of the fixed run the fit also used
    points: list[tuple[int, float, int]]  # (difficulty, correct, answered) of the search
    fixed_crossing: float | None  # where the fixed-bucket curve crosses the same midpoint
    samples_file: str  # the search's per-sample file, relative to the output directory
    samples_sha256: str  # sha256 of its bytes
    horizon: dict[str, Any]  # the task's horizon spec the search ran under
    overdispersion: float = 0.0  # ρ, posterior mean: intra-class correlation of a batch
    shapes: list[float] = []  # posterior weight of each fall shape (normal, late, early)
    check_items: int = 0  # answers of the check round (the last ones of the samples file)
    fit_p: float | None = None  # the check round's p-value (misfit below 0.01; None: no check)
    id_points: list[tuple[float, float, int]] = []  # (difficulty, correct, answered) of the ID
    level: float | None = Field(None, exclude_if=lambda v: v is None)  # horizon.level: a
    # share of the easy-item accuracy; the difficulty where accuracy is down to it (posterior
    # median) and its 95% interval (None: past the range's end)
    at_level: tuple[float | None, float | None, float | None] | None = Field(
        None, exclude_if=lambda v: v is None)
    rounds: list[int] = Field(  # answers per round in the order asked (the check round's
        default_factory=list, exclude_if=lambda v: not v)  # last): what rescore cuts them by
    lost: float = Field(0.0, exclude_if=lambda v: not v)  # share of the search's answers
    # wrong and cut by the answer budget after its raises (the run's cap; answers/budget)
    context_lost: float = Field(0.0, exclude_if=lambda v: not v)  # share of them wrong and
    # cut where the model's context, not the budget, ended their room (answers/budget)

    @property
    def factor(self) -> float | None:
        """d50 as a multiple of the ID edge (measured only)."""
        return None if self.d50 is None or self.edge <= 0 else self.d50 / self.edge

    def curve(self, d: float) -> float | None:
        """The fitted accuracy at difficulty ``d`` (measured only)."""
        from harness.scoring.horizon_model import fitted_accuracy

        if self.d50 is None:
            return None
        return fitted_accuracy(d, self.d50, self.spread, self.top, self.baseline, self.shapes)

    def accuracies(self) -> list[tuple[float, float, int]]:
        """Every tried difficulty's (difficulty, accuracy, answered), ID answers included."""
        per: dict[float, tuple[float, int]] = {}
        for d, c, n in [*self.id_points, *self.points]:
            c0, n0 = per.get(float(d), (0.0, 0))
            per[float(d)] = (c0 + c, n0 + n)
        return [(d, c / n, n) for d, (c, n) in sorted(per.items()) if n]


class TaskFailure(_Model):
    """A task that raised instead of finishing; the run's other tasks are unaffected."""

    task: str  # task address, e.g. "mybench/digits"
    origin: str  # where the task came from, as in ``TaskResult.origin``
    plugin: str | None = None  # "plugin:<dist>==<version>" whose code raised; None: no plugin's
    error: str  # the exception on one line: "Type: message" (a harness error: its message)


class CacheReport(_Model):
    """What the response cache did in this run."""

    path: str  # the SQLite file
    hits: int  # requests answered from the cache
    misses: int  # requests sent to the model (the run's model calls)
    regrown: int = Field(0, exclude_if=lambda v: not v)  # of the hits, answers stored under
    # another budget that ended before this one (``models/cache``: the same greedy answer)


class ReplayReport(BaseModel):
    """What a run took from earlier runs (``--replay``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sources: list[str]  # sha256 of each source run's results.json, in the order given
    answered: int  # requests answered from them (not sent to the model, not cached)
    grown: int = Field(0, exclude_if=lambda v: not v)  # of them, answers that ended before a
    # smaller budget than the request's (``run/replay``: the same greedy answer)



class Results(_Model):
    """The whole results.json."""

    schema_version: int  # bumped on incompatible changes
    harness: HarnessInfo  # harness version and commit
    run: RunConfig  # the run's options
    model: ModelIdentity  # model identity
    environment: Environment  # Python, platform, library versions
    tasks: list[TaskResult]  # one entry per finished task, in run order
    failed: list[TaskFailure] = []  # tasks that raised (no entry in ``tasks``), in run order
    timings: dict[str, float]  # seconds per phase, load average (change between reruns)
    cache: CacheReport | None = None  # response-cache use; None when run with --no-cache
    replay: ReplayReport | None = Field(  # answers taken from earlier runs (--replay)
        None, exclude_if=lambda v: v is None)


def spec_hash(spec: TaskSpec, without: tuple[str, ...] = (),
              without_output: tuple[str, ...] = ()) -> str:
    """sha256 of the canonical JSON of a resolved spec; the ``horizon`` search range is left
    out (it changes no fixed-bucket item or number; a horizon result records it itself), and
    the keys ``without`` and ``without_output`` (of ``output``) name (``run.replay``)."""
    data = spec.model_dump(mode="json")
    for key in ("horizon", *without):
        data.pop(key, None)
    for key in without_output:
        data["output"].pop(key, None)
    canon = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()


COSTS_TABLE = "harness/leaderboard/costs.json"  # data the build script writes, not code


def checkout_dirty(root: Path) -> bool:
    """Uncommitted changes to the code or tasks of the checkout at ``root``; the measured cost
    table is left out (the build script writes it while a board is built; it never changes a
    result)."""
    status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "harness",
                             "tasks", f":(exclude){COSTS_TABLE}"],
                            capture_output=True, text=True).stdout
    return bool(status.strip())


def harness_info() -> HarnessInfo:
    """Version, and the git commit when running from a checkout."""
    root = Path(__file__).resolve().parents[2]  # the checkout: harness/run/results.py
    commit: str | None = None
    dirty: bool | None = None
    if (root / ".git").exists():
        try:
            commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"],
                                    capture_output=True, text=True, check=True).stdout.strip()
            dirty = checkout_dirty(root)
        except (OSError, subprocess.CalledProcessError):
            commit = None
    return HarnessInfo(version=__version__, git_commit=commit or None, git_dirty=dirty)


def environment(plugins: dict[str, str] | None = None) -> Environment:
    """Python, platform and library versions; ``plugins``: the plugin distributions the run
    used (default: every plugin imported so far)."""
    libs: dict[str, str | None] = {}
    for name in _LIBRARIES:
        try:
            libs[name] = version(name)
        except PackageNotFoundError:
            libs[name] = None
    return Environment(python=platform.python_version(),
                       platform=f"{platform.system()}-{platform.machine()}", libraries=libs,
                       plugins=loaded_distributions() if plugins is None else plugins)


def samples_path(output_dir: Path, task: str) -> Path:
    """``samples/<task>.jsonl`` (a task address "suite/name" becomes a subfolder)."""
    return output_dir / "samples" / f"{task}.jsonl"


class SampleWriter:
    """Writes sample records to a new JSONL file as they are scored (flushed per record), and
    the sha256 of its bytes. The file is created afresh without following symbolic links
    (see ``harness.run.rundir.open_new``; ``root``: the output folder, default the file's own);
    failing writes raise ``OutputError`` naming the file."""

    def __init__(self, path: Path, root: Path | None = None) -> None:
        self.path = path
        self._hash = hashlib.sha256()
        if root is None:
            self._guard(lambda: path.parent.mkdir(parents=True, exist_ok=True))
        self._f: IO[bytes] = self._guard(lambda: open_new(path, root or path.parent))

    def _guard(self, op: Callable[[], T]) -> T:
        try:
            return op()
        except OSError as e:
            raise OutputError(f"{self.path}: cannot write: {os_reason(e)}") from None

    def write(self, rec: SampleRecord) -> None:
        """Write one record as one line."""
        line = (json.dumps(rec.model_dump(mode="json"), ensure_ascii=False) + "\n").encode()
        self._hash.update(line)
        self._guard(lambda: self._f.write(line))
        self._guard(self._f.flush)

    def close(self) -> None:
        """Close the file."""
        if not self._f.closed:
            self._guard(self._f.close)

    @property
    def sha256(self) -> str:
        """sha256 of every byte written so far."""
        return self._hash.hexdigest()


def check_sha256(path: Path, expected: str | None) -> None:
    """Raise ``HarnessError`` when ``path``'s bytes do not have the sha256 results.json records
    (``expected`` None: nothing recorded, nothing to check)."""
    if expected is not None and (got := sha256_file(path)) != expected:
        raise HarnessError(f"{path}: sha256 {got[:12]}… differs from samples_sha256 "
                           f"{expected[:12]}… in results.json: the samples file was changed "
                           "after the run")


def read_samples(path: Path, sha256: str | None = None) -> list[SampleRecord]:
    """Load a samples file back into records (checked against ``sha256`` when given)."""
    check_sha256(path, sha256)
    out: list[SampleRecord] = []
    try:
        with path.open("rb") as f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    out.append(_sample_line(path, n, line))
    except OSError as e:
        raise HarnessError(f"{path}: cannot read: {e.strerror or e}") from None
    return out


def _sample_line(path: Path, n: int, line: bytes) -> SampleRecord:
    """One samples-file line as a record; a bad line is one ``HarnessError`` naming it."""
    try:
        return SampleRecord.model_validate_json(line)
    except ValidationError as e:
        raise HarnessError(f"{path}:{n}: invalid sample record: {first_problem(e, '(line)')}"
                           ) from None


# What a slim record keeps of the per-sample fields only the samples file needs
SLIM: dict[str, Any] = {"prompt": "", "output": "", "extracted": "", "target": "", "calls": [],
                        "choices": None, "choice_logprobs": None}


class SamplesFile(Sequence[SampleRecord]):
    """A samples file as a sequence of records, read from disk on demand: iterating streams the
    file one record at a time, and indexing seeks to the record (line offsets are indexed on
    first use, 8 bytes per record). ``slim``: records without prompts, targets, outputs, choices
    and calls (fields set as in ``SLIM``), what analyses get."""

    def __init__(self, path: Path, *, slim: bool = False, sha256: str | None = None) -> None:
        self.path = path
        self.slim = slim
        self.sha256 = sha256  # expected sha256 of the file, checked before the first read
        self._offsets: array[int] | None = None
        self._checked = sha256 is None

    @classmethod
    def of(cls, output_dir: Path, task: TaskResult) -> SamplesFile:
        """A task's samples file in its run folder, checked against results.json's
        ``samples_sha256``; a ``samples_file`` outside the folder is refused."""
        path = output_dir / task.samples_file
        if not path.resolve().is_relative_to(output_dir.resolve()):
            raise HarnessError(f"{output_dir / 'results.json'}: task {task.task}: samples_file "
                               f"{task.samples_file!r} is outside the run folder")
        return cls(path, sha256=task.samples_sha256)

    def _check(self) -> None:
        if not self._checked:
            check_sha256(self.path, self.sha256)
            self._checked = True

    def _parse(self, line: bytes) -> SampleRecord:
        if not self.slim:
            return SampleRecord.model_validate_json(line)
        return SampleRecord.model_validate({**json.loads(line), **SLIM})

    def _index(self) -> array[int]:
        if self._offsets is None:
            self._check()
            offsets, at = array("q"), 0
            with self.path.open("rb") as f:
                for line in f:
                    if line.strip():
                        offsets.append(at)
                    at += len(line)
            self._offsets = offsets
        return self._offsets

    def __len__(self) -> int:
        return len(self._index())

    @overload
    def __getitem__(self, i: int) -> SampleRecord: ...

    @overload
    def __getitem__(self, i: slice) -> list[SampleRecord]: ...

    def __getitem__(self, i: int | slice) -> SampleRecord | list[SampleRecord]:
        offsets = self._index()
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(offsets)))]
        with self.path.open("rb") as f:
            f.seek(offsets[i])
            return self._parse(f.readline())

    def __iter__(self) -> Iterator[SampleRecord]:
        self._check()
        with self.path.open("rb") as f:
            for line in f:
                if line.strip():
                    yield self._parse(line)


def write_results(results: Results, output_dir: Path) -> Path:
    """Write results.json atomically (a fresh temporary file renamed over it: a link is
    replaced, never followed); failures raise ``OutputError`` naming the file."""
    path = output_dir / "results.json"
    text = json.dumps(results.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text)
    except OSError as e:
        raise OutputError(f"{path}: cannot write: {os_reason(e)}") from None
    return path
