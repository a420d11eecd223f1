"""Why batches are balanced and compaction keeps >= 16 rows: matrix-product time vs row count.

Times ``linear(x[M, 576], W)`` for SmolLM2-135M's MLP (W: 1536 x 576) and output head
(W: 49152 x 576) shapes at M rows, one thread (the other benchmarks' setting), median of 7
repeats. On the machine of bench/RESULTS.md, 15 rows cost more than 16.

    .venv/bin/python bench/gemm_rows.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ENV, machine, print_table, write_result  # noqa: E402


def main() -> None:
    import torch

    torch.set_num_threads(int(ENV["OMP_NUM_THREADS"]))
    rows = [1, 2, 4, 8, 11, 12, 14, 15, 16, 17, 20, 22, 24, 28, 32, 48, 64]
    shapes = {"mlp 1536x576": torch.randn(1536, 576), "head 49152x576": torch.randn(49152, 576)}
    out: dict[str, dict[int, float]] = {k: {} for k in shapes}
    for m in rows:
        x = torch.randn(m, 576)
        for name, w in shapes.items():
            reps = 40 if w.shape[0] < 10000 else 4
            torch.nn.functional.linear(x, w)
            samples = []
            for _ in range(7):
                t0 = time.perf_counter()
                for _ in range(reps):
                    torch.nn.functional.linear(x, w)
                samples.append((time.perf_counter() - t0) / reps * 1000)
            out[name][m] = statistics.median(samples)
    print_table("linear(x[M, 576], W): ms per call (median of 7), 1 thread",
                ["rows M", *[f"{k} ms" for k in shapes], *[f"{k} us/row" for k in shapes]],
                [[m, *[f"{out[k][m]:.3f}" for k in shapes],
                  *[f"{1000 * out[k][m] / m:.0f}" for k in shapes]] for m in rows])
    path = write_result("gemm_rows", {"benchmark": "gemm_rows", "machine": machine(),
                                      "ms_per_call": {k: {str(m): v for m, v in d.items()}
                                                      for k, d in out.items()}})
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
