"""Whether the Hugging Face hub can be used at all, decided once per process, so that a lookup
that cannot succeed fails at once instead of spending half a minute on retries.

The hub cannot be used when an offline variable is set (``HF_HUB_OFFLINE``,
``HF_DATASETS_OFFLINE``, ``TRANSFORMERS_OFFLINE``), or when one HEAD request to its address
(``HF_ENDPOINT``, default https://huggingface.co) gets no HTTP answer below 500 within
``PROBE_SECONDS``, name lookup included.
"""

from __future__ import annotations

import os
import threading

PROBE_SECONDS = 2.0
_OFFLINE_VARS = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")
_answers: dict[str, str | None] = {}  # address -> why it cannot be used (None: it can)


def _reachable(url: str) -> str | None:
    """None when ``url`` answers a HEAD request in time (any status below 500), else why not.
    The request runs in a daemon thread: a name lookup has no timeout of its own."""
    import urllib.error
    import urllib.request

    why: list[str | None] = []

    def ask() -> None:
        try:
            with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"),
                                        timeout=PROBE_SECONDS):
                why.append(None)
        except urllib.error.HTTPError as e:
            why.append(f"HTTP {e.code}" if e.code >= 500 else None)
        except (OSError, ValueError) as e:  # URLError is an OSError
            reason = getattr(e, "reason", e)
            why.append(str(getattr(reason, "strerror", None) or reason or type(e).__name__))

    thread = threading.Thread(target=ask, name="hub-access", daemon=True)
    thread.start()
    thread.join(PROBE_SECONDS)
    return why[0] if why else f"no answer within {PROBE_SECONDS:g} s"


def hub_unusable() -> str | None:
    """Why the hub cannot be used now, or None when it answered."""
    for var in _OFFLINE_VARS:
        if os.environ.get(var, "").strip().lower() in ("1", "true", "yes", "on"):
            return f"{var} is set"
    url = (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        return f"HF_ENDPOINT={url!r} is not an http(s) address"
    if url not in _answers:
        _answers[url] = _reachable(url)
    found = _answers[url]
    return None if found is None else f"{url} cannot be reached ({found})"
