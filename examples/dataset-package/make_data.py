"""Writes src/harness_unitconv/tasks/unitconv.jsonl: 240 chained length conversions, 40 for
each number of steps from 1 to 6 (seeded: the same file every time)."""

from __future__ import annotations

import json
import random
from pathlib import Path

METERS = {"mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254, "ft": 0.3048,
          "yd": 0.9144, "mi": 1609.344}


def record(i: int, steps: int, rng: random.Random) -> dict[str, object]:
    units = [rng.choice(list(METERS))]
    while len(units) <= steps:
        units.append(rng.choice([u for u in METERS if u != units[-1]]))
    value = rng.randint(1, 99)
    chain = ", then to ".join(units[1:])
    answer = value * METERS[units[0]] / METERS[units[-1]]
    return {"id": f"uc{i}", "question": f"Convert {value} {units[0]} to {chain}.",
            "answer": plain(answer), "steps": steps}


def plain(x: float) -> str:
    """``x`` to 6 significant digits, written without an exponent (as a model would)."""
    text = f"{float(f'{x:.6g}'):.12f}".rstrip("0").rstrip(".")
    return text or "0"


def main() -> None:
    rng = random.Random(0)
    rows = [record(i, 1 + i % 6, rng) for i in range(240)]
    out = Path(__file__).parent / "src" / "harness_unitconv" / "tasks" / "unitconv.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


if __name__ == "__main__":
    main()
