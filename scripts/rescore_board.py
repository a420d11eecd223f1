"""Recompute a published board's numbers from the answers it carries, asking no model.

    .venv/bin/python scripts/rescore_board.py leaderboards/offline-small

Every input run of the board (``leaderboard.json``'s ``sources``, in their order) is copied
with its samples into a scratch folder and rescored there (``harness rescore``: bucket tables,
gaps, analyses and horizon estimates computed again from the samples files); the board is then
built again from the rescored runs with the options it was built with (``build``) and its
published comparisons, and marked current in ``leaderboards/manifest.json``. A rescored run's
results.json changes where a number changed, so its copy moves to the folder of its new sha256.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    board = Path(sys.argv[1]).resolve()
    data = json.loads((board / "leaderboard.json").read_text(encoding="utf-8"))
    build = data["build"]
    from harness.run.rescore import rescore

    with tempfile.TemporaryDirectory() as tmp:
        results = []
        for i, src in enumerate(data["sources"]):
            run = (board / src["path"]).parent
            copy = Path(tmp) / f"{i:03d}"
            shutil.copytree(run, copy)
            results.append(str(rescore(copy)))
            print(f"rescored {src['path']}", flush=True)
        compare = []
        for name in build.get("compare", []):
            shutil.copy(board / name, Path(tmp) / Path(name).name)
            compare += ["--compare", str(Path(tmp) / Path(name).name)]
        cmd = [str(ROOT / ".venv" / "bin" / "harness"), "leaderboard", "build", *results, *compare,
               "--out", str(board), "--title", build["title"], "--samples", build["samples"],
               "--gzip-samples" if build["gzip_samples"] else "--no-gzip-samples",
               "--png" if build["png"] else "--no-png",
               "--skip-invalid" if build["skip_invalid"] else "--no-skip-invalid"]
        if build.get("target") is not None:
            cmd += ["--target", str(build["target"])]
        if build.get("min_per_bucket") is not None:
            cmd += ["--min-per-bucket", str(build["min_per_bucket"])]
        subprocess.run(cmd, check=True, cwd=ROOT)
    subprocess.run([sys.executable, str(ROOT / "scripts" / "mark_board_current.py"), board.name,
                    "built by scripts/build_leaderboard.sh; rescored from its own answers by "
                    "scripts/rescore_board.py"], check=True)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
