"""Seed derivation: every seeded step gets its own stream from a hash of named parts.

Hashing (not ``hash()``, not process order) makes every stream independent of batch size, item
order, process count and platform.
"""

from __future__ import annotations

import hashlib


def derive_seed(*parts: object) -> int:
    """A 64-bit unsigned seed from the parts, e.g. ``derive_seed(run_seed, task, item_id)``."""
    key = "\x1f".join(str(p) for p in parts).encode("utf-8")
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big")
