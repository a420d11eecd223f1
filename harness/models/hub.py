"""Fail fast when a hub model cannot be had: offline mode, or a hub that cannot be reached.

Before an ``hf:`` name that is neither a built-in alias nor a local path is loaded (and before
torch is imported), ``check_hub_model`` decides, once per process, whether the Hugging Face hub
can be used:

- ``HF_HUB_OFFLINE`` (or ``TRANSFORMERS_OFFLINE``) set to a true value: it cannot;
- otherwise the one reachability probe of :mod:`harness.hub_access` (a HEAD request to
  ``HF_ENDPOINT`` within 2 s): an unresolvable, refusing or silent host, or a 5xx answer, means
  it cannot.

When the hub cannot be used, a model already in the Hugging Face cache loads from there with
offline mode switched on (no request, no retries); any other name fails at once with one line.
When the hub answers, nothing changes: transformers loads (or reports) the model as usual.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from harness.errors import ModelLoadError
from harness.hub_access import MODELS_OFFLINE
from harness.hub_access import hub_unusable as _hub_unusable


def hub_unusable() -> str | None:
    """Why models cannot come from the hub now (offline mode, or its address does not answer),
    or None: the one probe of :mod:`harness.hub_access`."""
    return _hub_unusable(MODELS_OFFLINE)


def go_offline() -> None:
    """Switch the Hugging Face libraries to offline mode for the rest of the process."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:  # imported already: it read the variable at import time
        constants.HF_HUB_OFFLINE = True  # type: ignore[attr-defined]


def _in_cache(repo_id: str, filename: str, revision: str | None) -> bool:
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(repo_id, filename, revision=revision)
    except Exception:  # a malformed repo id or revision: not in the cache
        return False
    return isinstance(found, str) and Path(found).is_file()


def hub_cache_dir() -> str:
    """Where the Hugging Face cache keeps hub models (for messages)."""
    from huggingface_hub import constants

    return str(constants.HF_HUB_CACHE)


def check_hub_model(name: str, revision: str | None = None, gguf_file: str | None = None) -> bool:
    """For a hub id ``name``: True when it must load offline from the cache, False when the
    hub can be used; raises ``ModelLoadError`` when neither the hub nor the cache has it."""
    why = hub_unusable()
    if why is None:
        return False
    if _in_cache(name, gguf_file or "config.json", revision):
        go_offline()
        return True
    raise ModelLoadError(
        f"hf:{name}: not a built-in alias or a local file or folder, not in the Hugging Face "
        f"cache ({hub_cache_dir()}), and the hub cannot be used: {why}"
    )


def check_hub_name(name: str, model_args: dict[str, str]) -> None:
    """``check_hub_model`` for a backend's model name when it can only be a hub id (aliases,
    local paths and alias typos are the backend's to resolve and report)."""
    from harness.models.aliases import is_hub_id

    if is_hub_id(name):
        check_hub_model(name, model_args.get("revision") or None,
                        model_args.get("gguf_file") or None)
