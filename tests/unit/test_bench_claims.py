"""bench/RESULTS.md's engines block is what bench/report.py makes of bench/results/*.json: no
number in it is typed."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_engines_block_is_generated_from_the_results() -> None:
    spec = importlib.util.spec_from_file_location("bench_report", ROOT / "bench" / "report.py")
    assert spec is not None and spec.loader is not None
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    text = (ROOT / "bench" / "RESULTS.md").read_text(encoding="utf-8")
    blocks = re.findall(r"<!-- engines:start -->\n(.*?)<!-- engines:end -->", text, flags=re.S)
    assert len(blocks) == 1
    assert "engines_smollm2" in blocks[0]  # the block holds the bench's tables
    assert blocks[0] == report.engines_markdown()
