"""The leaderboard site in a real browser: Debian's headless chromium driven over the DevTools
protocol (a minimal stdlib websocket client below), pages opened from ``file://``.

Checks: the leaderboard table renders and sorts, the per-bucket curves render, the console has
no errors or warnings, markup in a model name shows as text and no injected script runs.
Screenshots go to ``test-artifacts/``. Install the browser with ``bash scripts/setup_chromium.sh``.
"""

from __future__ import annotations

import base64
import json
import os
import re
import select
import shutil
import socket
import struct
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
PUBLISHED = ROOT / "leaderboards" / "reference-board"  # a current published board


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    msg = "chromium not found; install it with: bash scripts/setup_chromium.sh"
    if os.environ.get("CI"):
        pytest.fail(msg)
    pytest.skip(msg)


class DevTools:
    """A DevTools-protocol session over a minimal RFC 6455 websocket client (text frames)."""

    def __init__(self, ws_url: str, timeout: float = 60.0) -> None:
        m = re.fullmatch(r"ws://([^:/]+):(\d+)(/.*)", ws_url)
        assert m, ws_url
        self.timeout = timeout
        self.sock = socket.create_connection((m.group(1), int(m.group(2))), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {m.group(3)} HTTP/1.1\r\nHost: {m.group(1)}:{m.group(2)}\r\n"
                           "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
                           ).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            assert chunk, "websocket handshake: connection closed"
            head += chunk
        assert head.startswith(b"HTTP/1.1 101"), head[:80]
        self.buf = head.split(b"\r\n\r\n", 1)[1]
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def _read(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 16)
            assert chunk, "websocket closed"
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _recv_message(self) -> dict[str, Any]:
        data = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(n)
            if b0 & 0x0F == 0x8:
                raise AssertionError("websocket closed by the browser")
            if b0 & 0x0F in (0x9, 0xA):  # ping/pong: ignore
                continue
            data += payload
            if b0 & 0x80:  # FIN
                return json.loads(data.decode())  # type: ignore[no-any-return]

    def _send_frame(self, text: str) -> None:
        payload = text.encode()
        mask = os.urandom(4)
        n = len(payload)
        head = bytes([0x81])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 1 << 16:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        my_id = self.next_id
        self._send_frame(json.dumps({"id": my_id, "method": method, "params": params}))
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            msg = self._recv_message()
            if msg.get("id") == my_id:
                assert "error" not in msg, (method, msg["error"])
                return msg.get("result", {})  # type: ignore[no-any-return]
            if "method" in msg:
                self.events.append(msg)
        raise AssertionError(f"{method}: no answer in {self.timeout} s")

    def wait_event(self, method: str, timeout: float = 60.0) -> dict[str, Any]:
        for i, e in enumerate(self.events):
            if e["method"] == method:
                return self.events.pop(i)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = self._recv_message()
            if msg.get("method") == method:
                return msg
            if "method" in msg:
                self.events.append(msg)
        raise AssertionError(f"no {method} event in {timeout} s")

    def drain(self, seconds: float = 0.5) -> None:
        """Collect the events that arrive within *seconds* (console messages come late)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if not self.buf and not select.select([self.sock], [], [], 0.05)[0]:
                continue
            msg = self._recv_message()
            if "method" in msg:
                self.events.append(msg)

    def evaluate(self, expr: str) -> Any:
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True)
        assert "exceptionDetails" not in r, r
        return r["result"].get("value")

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired")
        self.drain()

    def screenshot(self, path: Path) -> bytes:
        data = base64.b64decode(self.call("Page.captureScreenshot", format="png",
                                          captureBeyondViewport=True)["data"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return data

    def problems(self) -> list[str]:
        """Console errors and warnings, uncaught exceptions, dialogs (alert) seen so far."""
        out = []
        for e in self.events:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append(f"exception: {p['exceptionDetails'].get('text')}")
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning",
                                                                       "assert"):
                out.append(f"console.{p['type']}: {p.get('args')}")
            elif m == "Log.entryAdded" and p["entry"]["level"] in ("error", "warning"):
                out.append(f"log {p['entry']['level']}: {p['entry'].get('text')} "
                           f"({p['entry'].get('url', '')})")
            elif m == "Page.javascriptDialogOpening":
                out.append(f"dialog: {p.get('message')}")
        return out


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevTools]:
    exe = _chromium()
    profile = tmp_path_factory.mktemp("chromium-profile")
    proc = subprocess.Popen(
        [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-extensions", "--disable-background-networking", "--disable-sync",
         "--remote-debugging-port=0", "--remote-allow-origins=*", f"--user-data-dir={profile}",
         "--window-size=1280,1000", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        port = None
        deadline = time.monotonic() + 90
        assert proc.stderr is not None
        while port is None and time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line and proc.poll() is not None:
                pytest.fail(f"chromium exited with {proc.returncode} before DevTools started")
            m = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            if m:
                port = int(m.group(1))
        assert port is not None, "chromium did not start DevTools in 90 s"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as r:
            targets = json.load(r)
        page = next(t for t in targets if t.get("type") == "page")
        dt = DevTools(page["webSocketDebuggerUrl"])
        for domain in ("Page", "Runtime", "Log"):
            dt.call(f"{domain}.enable")
        yield dt
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


EVIL = "<img src=x onerror=alert(1)>"
EVIL2 = "<img src=y onerror=\"window.__pwned=1\"><script>window.__pwned=2</script>"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    from harness.leaderboard.build import build
    from tests.unit.test_leaderboard_fixtures import TaskSpecLite, make_results, write_run

    tmp = tmp_path_factory.mktemp("site")
    add = [("1", "ID", 10, 9), ("2", "ID", 10, 8), ("4", "OOD", 10, 4), ("8", "OOD", 10, 1)]
    add2 = [("1", "ID", 10, 10), ("2", "ID", 10, 9), ("4", "OOD", 10, 7), ("8", "OOD", 10, 5)]
    scan = [("short", "ID", 10, 7), ("long", "OOD", 10, 2)]
    runs = [
        write_run(tmp / "a", make_results(EVIL, [
            TaskSpecLite("lengthgen/addition", add, gap=(0.6, 0.4, 0.8), horizon_factor=1.0,
                         description=EVIL2),
            TaskSpecLite("compgen/scan_length", scan, gap=(0.5, 0.2, 0.8),
                         analyses=[("compositionality_gap", 0.3)])])),
        write_run(tmp / "b", make_results("model-b", [
            TaskSpecLite("lengthgen/addition", add2, gap=(0.35, 0.15, 0.55), description=EVIL2)]
                                          )),
        write_run(tmp / "c", make_results(EVIL2, [
            TaskSpecLite("compgen/scan_length", scan, gap=(0.5, 0.2, 0.8))])),
    ]
    from harness.leaderboard.paired import compare_runs
    from tests.unit.test_leaderboard_fixtures import record

    recs = [record("lengthgen/addition", f"i{i}", float(i % 2), bucket=b, index=j, role=r)
            for j, (b, r) in enumerate([("1", "ID"), ("4", "OOD")]) for i in range(2)]
    one = TaskSpecLite("compgen/one", [("only", "ID", 10, 6)])
    runs.append(write_run(tmp / "d", make_results("sampled", [
        TaskSpecLite("lengthgen/addition", [("1", "ID", 2, 1), ("4", "OOD", 2, 1)],
                     description=EVIL2), one]),
        {"lengthgen/addition": recs}))
    runs.append(write_run(tmp / "e", make_results("sampled-twin", [
        TaskSpecLite("lengthgen/addition", [("1", "ID", 2, 1), ("4", "OOD", 2, 1)],
                     description=EVIL2)]),
        {"lengthgen/addition": recs}))
    cmp = tmp / "cmp.json"
    cmp.write_text(compare_runs(runs[-2], runs[-1],
                                tasks=["lengthgen/addition"]).model_dump_json())
    out = tmp / "lb"
    build(runs, out, title="Browser test", compare=[cmp])
    return out


def test_index_renders_sorts_and_escapes(browser: DevTools, site: Path) -> None:
    browser.events.clear()
    browser.open((site / "index.html").as_uri())
    assert browser.evaluate("document.querySelectorAll('#leaderboard tbody tr').length") == 5
    assert browser.evaluate("document.body.dataset.sortableReady") == "3"
    names = "Array.from(document.querySelectorAll('#leaderboard tbody tr td:nth-child(2)'))" \
            ".map(td => td.textContent.trim())"
    assert set(browser.evaluate(names)) == {EVIL, EVIL2, "model-b", "sampled", "sampled-twin"}
    browser.evaluate("document.querySelectorAll('#leaderboard thead th button')[1].click()")
    assert browser.evaluate(names) == sorted([EVIL, EVIL2, "model-b", "sampled", "sampled-twin"],
                                             key=str.lower)
    # the engine column: backend and weight type of each entry's runs
    engines = "Array.from(document.querySelectorAll('#leaderboard tbody tr td:nth-child(3)'))" \
              ".map(td => td.textContent.trim())"
    assert browser.evaluate(engines) == ["hf float32"] * 5
    # headers are buttons (keyboard-reachable); the first press sorts scores best first
    assert browser.evaluate("document.querySelectorAll('#leaderboard thead th button').length"
                            ) >= 8
    browser.evaluate("document.querySelectorAll('#leaderboard thead th button')[3].focus()")
    assert browser.evaluate("document.activeElement.className") == "sort"
    browser.evaluate("document.activeElement.click()")  # what Enter does on a focused button
    overall = browser.evaluate(
        "Array.from(document.querySelectorAll('#leaderboard tbody tr td:nth-child(4)'))"
        ".map(td => parseFloat(td.dataset.value))")
    assert overall == sorted(overall, reverse=True)
    assert browser.evaluate("document.querySelectorAll('#leaderboard thead th')[3]"
                            ".getAttribute('aria-sort')") == "descending"
    assert browser.evaluate("location.hash") == "#sort=leaderboard%3A3%3Adesc"
    browser.evaluate("location.reload()")  # the sort state survives a reload (URL fragment)
    browser.wait_event("Page.loadEventFired")
    browser.drain()
    assert browser.evaluate("document.querySelectorAll('#leaderboard thead th')[3]"
                            ".getAttribute('aria-sort')") == "descending"
    # the gap column: a measurement, not a merit (no direction mark, never "better" either
    # way), so its first press sorts ascending as a neutral order
    gap = browser.evaluate("Array.from(document.querySelectorAll('#leaderboard thead th'))"
                           ".findIndex(th => th.dataset.better === 'none' && "
                           "th.textContent.trim() === 'gap')")
    assert gap > 0
    browser.evaluate(f"document.querySelectorAll('#leaderboard thead th button')[{gap}].click()")
    assert browser.evaluate(f"document.querySelectorAll('#leaderboard thead th')[{gap}]"
                            ".getAttribute('aria-sort')") == "ascending"
    # a scroll container and a sticky model column
    assert browser.evaluate("getComputedStyle(document.querySelector('#leaderboard td.model'))"
                            ".position") == "sticky"
    assert browser.evaluate("getComputedStyle(document.querySelector('#leaderboard')"
                            ".parentElement).overflowX") == "auto"
    # markup from results is text: no <img> or injected <script> in the DOM, nothing ran
    assert browser.evaluate("document.querySelectorAll('img').length") == 0
    assert browser.evaluate("document.querySelectorAll('script').length") == 1  # sort.js
    assert browser.evaluate("typeof window.__pwned") == "undefined"
    assert EVIL in browser.evaluate("document.body.innerText")
    assert browser.evaluate("document.querySelector('svg.gaps').getBBox().width") > 100
    browser.drain(1.0)
    assert browser.problems() == []
    shot = browser.screenshot(ARTIFACTS / "leaderboard-index.png")
    assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 10_000


def test_task_page_curves_render(browser: DevTools, site: Path) -> None:
    browser.events.clear()
    browser.open((site / "tasks" / "lengthgen__addition.html").as_uri())
    assert browser.evaluate("document.querySelectorAll('svg.curve path.series').length") == 4
    assert browser.evaluate("document.querySelectorAll('svg.curve polygon.band').length") == 4
    assert "Wilson 95% CI" in browser.evaluate(
        "document.querySelector('svg.curve text.band-legend').textContent")
    xs = browser.evaluate("Array.from(document.querySelectorAll('svg.curve path.series'))"
                          ".map(p => p.getBBox().x)")
    assert len(set(xs)) == 4  # lines are offset: the two identical ones stay visible
    for sel in ("#fewshot", "#metric", "#templates"):
        assert browser.evaluate(f"document.querySelector('{sel}').textContent.trim()") != ""
    assert "n=10" in browser.evaluate("document.querySelector('#buckets').innerText")
    assert browser.evaluate("document.querySelectorAll('svg.curve line.boundary').length") == 1
    width = browser.evaluate("document.querySelector('svg.curve path.series').getBBox().width")
    assert width > 200  # the line spans the buckets
    assert browser.evaluate("document.querySelectorAll('img').length") == 0
    assert browser.evaluate("typeof window.__pwned") == "undefined"
    assert EVIL2 in browser.evaluate("document.body.innerText")  # the description, as text
    browser.drain(1.0)
    assert browser.problems() == []
    shot = browser.screenshot(ARTIFACTS / "leaderboard-task.png")
    import io

    import matplotlib.image

    px = matplotlib.image.imread(io.BytesIO(shot), format="png")
    blue = ((abs(px[..., 0] - 0x1F / 255) < 0.05) & (abs(px[..., 1] - 0x77 / 255) < 0.05)
            & (abs(px[..., 2] - 0xB4 / 255) < 0.05))
    assert int(blue.sum()) > 300  # the first model's curve is drawn


def test_model_page_and_links(browser: DevTools, site: Path) -> None:
    browser.events.clear()
    browser.open((site / "models" / "img-src-x-onerror-alert-1.html").as_uri())
    assert browser.evaluate("document.querySelector('h1').textContent") == EVIL
    assert browser.evaluate("document.querySelectorAll('img').length") == 0
    browser.drain(0.5)
    assert browser.problems() == []


def test_one_bucket_task_draws_points_not_an_empty_curve(browser: DevTools, site: Path) -> None:
    browser.open((site / "tasks" / "compgen__one.html").as_uri())
    assert browser.evaluate("document.querySelectorAll('svg.curve circle').length") == 1
    assert browser.evaluate("document.querySelectorAll('svg.curve line.whisker').length") == 1


def test_sample_viewer_filters_from_file(browser: DevTools, site: Path) -> None:
    browser.events.clear()
    browser.open((site / "tasks" / "lengthgen__addition.html").as_uri())
    href = browser.evaluate("document.querySelector('a.viewer').href")
    assert href.startswith("file://")
    browser.open(href)
    rows = "Array.from(document.querySelectorAll('#samples tbody tr')).filter(r => !r.hidden)"
    assert browser.evaluate(f"{rows}.length") == 4
    browser.evaluate("var s = document.getElementById('role'); s.value = 'OOD';"
                     "s.dispatchEvent(new Event('change'))")
    assert browser.evaluate(f"{rows}.map(r => r.dataset.role)") == ["OOD", "OOD"]
    assert "role=OOD" in browser.evaluate("location.hash")
    assert "prompt" in browser.evaluate("document.querySelector('#samples thead').innerText")
    browser.drain(0.5)
    assert browser.problems() == []
    browser.screenshot(ARTIFACTS / "leaderboard-viewer.png")


def test_compare_page(browser: DevTools, site: Path) -> None:
    browser.events.clear()
    page = next((site / "compare").glob("*.html"))
    browser.open(page.as_uri())
    assert browser.evaluate("document.querySelectorAll('#compare-tasks tbody tr').length") == 1
    text = browser.evaluate("document.body.innerText")
    assert "95% " in text and "interval" in text and "zero-width" not in text
    browser.drain(0.5)
    assert browser.problems() == []


@pytest.mark.skipif(not (PUBLISHED / "index.html").is_file(),
                    reason="no published leaderboard at leaderboards/reference-board")
def test_published_leaderboard_has_no_console_errors(browser: DevTools) -> None:
    browser.events.clear()
    browser.open((PUBLISHED / "index.html").as_uri())
    assert browser.evaluate("document.querySelectorAll('#leaderboard tbody tr').length") >= 2
    pages = sorted((PUBLISHED / "tasks").glob("*.html"))
    assert pages
    for page in pages[:3]:
        browser.open(page.as_uri())
        assert browser.evaluate("document.querySelectorAll('svg.curve path.series').length") >= 2
    browser.drain(0.5)
    assert browser.problems() == []
    browser.open((PUBLISHED / "index.html").as_uri())
    browser.screenshot(ARTIFACTS / "leaderboard-published.png")
