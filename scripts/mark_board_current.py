"""Mark a board current in leaderboards/manifest.json (CI then rebuilds it and checks its specs).

    python3 scripts/mark_board_current.py NAME "built by SCRIPT"
"""

import json
import sys
from pathlib import Path

path = Path(__file__).resolve().parent.parent / "leaderboards" / "manifest.json"
name, note = sys.argv[1], sys.argv[2]
data = json.loads(path.read_text(encoding="utf-8"))
data["boards"][name] = {"status": "current", "note": note}
path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
