"""One writer for the generated sections of the docs (``harness.files.write_blocks``): the
summary blocks (``harness leaderboard summary --into``), the benchmark and statistics tables
(``bench/common.write_doc``: bench/report.py, bench/cost_table.py, bench/horizon_sim.py,
scripts/horizon_agreement.py) and the reference-model tables all go through it."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from harness.errors import HarnessError
from harness.files import write_blocks
from harness.leaderboard.inputs import load_leaderboard
from harness.leaderboard.summary import summary_md, write_into

ROOT = Path(__file__).resolve().parents[2]


def test_the_body_between_the_markers_is_replaced_and_the_rest_kept(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("# t\n<!-- a:start -->\nold\n<!-- a:end -->\nmid\n"
                   "<!-- s:b:begin -->\n<!-- s:b:end -->\nend\n", encoding="utf-8")
    write_blocks(doc, {"a": "new\nlines"})  # no line break at the end: one is added
    write_blocks(doc, {"s:b": "x\n"}, begin="begin")  # one at the end: kept single
    assert doc.read_text(encoding="utf-8") == (
        "# t\n<!-- a:start -->\nnew\nlines\n<!-- a:end -->\nmid\n"
        "<!-- s:b:begin -->\nx\n<!-- s:b:end -->\nend\n")


@pytest.mark.parametrize(("text", "why"), [
    ("no markers\n", "found 0 start and 0 end marker(s)"),
    ("<!-- a:start -->\n<!-- a:end -->\n<!-- a:start -->\n", "found 2 start and 1 end"),
    ("<!-- a:end -->\n<!-- a:start -->\n", "'<!-- a:end -->' comes before '<!-- a:start -->'"),
])
def test_a_missing_repeated_or_reversed_block_is_one_line(tmp_path: Path, text: str,
                                                         why: str) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(text, encoding="utf-8")
    with pytest.raises(HarnessError, match="doc.md: ") as e:
        write_blocks(doc, {"a": "body"})
    assert why in str(e.value) and "\n" not in str(e.value)
    assert doc.read_text(encoding="utf-8") == text  # nothing written


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_committed_blocks_are_written_again_unchanged(tmp_path: Path) -> None:
    """Each writer, run on a copy of its committed doc, leaves it byte for byte as it is: the
    one writer keeps the form the separate writers had."""
    results = tmp_path / "RESULTS.md"
    shutil.copy(ROOT / "bench" / "RESULTS.md", results)
    _load(ROOT / "bench" / "report.py").write_engines(results)
    assert results.read_bytes() == (ROOT / "bench" / "RESULTS.md").read_bytes()
    readme = tmp_path / "README.md"
    shutil.copy(ROOT / "leaderboards" / "README.md", readme)
    board = load_leaderboard(ROOT / "leaderboards" / "offline-small" / "leaderboard.json")
    write_into(readme, "offline-small", summary_md(board))
    assert readme.read_bytes() == (ROOT / "leaderboards" / "README.md").read_bytes()
    with pytest.raises(SystemExit, match="no-blocks.md: expected one '<!-- engines:start -->'"):
        (tmp_path / "no-blocks.md").write_text("nothing\n", encoding="utf-8")
        _load(ROOT / "bench" / "report.py").write_engines(tmp_path / "no-blocks.md")
