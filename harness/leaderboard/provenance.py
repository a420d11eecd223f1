"""Where an entry's numbers come from, in public terms: model identifiers that are never local
paths, the run's recorded start time (never a file's modification time), the command that
reruns it, and model families across training seeds."""

from __future__ import annotations

import re
import shlex
from pathlib import PurePosixPath

from harness.run.results import Results

_FAMILY = re.compile(r"^(?P<family>.+)-s(?P<seed>\d+)$")


def public_id(res: Results) -> str:
    """``package==version`` for a built-in alias, ``hub-id@revision`` for a hub model, and for a
    local model its path relative to the checkout (or its last part) with the weights hash."""
    from harness.models.aliases import ALIASES

    m = res.model
    alias = ALIASES.get(m.name)
    if alias is not None:
        pinned = next((w for w in alias.install.split() if "==" in w), alias.module)
        return pinned
    name = m.name
    local = name.startswith(("/", ".", "~")) or name.endswith(".gguf") or (
        m.path is not None and m.path != name)
    if not local:
        return f"{name}@{m.revision or 'unpinned'}"
    parts = PurePosixPath(name).parts
    if PurePosixPath(name).is_absolute() or name.startswith("~") or ".." in parts:
        name = parts[-1] if parts else "model"
    sha = (m.weights_sha256 or "")[:12]
    return f"local:{name}" + (f" (weights sha256 {sha}…)" if sha else "")


def family_of(name: str) -> str | None:
    """A model's family: its name without a trailing ``-s<seed>`` (None when it has none)."""
    m = _FAMILY.match(name)
    return m.group("family") if m else None


def reproduce(res: Results) -> str:
    """The ``harness eval`` command (and commit) that reruns a results file's tasks; for local
    weights, a shell comment saying which numbers it gives bitwise."""
    r = res.run
    model = r.model
    backend, _, name = model.partition(":")
    if PurePosixPath(name).is_absolute() or name.startswith("~"):
        model = f"{backend}:<{public_id(res)}>"
    args = ["harness", "eval", "--model", model, "--tasks",
            ",".join(t.task for t in res.tasks) or ",".join(r.tasks), "--seed", str(r.seed)]
    if r.limit_per_bucket is not None:
        args += ["--limit-per-bucket", str(r.limit_per_bucket)]
    for folder in r.include_paths:  # a local absolute folder is named, not spelled out
        where = folder.as_posix()
        local = PurePosixPath(where).is_absolute() or where.startswith("~")
        args += ["--include-path", f"<{folder.name}>" if local else where]
    margs = {k: v for k, v in sorted(r.model_args.items()) if k != "device"}
    if margs:
        args += ["--model-args", ",".join(f"{k}={v}" for k, v in margs.items())]
    if r.templates:
        args += ["--templates", ",".join(r.templates)]
    if r.num_fewshot is not None:
        args += ["--num-fewshot", str(r.num_fewshot)]
    if r.fewshot_shared is not None:
        args.append("--fewshot-shared" if r.fewshot_shared else "--fewshot-per-item")
    if r.matched_control:
        args.append("--matched-control")
    if r.max_answer_tokens is not None:
        args += ["--max-answer-tokens", str(r.max_answer_tokens)]
    if r.apply_chat_template:
        args.append("--apply-chat-template")
    if r.strategy != "direct":
        args += ["--strategy", r.strategy]
    cmd = shlex.join(args)
    sha = res.model.weights_sha256
    if sha and public_id(res).startswith("local:"):  # weights that no package or hub pins
        cmd += (f"  # bitwise only with weights of sha256 {sha[:12]}…; weights trained again "
                "(another machine or build) are another draw of the seed: compare them as a "
                "distribution over seeds")
    commit = res.harness.git_commit
    return f"git checkout {commit[:12]} && {cmd}" if commit else cmd
