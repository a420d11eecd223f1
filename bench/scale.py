"""Benchmark 4: time and peak memory against the number of items, with a trivial model.

One generation task (the built-in ``copy`` generator, 4 buckets) is run through the public API
(``harness.run.evaluate.evaluate(cfg, model=...)``) with a fixture model that answers instantly, at
1k, 10k and 100k items, each size in a fresh process. Reported per size: wall time, items/s,
peak RSS, RSS after imports, and their difference; memory should not grow with the number of
items (items are generated on demand, records stream to disk, and the reports come from a few
numbers per sample), only with ``--chunk-size`` (8192 prompts in flight here). ``--diagnose N``
runs one size under tracemalloc and prints the allocation sites holding the most memory at the
first model call, before the reports are computed and at the end.

    .venv/bin/python bench/scale.py [--sizes 1000,10000,100000] [--runs 1] [--diagnose 10000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ENV, ROOT, VENV, WORK, machine, print_table, summary, write_result  # noqa: E402

W = WORK / "scale"
TASK = """\
name: copy_scale
description: Copy letters (scale benchmark).
source: {type: generator, name: copy, per_bucket: 25000}
fields: {target: target, difficulty: length}
difficulty_name: length
buckets: {values: [2, 5, 8, 12]}
roles: {id_max: 5}
templates:
  - {id: io, prompt: "Copy the letters.\\nInput: {{ text }}\\nOutput:"}
output: {type: generate, max_tokens: 16, stop: ["\\n"]}
scoring: {extract: {kind: first_line}, metric: exact_match}
"""


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(n: int, diagnose: bool) -> dict[str, Any]:
    """Runs in a fresh process: evaluate ``n`` items, report time and memory."""
    from harness.config import RunConfig
    from harness.lm import LM, ModelIdentity, OnDone
    from harness.requests import GenerateRequest, GenerateResponse
    from harness.run.evaluate import evaluate

    snaps: list[Any] = []

    class Instant(LM):
        """Answers every prompt with its last word; keeps nothing."""

        @property
        def identity(self) -> ModelIdentity:
            return ModelIdentity(backend="bench", name="instant")

        def generate(self, requests: Sequence[GenerateRequest],
                     on_done: OnDone[GenerateResponse] | None = None) -> list[GenerateResponse]:
            if diagnose:
                import tracemalloc

                snaps.append(tracemalloc.take_snapshot())
            out = []
            for i, r in enumerate(requests):
                out.append(GenerateResponse(text=" " + r.prompt.rsplit(" ", 1)[-1], n_tokens=4))
                if on_done:
                    on_done(i, out[-1])
            return out

        def loglikelihood(self, requests: Any, on_done: Any = None) -> Any:
            raise NotImplementedError

        def loglikelihood_rolling(self, requests: Any, on_done: Any = None) -> Any:
            raise NotImplementedError

    tasks = W / "tasks"
    (tasks / "scale").mkdir(parents=True, exist_ok=True)
    (tasks / "scale" / "copy_scale.yaml").write_text(TASK)
    if diagnose:
        import tracemalloc

        from harness.scoring.report import ScoreColumns

        real_reports = ScoreColumns.reports

        def reports(self: Any, *a: Any, **k: Any) -> Any:  # every record is in by now
            snaps.append(tracemalloc.take_snapshot())
            return real_reports(self, *a, **k)

        ScoreColumns.reports = reports  # type: ignore[method-assign]
        tracemalloc.start(8)
    base = _rss_mb()
    cfg_args: dict[str, Any] = dict(
        model="bench:instant", tasks=["scale/copy_scale"], seed=0, limit_per_bucket=n // 4,
        include_paths=[tasks], output_dir=W / f"out{n}")
    if "use_cache" in RunConfig.model_fields:
        cfg_args["use_cache"] = False
    cfg = RunConfig(**cfg_args)
    t0 = time.perf_counter()
    res = evaluate(cfg, model=Instant())
    wall = time.perf_counter() - t0
    out: dict[str, Any] = {"items": n, "wall_s": wall, "items_per_s": n / wall,
                           "rss_after_imports_mb": base, "peak_rss_mb": _rss_mb(),
                           "n_items_reported": res.tasks[0].n_items,
                           "timings": res.timings}
    out["growth_mb"] = out["peak_rss_mb"] - base
    if diagnose:
        import tracemalloc

        end = tracemalloc.take_snapshot()
        _, peak = tracemalloc.get_traced_memory()
        out["tracemalloc_peak_mb"] = peak / 2**20
        print(f"tracemalloc peak: {peak / 2**20:.1f} MiB")
        labels = ["at the first model call", "before the aggregates", "at the end"]
        for label, snap in zip(labels, [*snaps[:1], *snaps[-1:], end], strict=False):
            print(f"\ntop allocation sites {label} (n={n}):")
            total = sum(st.size for st in snap.statistics("filename")) / 2**20
            print(f"  total traced {total:.1f} MiB")
            for stat in snap.statistics("lineno")[:10]:
                print(f"  {stat.size / 2**20:8.1f} MiB  {stat.count:8d} blocks  {stat.traceback}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--diagnose", type=int, default=0)
    ap.add_argument("--child", type=int, default=0)
    args = ap.parse_args()
    if args.child:
        print("RESULT " + json.dumps(child(args.child, bool(args.diagnose))))
        return
    if args.diagnose:
        proc = subprocess.run([str(VENV / "python"), __file__, "--child", str(args.diagnose),
                               "--diagnose", "1"], env=ENV, cwd=ROOT, text=True,
                              capture_output=True, check=True)
        print("\n".join(ln for ln in proc.stdout.splitlines() if not ln.startswith("RESULT")))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    rows: dict[int, list[dict[str, Any]]] = {n: [] for n in sizes}
    for r in range(args.runs):
        for n in sizes if r % 2 == 0 else list(reversed(sizes)):
            proc = subprocess.run([str(VENV / "python"), __file__, "--child", str(n)], env=ENV,
                                  cwd=ROOT, text=True, capture_output=True)
            if proc.returncode != 0:
                raise SystemExit(proc.stderr[-3000:])
            line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
            rows[n].append(json.loads(line[len("RESULT "):]))
            print(f"  run {r} n={n}: {rows[n][-1]['wall_s']:.1f} s, peak "
                  f"{rows[n][-1]['peak_rss_mb']:.0f} MB", flush=True)
    table = {n: {"wall_s": summary([x["wall_s"] for x in v]),
                 "items_per_s": summary([x["items_per_s"] for x in v]),
                 "peak_rss_mb": summary([x["peak_rss_mb"] for x in v]),
                 "rss_after_imports_mb": summary([x["rss_after_imports_mb"] for x in v]),
                 "growth_mb": summary([x["growth_mb"] for x in v])} for n, v in rows.items()}
    print_table("scale: trivial model through harness.run.evaluate.evaluate (medians)",
                ["items", "wall s", "items/s", "peak RSS MB", "RSS after imports MB",
                 "growth MB", "growth KB/item"],
                [[n, t["wall_s"]["median"], f"{t['items_per_s']['median']:.0f}",
                  f"{t['peak_rss_mb']['median']:.0f}", f"{t['rss_after_imports_mb']['median']:.0f}",
                  f"{t['growth_mb']['median']:.0f}",
                  f"{1024 * t['growth_mb']['median'] / n:.2f}"] for n, t in table.items()])
    result = {"benchmark": "scale", "machine": machine(), "runs": args.runs,
              "table": {str(k): v for k, v in table.items()},
              "raw": {str(k): v for k, v in rows.items()}, "command": " ".join(sys.argv)}
    print(f"\nwrote {write_result('scale', result)}")


if __name__ == "__main__":
    main()
