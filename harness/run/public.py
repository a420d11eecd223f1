"""What results.json records of the machine it ran on: paths in a public form, never its layout.

A local model's path and the response cache's are written relative to the working directory,
the Python environment's packages or the home folder (``public_path``); the output, task and
cache folders relative to the working directory, or by their names alone (``public_run``,
``public_origin``). Nothing reads a
recorded path back to find a file: a run's files are found beside its results.json.
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.config import RunConfig
from harness.lm import ModelIdentity


def public_path(path: str) -> str:
    """``path`` as results.json records it, without the machine's layout: inside the working
    directory ``./<relative>``, inside the Python environment's packages
    ``<site-packages>/<relative>``, inside the home folder ``~/<relative>``; anything else (a hub
    id, a URL) unchanged; an absolute path elsewhere ``<elsewhere>/<name>``. The ``./`` keeps a
    local folder's path distinct from its name, which is how readers tell a local model from a
    hub id."""
    if not path or not Path(path).is_absolute():
        return path
    import sysconfig

    p = Path(path)
    bases = [("./", Path.cwd())]
    bases += [("<site-packages>/", Path(sysconfig.get_paths()[k])) for k in ("purelib", "platlib")]
    bases.append(("~/", Path.home()))
    for prefix, base in bases:
        for b in (base, base.resolve()):
            if p.is_relative_to(b):
                return prefix + p.relative_to(b).as_posix()
    return f"<elsewhere>/{p.name}"


def public_identity(identity: ModelIdentity) -> ModelIdentity:
    """The model identity with its ``path`` made public (see ``public_path``)."""
    if identity.path is None:
        return identity
    return identity.model_copy(update={"path": public_path(identity.path)})


def public_folder(folder: Path) -> Path:
    """An output folder as results.json records it: relative to the working directory when it
    lies under it (``runs/x``, as ``--output-dir`` usually names it), else its name alone."""
    p = Path(os.path.abspath(folder))
    here = Path.cwd()
    for base in (here, here.resolve()):
        if p.is_relative_to(base):
            return p.relative_to(base)
    if p.resolve().is_relative_to(here.resolve()):
        return p.resolve().relative_to(here.resolve())
    return Path(p.name or ".")


def public_run(cfg: RunConfig) -> RunConfig:
    """The run's options as results.json records them: the output folder, the task folders
    (``--include-path``) and the response cache's folder in their public form
    (``public_folder``); the run itself keeps them as given."""
    return cfg.model_copy(update={
        "output_dir": public_folder(cfg.output_dir),
        "include_paths": [public_folder(p) for p in cfg.include_paths],
        "cache_dir": None if cfg.cache_dir is None else public_folder(cfg.cache_dir)})


def public_origin(origin: str) -> str:
    """A task's origin as results.json records it: ``include:<dir>`` with the folder in its
    public form (``public_folder``); ``builtin`` and ``plugin:…`` unchanged."""
    kind, sep, where = origin.partition(":")
    if kind != "include" or not sep:
        return origin
    return f"include:{public_folder(Path(where)).as_posix()}"


def public_text(text: str, folders: list[Path]) -> str:
    """A message (a failed task's error) with the task folders' paths in their public form
    (``public_folder``): results.json quotes it, the terminal showed it whole."""
    for folder in sorted(folders, key=lambda f: -len(str(f))):
        public = public_folder(folder).as_posix()
        for shown in dict.fromkeys((str(Path(os.path.abspath(folder))), str(folder.resolve()))):
            if Path(shown).is_absolute():
                text = text.replace(shown, public)
    return text
