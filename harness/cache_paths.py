"""Where the harness keeps what it caches: one module, one root.

The root is ``$GENHARNESS_CACHE_DIR``, else the platform's user cache folder for genharness
(never inside site-packages). Each kind of cached thing has a folder of its own under it.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "GENHARNESS_CACHE_DIR"  # the root of every harness cache
RESPONSE_CACHE_ENV = "GENHARNESS_RESPONSE_CACHE"  # the response cache folder alone


def cache_root() -> Path:
    """``$GENHARNESS_CACHE_DIR``, else the platform's user cache folder for genharness."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("genharness"))


def data_dir() -> Path:
    """Downloaded data files (``fetch_file``)."""
    return cache_root() / "data"


def responses_dir() -> Path:
    """The response cache: ``$GENHARNESS_RESPONSE_CACHE``, else ``responses/`` under the root."""
    env = os.environ.get(RESPONSE_CACHE_ENV)
    return Path(env).expanduser() if env else cache_root() / "responses"
