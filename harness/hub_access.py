"""Whether the Hugging Face hub can be used at all, decided once per process, so that a lookup
that cannot succeed fails at once instead of spending half a minute on retries.

The hub cannot be used when an offline variable is set (``HF_HUB_OFFLINE`` and, for datasets,
``HF_DATASETS_OFFLINE``, for models ``TRANSFORMERS_OFFLINE``), or when one HEAD request to its
address (``HF_ENDPOINT``, default https://huggingface.co; proxies from the environment) gets no
HTTP answer below 500 within ``PROBE_SECONDS``, name lookup included. An HTTP request, not just a
TCP connect: some networks accept every connection and drop it later. Data sources
(``sources/hf.py``) and model loading (``models/hub.py``) both ask here.
"""

from __future__ import annotations

import os
import threading

PROBE_SECONDS = 2.0
DATASETS_OFFLINE = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")  # what switches datasets off
MODELS_OFFLINE = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")  # what switches model loading off
_TRUE = ("1", "true", "yes", "on")
_probed: dict[str, str | None] = {}  # address -> why it cannot be used (None: it can)


def probe(url: str, timeout: float = PROBE_SECONDS) -> str | None:
    """None when ``url`` answers a HEAD request within ``timeout`` seconds (any status below
    500), else why not. The request runs in a daemon thread: a name lookup has no timeout of
    its own."""
    import urllib.error
    import urllib.request

    why: list[str | None] = []

    def ask() -> None:
        try:
            with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"),
                                        timeout=timeout):
                why.append(None)
        except urllib.error.HTTPError as e:
            why.append(f"HTTP {e.code}" if e.code >= 500 else None)
        except (OSError, ValueError) as e:  # URLError is an OSError
            reason = getattr(e, "reason", e)
            why.append(str(getattr(reason, "strerror", None) or reason or type(e).__name__))

    thread = threading.Thread(target=ask, name="hub-access", daemon=True)
    thread.start()
    thread.join(timeout)
    return why[0] if why else f"no answer within {timeout:g} s"


def offline_var(names: tuple[str, ...] = DATASETS_OFFLINE) -> str | None:
    """The first of ``names`` set to a true value (``HF_HUB_OFFLINE=1``), or None."""
    for var in names:
        if os.environ.get(var, "").strip().lower() in _TRUE:
            return var
    return None


def hub_endpoint() -> str:
    """The hub's address (``HF_ENDPOINT``, default https://huggingface.co)."""
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").strip().rstrip("/")


def hub_unusable(offline: tuple[str, ...] = DATASETS_OFFLINE) -> str | None:
    """Why the hub cannot be used now (one of the ``offline`` variables is set, or the probe
    failed), or None when it answered."""
    var = offline_var(offline)
    if var:
        return f"{var} is set"
    url = hub_endpoint()
    if not url.startswith(("http://", "https://")):
        return f"HF_ENDPOINT={url!r} is not an http(s) address"
    if url not in _probed:
        _probed[url] = probe(url)
    found = _probed[url]
    return None if found is None else f"{url} cannot be reached ({found})"
