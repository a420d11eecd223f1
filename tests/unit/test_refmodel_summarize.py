"""examples/reference_models/summarize.py: the paper contrasts judged by the board's rule over
the seeds that fit, and the doc's tables as its output."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _summarize() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "refmodels_summarize", ROOT / "examples" / "reference_models" / "summarize.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(root: Path, task: str, fam: str, seed: int, id_acc: float, ood: list[float]) -> Path:
    """A results.json with the fields summarize reads: ID buckets 2 and 8, OOD 9 and 12."""
    accs = [("2", "ID", id_acc), ("8", "ID", id_acc), ("9", "OOD", ood[0]),
            ("12", "OOD", ood[1])]
    buckets = [{"bucket": b, "index": i, "role": r, "lo": float(b), "hi": float(b), "n": 100,
                "correct": 100 * a, "accuracy": a, "ci_low": 0.0, "ci_high": 1.0}
               for i, (b, r, a) in enumerate(accs)]
    out = root / task / f"{fam}-s{seed}" / "results.json"
    out.parent.mkdir(parents=True)
    run = {"tasks": [task.replace("_", "/", 1)], "templates": ["compact"]}  # a declared format
    out.write_text(json.dumps({"run": run,
                               "tasks": [{"templates": [{"buckets": buckets, "gaps": {}}]}]}))
    return out


def test_contrast_verdicts_count_only_seeds_that_fit(tmp_path: Path) -> None:
    mod = _summarize()
    uniq = [_run(tmp_path, "reference_copy_unique", "rope", s, 1.0, [0.97, 0.1])
            for s in range(5)]
    rep = [_run(tmp_path, "reference_copy_repeat", "rope", s, 1.0, [0.02, 0.0])
           for s in range(5)]
    files = {("reference_copy_unique", "rope"): uniq, ("reference_copy_repeat", "rope"): rep}
    [_, _, row] = mod.contrast_lines(files)
    # all-OOD success 0 of 5 each; at the first OOD bucket 5 of 5 against 0 of 5
    assert row.endswith("| same (letters → letters) | 0 [-52, 52] pts | "
                        "**direction only (extent 1.12× the edge)** |")
    assert "copy_unique rope: 5 of 5 fit; all OOD 0, edge 5 of 5; extent 9" in row
    assert "copy_repeat rope: 5 of 5 fit; all OOD 0, edge 0 of 5; extent 8" in row
    # a family whose seeds do not fit the ID range makes no generalization contrast
    unfit = [_run(tmp_path / "u", "reference_copy_repeat", "rope", s, 0.5, [0.0, 0.0])
             for s in range(5)]
    [_, _, row_unfit] = mod.contrast_lines({**files, ("reference_copy_repeat", "rope"): unfit})
    assert row_unfit.endswith("| n/a (not every family fits) | **not testable (ID not learned)** |")
    # both OOD buckets: reproduced, with Newcombe's interval of 5/5 - 0/5
    full = [_run(tmp_path / "f", "reference_copy_unique", "rope", s, 1.0, [1.0, 0.95])
            for s in range(5)]
    [_, _, row_full] = mod.contrast_lines({**files, ("reference_copy_unique", "rope"): full})
    low = 1 - math.hypot(1 - 0.025 ** 0.2, 1 - 0.025 ** 0.2)
    assert row_full.endswith(f"| 100 [{100 * low:.0f}, 100] pts | **reproduced** |")


def test_the_docs_tables_are_summarizes_output() -> None:
    """docs/reference-models.md quotes the families, the verdicts, the runs left out and the
    negative control's per-seed tables as summarize.py prints them from the committed runs,
    never typed."""
    mod = _summarize()
    root = ROOT / "leaderboards" / "reference"
    doc = (ROOT / "docs" / "reference-models.md").read_text(encoding="utf-8")
    blocks = mod.doc_blocks(root, mod.runs_of(root))
    assert set(blocks) == {"families", "contrasts", "left-out", "control-seeds"}
    for name, body in blocks.items():
        start, end = f"<!-- {name}:start -->\n", f"\n<!-- {name}:end -->"
        assert start in doc and end in doc, name
        assert doc.split(start, 1)[1].split(end, 1)[0] == body, name
