"""PNG plots (matplotlib, Agg backend) of the per-bucket curves and the gaps, for READMEs and
papers: ``plots/<suite>__<task>.png`` and ``plots/gaps.png``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.leaderboard.board_file import Leaderboard, TaskBoard
from harness.leaderboard.charts import baseline_points, color


def task_file_stem(task: str) -> str:
    """``lengthgen/addition`` → ``lengthgen__addition`` (page and plot names)."""
    return task.replace("/", "__")


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: Path, root: Path | None) -> None:
    # no timestamp/software metadata: the same leaderboard gives the same bytes; the file is
    # created afresh under root (default: its folder), never through a link
    from harness.leaderboard.paths import SafeWriter

    root = path.parent if root is None else root
    with SafeWriter(root).open(path.relative_to(root).as_posix()) as f:
        fig.savefig(f, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})


def task_curve_png(board: Leaderboard, task: TaskBoard, path: Path,
                   root: Path | None = None) -> Path:
    """Accuracy per bucket, one line per entry with its Wilson 95% band, ID/OOD boundary dashed."""
    plt = _pyplot()
    order = {e.id: n for n, e in enumerate(board.entries)}
    label = {e.id: e.label for e in board.entries}
    labels = [b.label for b in task.buckets]
    pos = {lab: i for i, lab in enumerate(labels)}
    fig, ax = plt.subplots(figsize=(7.0, 3.6))
    try:
        m = len(task.rows)
        for n_row, row in enumerate(task.rows):
            pts = [(pos[c.label], c) for c in row.buckets
                   if c.label in pos and c.accuracy is not None]
            if not pts:
                continue
            col = color(order.get(row.entry, 0))
            dx = (n_row - (m - 1) / 2) * min(0.06, 0.4 / max(m, 1))  # equal lines stay visible
            xs = [i + dx for i, _ in pts]
            acc = [100 * (c.accuracy or 0.0) for _, c in pts]
            err = [[a - 100 * (c.ci_low or 0.0) for a, (_, c) in zip(acc, pts, strict=True)],
                   [100 * (c.ci_high or 0.0) - a for a, (_, c) in zip(acc, pts, strict=True)]]
            ax.errorbar(xs, acc, yerr=err, marker="o", color=col, capsize=3,
                        linestyle="-" if len(pts) > 1 else "none",
                        label=f"{label.get(row.entry, row.entry)} (Wilson 95% CI)")
            if len(pts) > 1:
                ax.fill_between(xs, [100 * (c.ci_low or 0.0) for _, c in pts],
                                [100 * (c.ci_high or 0.0) for _, c in pts], color=col,
                                alpha=0.12, linewidth=0)
        base = baseline_points(task)
        if base:  # the items' own floor: the best constant answer on each bucket
            ax.hlines([100 * v for _, v in base], [i - 0.4 for i, _ in base],
                      [i + 0.4 for i, _ in base], colors="#888", linestyles="dashed",
                      linewidth=1.5, label="baseline (best constant answer)")
        for i in range(1, len(task.buckets)):
            if task.buckets[i].role != task.buckets[i - 1].role:
                ax.axvline(i - 0.5, color="#444", linestyle="--", linewidth=1)
                ax.text(i - 0.5, 101, f" {task.buckets[i - 1].role} | {task.buckets[i].role}",
                        ha="center", va="bottom", fontsize=8)
        ax.set_xticks(range(len(labels)), labels, fontsize=8)
        ax.set_xlim(-0.5, max(len(labels) - 0.5, 0.5))
        ax.set_ylim(0, 100)
        ax.set_xlabel(task.difficulty_name)
        ax.set_ylabel("accuracy %")
        ax.set_title(task.task, fontsize=10, pad=14)
        ax.grid(axis="y", color="#ddd")
        if task.rows:
            ax.legend(fontsize=8, loc="best")
        _save(fig, path, root)
    finally:
        plt.close(fig)
    return path


def gaps_png(board: Leaderboard, path: Path, root: Path | None = None) -> Path:
    """Mean ID − OOD gap per entry (points) with its 95% CI."""
    plt = _pyplot()
    entries = board.entries
    fig, ax = plt.subplots(figsize=(7.0, 0.5 + 0.45 * max(len(entries), 1)))
    try:
        for n, e in enumerate(entries):
            if e.gap is None:
                continue
            err = None
            if e.gap_ci_low is not None and e.gap_ci_high is not None:
                err = [[100 * (e.gap - e.gap_ci_low)], [100 * (e.gap_ci_high - e.gap)]]
            ax.barh(n, 100 * e.gap, color=color(n), alpha=0.8, xerr=err, capsize=4)
        ax.set_yticks(range(len(entries)), [e.label for e in entries], fontsize=8)
        ax.invert_yaxis()
        ax.axvline(0, color="#444", linewidth=1)
        ax.set_xlabel("ID − OOD gap (points, mean over tasks, 95% CI)")
        ax.set_title(board.title, fontsize=10)
        _save(fig, path, root)
    finally:
        plt.close(fig)
    return path


def write_plots(board: Leaderboard, out: Path) -> list[Path]:
    """Every task's curve and the gap chart under ``out/plots/``."""
    folder = out / "plots"
    if folder.is_dir() and not folder.is_symlink():  # never delete through a link
        for old in folder.glob("*.png"):  # plots of tasks no longer on the board
            old.unlink()
    files = [task_curve_png(board, t, folder / f"{task_file_stem(t.task)}.png", out)
             for t in board.tasks]
    files.append(gaps_png(board, folder / "gaps.png", out))
    return files
