"""Where the fixed buckets see the fall, does their midpoint crossing lie inside the adaptive
search's d50 interval? One row per board row with a horizon search (issue 34, item 4).

    .venv/bin/python scripts/horizon_agreement.py leaderboards/offline-small
    .venv/bin/python scripts/horizon_agreement.py leaderboards/offline-small \
        --write-doc docs/statistics.md

``--write-doc`` puts the table between the ``horizon-agreement`` markers of the doc;
``tests/unit/test_horizon_coverage.py`` checks that block against the board.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import write_doc  # noqa: E402
from harness.leaderboard.horizons import agreement_table  # noqa: E402
from harness.leaderboard.inputs import load_leaderboard  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("board", type=Path, help="a leaderboard folder")
    ap.add_argument("--write-doc", type=Path, help="docs file with the marker block")
    args = ap.parse_args()
    table = agreement_table(load_leaderboard(args.board / "leaderboard.json"))
    print(table)
    if args.write_doc:
        write_doc(args.write_doc, {"horizon-agreement": table})


if __name__ == "__main__":
    main()
