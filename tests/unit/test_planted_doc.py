"""docs/planted.md's example run and sizing table are what ``scripts/planted_doc.py`` makes
from planted runs today (no number in them is typed)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_planted_doc_holds_what_its_script_generates() -> None:
    spec = importlib.util.spec_from_file_location("planted_doc", ROOT / "scripts" /
                                                  "planted_doc.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    text = (ROOT / "docs" / "planted.md").read_text(encoding="utf-8")
    for name, body in script.blocks().items():
        block = f"<!-- {name}:start -->\n{body.removesuffix(chr(10))}\n<!-- {name}:end -->"
        assert block in text, f"docs/planted.md: block {name} is stale: run scripts/planted_doc.py"
    lo, hi = map(float, re.search(r"d50 \(io\): .*95% interval \[([0-9.]+), ([0-9.]+)\]",
                                  script.example()).groups())  # type: ignore[union-attr]
    assert lo <= 20 <= hi  # the example's interval holds the planted d50
