"""Index hints that reuse their symbols (examples/reference_models/tasks/reference): every hint
letter of an OOD eval prompt of the windowed tasks occurs in the exported training rows, while
the place-from-units lettering of addition_hints gives longer operands letters never trained."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from harness.data.export import ExportReport, _eval_prompts, iter_rows
from harness.tasks.index import TaskIndex

TASKS = Path(__file__).resolve().parents[2] / "examples" / "reference_models" / "tasks"


def letters(task: str, n_train: int) -> tuple[set[str], set[str]]:
    """Hint letters in the first ``n_train`` exported ID rows, and in the OOD eval prompts."""
    index = TaskIndex.build([TASKS])
    [ref] = index.resolve([task])
    spec = index.spec(ref)
    rows = iter_rows(spec, ref, "ID", 0, None, ExportReport())
    trained = {c for r in itertools.islice(rows, n_train) for c in str(r["prompt"])
               if c.isalpha()}
    ood = {c for p in _eval_prompts(spec, ref, 0, "OOD") for c in re.sub(r"\W", "", p)
           if c.isalpha()}
    return trained, ood


@pytest.mark.parametrize("task", ["reference/addition_hints_window", "reference/parity_hints"])
def test_every_ood_hint_letter_was_trained(task: str) -> None:
    trained, ood = letters(task, 3000)
    assert len(ood) >= 20, ood  # the OOD prompts do use hints, many of them
    assert ood <= trained, f"OOD hint letters never trained: {sorted(ood - trained)}"


def test_place_from_units_hints_give_longer_operands_new_letters() -> None:
    trained, ood = letters("reference/addition_hints", 3000)
    assert trained == set("abcde") and set("fghij") <= ood - trained  # 6-10 digit operands
