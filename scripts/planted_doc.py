"""The generated parts of docs/planted.md: the example run and the sizing table.

    .venv/bin/python scripts/planted_doc.py            # write both blocks into docs/planted.md
    .venv/bin/python scripts/planted_doc.py --check    # exit 1 where the doc differs

Both come from planted runs made here (no model, no cache): the issue's example command, and
lengthgen/copy with a fall planted at 24 letters, at 10, 20 and 50 items per bucket over seeds
0-9. ``tests/unit/test_planted_doc.py`` checks that the doc holds what this script writes.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "planted.md"
EXAMPLE = ["--model", "planted:", "--model-args", "d50=20,sigma=0.3,top=0.95", "--tasks",
           "lengthgen/copy", "--horizon", "--seed", "0", "--no-cache"]
SIZING = {"d50": 24.0, "sigma": 0.3, "top": 0.9}  # the fall the sizing table plants
SIZES, SEEDS = (10, 20, 50), range(10)


def example() -> str:
    """The example command's output (its last line, naming the output folder, left out)."""
    from typer.testing import CliRunner

    from harness.cli.main import app

    with tempfile.TemporaryDirectory() as tmp:
        r = CliRunner(env={"COLUMNS": "100"}).invoke(
            app, ["eval", *EXAMPLE, "--output-dir", str(Path(tmp) / "run")])
    if r.exit_code != 0:
        raise SystemExit(r.output)
    lines = [ln.rstrip() for ln in r.stdout.splitlines() if not ln.startswith("wrote ")]
    return "```\n" + "\n".join(lines) + "\n```\n"


def sizing() -> str:
    """How often copy's report finds the planted fall, by items per bucket."""
    from harness.config import RunConfig
    from harness.models.backends import load_model
    from harness.run.evaluate import evaluate
    from harness.scoring.horizon_model import fitted_accuracy

    args = ",".join(f"{k}={v:g}" for k, v in SIZING.items())
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in SIZES:
            found = edge = 0
            widths = []
            for seed in SEEDS:
                cfg = RunConfig(model="planted:", tasks=["lengthgen/copy"], seed=seed,
                                limit_per_bucket=n, use_cache=False,
                                output_dir=Path(tmp) / f"{n}-{seed}")
                model = load_model("planted:", dict(p.split("=") for p in args.split(",")), 1)
                g = evaluate(cfg, model=model).tasks[0].templates[0].gaps
                assert g.id_ood is not None and g.edge is not None
                found += g.id_ood.ci_low > 0
                edge += g.edge.ci_low > 0
                widths.append(100 * (g.id_ood.ci_high - g.id_ood.ci_low))
            rows.append(f"| {n} | {found} | {statistics.median(widths):.0f} pts | {edge} |")
    at = {d: 100 * fitted_accuracy(d, SIZING["d50"], SIZING["sigma"], SIZING["top"], 0.0)
          for d in (8, 12)}
    return (f"`--model-args {args}`, {len(SEEDS)} seeds a size:\n\n"
            f"| items per bucket | ID−OOD gap found (of {len(SEEDS)} seeds) | median width of "
            "its 95% interval | edge gap 8 → 12 found |\n|---:|---:|---:|---:|\n"
            + "\n".join(rows) + "\n\n"
            f"The planted accuracy is {at[8]:.0f}% at 8 letters and {at[12]:.0f}% at 12: the "
            "edge gap needs a fall nearer the edge (plant a smaller `d50` to see) or a bucket "
            "nearer the fall.\n")


def blocks() -> dict[str, str]:
    return {"planted-example": example(), "planted-sizing": sizing()}


def main() -> None:
    from harness.files import write_blocks

    if sys.argv[1:] == ["--check"]:
        text = DOC.read_text(encoding="utf-8")
        stale = [k for k, v in blocks().items()
                 if f"<!-- {k}:start -->\n{v.removesuffix(chr(10))}\n<!-- {k}:end -->" not in text]
        if stale:
            raise SystemExit(f"docs/planted.md: stale block(s) {stale}: run "
                             "scripts/planted_doc.py")
        return
    write_blocks(DOC, blocks())


if __name__ == "__main__":
    main()
