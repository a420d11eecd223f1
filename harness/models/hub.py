"""Fail fast when a hub model cannot be had: offline mode, or a hub that cannot be reached.

Before an ``hf:`` name that is neither a built-in alias nor a local path is loaded (and before
torch is imported), ``check_hub_model`` decides, once per process, whether the Hugging Face hub
can be used:

- ``HF_HUB_OFFLINE`` (or ``TRANSFORMERS_OFFLINE``) set to a true value: it cannot;
- otherwise one HEAD request to the hub's address (``HF_ENDPOINT``, default
  https://huggingface.co; proxies from the environment) within ``PROBE_TIMEOUT_S``, name lookup
  included: an unresolvable, refusing or silent host, or a 5xx answer, means it cannot.

When the hub cannot be used, a model already in the Hugging Face cache loads from there with
offline mode switched on (no request, no retries); any other name fails at once with one line.
When the hub answers, nothing changes: transformers loads (or reports) the model as usual.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from harness.errors import ModelLoadError

PROBE_TIMEOUT_S = 2.0  # the longest the reachability probe may take, name lookup included
DEFAULT_ENDPOINT = "https://huggingface.co"
_TRUE = {"1", "true", "yes", "on"}
_probed: dict[str, str | None] = {}  # endpoint -> why it failed (None: it answered)


def offline_env() -> str | None:
    """The variable that switches the hub off (``HF_HUB_OFFLINE=1``), or None."""
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if os.environ.get(var, "").strip().lower() in _TRUE:
            return var
    return None


def hub_endpoint() -> str:
    """The hub's address (``HF_ENDPOINT``, default https://huggingface.co)."""
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).strip().rstrip("/")


def probe(url: str, timeout: float = PROBE_TIMEOUT_S) -> str | None:
    """Ask ``url`` for its headers; None when an HTTP answer below 500 comes within ``timeout``
    seconds, else why not. Proxies come from the environment, as for the hub's own requests.

    An HTTP request, not just a TCP connect: some networks accept every connection and drop
    it later. It runs in a daemon thread because a name lookup has no timeout of its own.
    """
    import urllib.error
    import urllib.request

    outcome: list[str | None] = []

    def ask() -> None:
        try:
            req = urllib.request.Request(url, method="HEAD")
            with urllib.request.urlopen(req, timeout=timeout):
                outcome.append(None)
        except urllib.error.HTTPError as e:
            outcome.append(None if e.code < 500 else f"HTTP {e.code}")
        except urllib.error.URLError as e:
            reason = e.reason
            outcome.append(getattr(reason, "strerror", None) or str(reason))
        except (OSError, ValueError) as e:
            outcome.append(getattr(e, "strerror", None) or str(e) or type(e).__name__)

    worker = threading.Thread(target=ask, name="hub-probe", daemon=True)
    worker.start()
    worker.join(timeout)
    if not outcome:
        return f"no answer within {timeout:g} s"
    return outcome[0]


def hub_unusable() -> str | None:
    """Why the hub cannot be used now (offline mode, or the probe's failure), or None."""
    var = offline_env()
    if var:
        return f"{var} is set"
    url = hub_endpoint()
    if not url.startswith(("http://", "https://")):
        return f"HF_ENDPOINT={url!r} is not an http(s) address"
    if url not in _probed:
        _probed[url] = probe(url)
    why = _probed[url]
    return None if why is None else f"{url} cannot be reached ({why})"


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
