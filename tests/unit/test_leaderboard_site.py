"""The static site's HTML without a browser: structure, relative links, escaping."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

from harness.leaderboard.build import build  # noqa: E402
from tests.unit.test_leaderboard_fixtures import (  # noqa: E402
    TaskSpecLite,
    make_results,
    record,
    write_run,
)

EVIL = "<img src=x onerror=alert(1)>"
EVIL_DESC = "</p><script>alert(2)</script>"


def evil_board(tmp_path: Path) -> Path:
    """A leaderboard whose model name, task description, bucket label, template and citation
    carry markup."""
    task = TaskSpecLite("lengthgen/addition", [("1", "ID", 4, 3), ("<b>2</b>", "OOD", 4, 1)],
                        gap=(0.5, 0.1, 0.9), template="<i>tpl</i>", description=EVIL_DESC,
                        analyses=[("effective_length", 4.0)],
                        spec_extra={"citations": ["<a href='javascript:alert(3)'>x</a>"]})
    other = TaskSpecLite("lengthgen/addition", [("1", "ID", 4, 4), ("<b>2</b>", "OOD", 4, 4)],
                         gap=(0.0, -0.2, 0.2), description=EVIL_DESC,
                         spec_extra={"citations": ["<a href='javascript:alert(3)'>x</a>"]})
    recs = [record(task.task, str(i), 1.0, template="<i>tpl</i>") for i in range(2)]
    runs = [write_run(tmp_path / "evil", make_results(EVIL, [task]), {task.task: recs}),
            write_run(tmp_path / "good", make_results("good-model", [other]))]
    out = tmp_path / "lb"
    build(runs, out, title="<script>alert(4)</script>", png=False)
    return out


def _pages(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): p.read_text() for p in out.rglob("*.html")}


def test_markup_in_results_is_escaped_everywhere(tmp_path: Path) -> None:
    out = evil_board(tmp_path)
    pages = _pages(out)
    assert set(pages) >= {"index.html", "tasks/lengthgen__addition.html"}
    for name, html in pages.items():
        assert "<img" not in html, name
        assert re.search(r"<script>(?!</script>)", html) is None, name  # only <script src=...>
        assert "<b>2</b>" not in html and "<i>tpl</i>" not in html, name
        assert "javascript:" not in html.replace("javascript:alert(3)&#39;&gt;", ""), name
    index, task = pages["index.html"], pages["tasks/lengthgen__addition.html"]
    assert "&lt;img src=x onerror=alert(1)&gt;" in index
    assert "&lt;img src=x onerror=alert(1)&gt;" in task  # table, legend and tooltips
    assert "&lt;/p&gt;&lt;script&gt;alert(2)&lt;/script&gt;" in task
    assert "&lt;b&gt;2&lt;/b&gt;" in task  # bucket label in the table and the SVG axis
    model_pages = [n for n in pages if n.startswith("models/")]
    assert "models/img-src-x-onerror-alert-1.html" in model_pages
    md = (out / "leaderboard.md").read_text()
    assert "<img" not in md and "&lt;img src=x onerror=alert(1)&gt;" in md
    assert "<script>" not in md


def test_site_is_self_contained(tmp_path: Path) -> None:
    out = evil_board(tmp_path)
    for name, html in _pages(out).items():
        assert 'Content-Security-Policy' in html
        for url in re.findall(r'(?:href|src)="([^"]*)"', html):
            assert not re.match(r"[a-z]+:", url), (name, url)  # relative only: no network
            target = (out / name).parent / url.split("#")[0]
            assert target.exists(), (name, url)


def test_curves_and_gap_bars(tmp_path: Path) -> None:
    out = evil_board(tmp_path)
    task = (out / "tasks/lengthgen__addition.html").read_text()
    curve = re.search(r'<svg class="chart curve".*?</svg>', task, re.S)
    assert curve is not None
    assert curve.group(0).count('class="series"') == 2
    assert curve.group(0).count('class="band"') == 2
    assert curve.group(0).count('class="boundary"') == 1
    gaps = re.search(r'<svg class="chart gaps".*?</svg>', task, re.S)
    assert gaps is not None and gaps.group(0).count('class="bar"') == 2
    assert gaps.group(0).count('class="ci"') == 2
    index = (out / "index.html").read_text()
    table = re.search(r'<table id="leaderboard".*?</table>', index, re.S)
    assert table is not None and table.group(0).count("<tr>") == 3  # header + 2 entries
