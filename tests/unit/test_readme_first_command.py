"""The README's paragraph under its first command quotes figures: prompt counts (from the task
files) and times (from ``bench/first_result.py``'s recorded runs). Each is checked here against
its source, so a changed suite or a new measurement cannot leave the sentence behind."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
from first_result import readme_command  # noqa: E402

RESULTS = REPO / "bench" / "results"


def _paragraph() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block_end = text.index("```", text.index("```") + 3) + 3
    return " ".join(text[block_end:text.index("```", block_end)].split())


def _arg(cmd: list[str], flag: str) -> str:
    return cmd[cmd.index(flag) + 1]


def _prompts(tasks: str, limit: int | None) -> tuple[int, int]:
    """(prompts, tasks) of ``harness eval --tasks tasks --limit-per-bucket limit`` (no model)."""
    from harness.config import RunConfig
    from harness.run.plan import plan_task
    from harness.tasks.index import TaskIndex

    index = TaskIndex.build([])
    cfg = RunConfig(model="plan", tasks=[tasks], seed=0, output_dir=Path("plan"),
                    limit_per_bucket=limit)
    refs = index.resolve([tasks])
    return sum(plan_task(ref, index.spec(ref), cfg).prompts() for ref in refs), len(refs)


def test_the_prompt_counts_are_the_suites() -> None:
    cmd = readme_command()
    para = _paragraph()
    limit = int(_arg(cmd, "--limit-per-bucket"))
    n, tasks = _prompts(_arg(cmd, "--tasks"), limit)
    assert f"{limit} items per bucket, {n:,} prompts" in para
    assert f"the other {_words(tasks - 1)} follow" in para
    full, _ = _prompts(_arg(cmd, "--tasks"), None)
    assert f"{full:,} prompts" in para


def test_the_times_are_the_recorded_ones() -> None:
    """First table: the fresh-clone runs of the README's command (median and range, whole
    seconds); the whole suite: the one timed run at the same size."""
    cmd = readme_command()
    para = _paragraph()
    rec = json.loads((RESULTS / "first_table_fresh_clone.json").read_text(encoding="utf-8"))
    assert rec["command"][1:] == cmd[1:], "the timed command is not the README's"
    times = [r["first_table_s"] for r in rec["runs"]]
    lo, mid, hi = min(times), statistics.median(times), max(times)
    assert f"after {mid:.0f} s" in para
    assert f"median of {len(times)} runs, {lo:.0f}-{hi:.0f} s" in para
    whole = json.loads((RESULTS / "first_result_limit20.json").read_text(encoding="utf-8"))
    last = len(whole["command"]) - 1 - whole["command"][::-1].index("--limit-per-bucket")
    assert whole["command"][last + 1] == _arg(cmd, "--limit-per-bucket")  # the last one counts
    minutes = whole["table_s"]["median"] / 60
    assert f"took {minutes:.0f} min at this size" in para
    # "roughly an hour" for every item: the timed whole suite scaled by prompts
    n, _ = _prompts(_arg(cmd, "--tasks"), int(_arg(cmd, "--limit-per-bucket")))
    full, _ = _prompts(_arg(cmd, "--tasks"), None)
    assert "roughly an hour" in para
    assert 40 <= minutes * full / n <= 90


def _words(k: int) -> str:
    names = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
             "ten", "eleven", "twelve"]
    return names[k] if k < len(names) else str(k)


def test_the_first_task_is_the_suites_first() -> None:
    """Tables print in the suite's order: the paragraph names its first task."""
    from harness.tasks.index import TaskIndex

    (first, *_) = TaskIndex.build([]).resolve([_arg(readme_command(), "--tasks")])
    assert f"the first one, {first.address} with its" in _paragraph()
