"""``harness compare --json`` files published on a leaderboard: read, checked, copied into the
board (``compare/<sha256[:12]>.json``, so a rebuild from the board finds them) and rendered as
``compare/<sha256[:12]>.html``."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from harness.errors import HarnessError
from harness.leaderboard.inputs import Copy
from harness.leaderboard.paired import Comparison


@dataclass(frozen=True)
class ComparePage:
    """One published comparison."""

    page: str  # its page, relative to the board
    data: str  # its JSON copy, relative to the board
    comparison: Comparison  # the numbers


def load_comparisons(paths: Sequence[Path]) -> tuple[list[ComparePage], list[Copy]]:
    """Read ``compare --json`` files (one-line errors naming the file); pages in input order."""
    pages: list[ComparePage] = []
    copies: list[Copy] = []
    for p in paths:
        try:
            raw = p.read_bytes()
            data = json.loads(raw)
        except FileNotFoundError:
            raise HarnessError(f"--compare {p}: no such file") from None
        except (OSError, ValueError) as e:
            raise HarnessError(f"--compare {p}: not a JSON file ({e})") from None
        if not isinstance(data, dict) or data.get("kind") != "genharness-compare":
            raise HarnessError(f"--compare {p}: not the output of harness compare --json")
        try:
            comp = Comparison.model_validate(data)
        except ValidationError as e:
            err = e.errors()[0]
            where = ".".join(str(x) for x in err["loc"])
            raise HarnessError(f"--compare {p}: {where}: {err['msg']}") from None
        stem = hashlib.sha256(raw).hexdigest()[:12]
        if any(x.data == f"compare/{stem}.json" for x in pages):
            continue
        pages.append(ComparePage(f"compare/{stem}.html", f"compare/{stem}.json", comp))
        copies.append(Copy(p, f"compare/{stem}.json", None, str(p)))
    return pages, copies
