"""Mean ± sd and min–max across training seeds, per variant and bucket, from the committed
``leaderboards/reference/<task>/<variant>-s<seed>/results.json`` files (markdown table).

    .venv/bin/python examples/reference_models/summarize.py [--write-doc DOC] [ROOT]

``--write-doc docs/reference-models.md`` also rewrites that page's generated tables (the
families and the contrasts) from this output.

Every family is read by the board's rule (``harness.leaderboard.families``): a seed fits
when its all-ID accuracy is at least 90%, and only fitted seeds are read for generalization
(fewer than 3: "not testable"); a fitted seed succeeds when its all-OOD accuracy is at least
90% (Madsen & Johansen's measure), with a 95% Wilson interval; the extent is the largest
difficulty up to which at least 90% of the fitted seeds reach 90% in every bucket, from the
ID edge outward. Then the paper contrasts (``CONTRASTS``), each judged by
``contrast_verdict``: reproduced, direction only (extent N× the edge), not reproduced, or not
testable (ID not learned), with Newcombe's interval of the all-OOD success difference (MOVER
on exact limits, fitted seeds as the trials). Per family also the mean ± sd and min–max per
bucket over its seeds, and one line per seed: ID and OOD accuracy, the ID−OOD gap with its
interval from results.json, the extrapolation horizon, and each bucket's accuracy with its
95% Wilson CI.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from harness.errors import HarnessError
from harness.files import write_blocks
from harness.leaderboard.board_file import BucketInfo, SeedSuccess
from harness.leaderboard.families import (
    Member,
    contrast_verdict,
    seed_success,
    seed_words,
)

SUCCESS = 0.9  # a seed fits (all ID) and succeeds (all OOD) at this accuracy

#: (claim, paper, task and family predicted to extend, task and family predicted not to); each
#: is judged by ``harness.leaderboard.families.contrast_verdict`` over the seeds that fit ID
CONTRASTS = [
    ("an LSTM extends parity, a transformer does not", "Delétang et al. 2023",
     "reference_parity", "lstm", "reference_parity", "rope"),
    ("the same, the transformer trained shortest first", "Delétang et al. 2023",
     "reference_parity", "lstm", "reference_parity", "rope_curriculum"),
    ("the same, the transformer trained 10,000 steps", "Delétang et al. 2023",
     "reference_parity", "lstm", "reference_parity", "rope_long"),
    ("the same, the transformer writing the running parity", "Delétang et al. 2023; Anil et "
     "al. 2022", "reference_parity", "lstm", "reference_parity_scratchpad", "rope"),
    ("the same, the transformer on hinted bits writing bit and running parity per place",
     "Delétang et al. 2023; Zhou et al. 2023", "reference_parity", "lstm",
     "reference_parity_hints", "rope"),
    ("the same, both on hinted bits writing bit and running parity per place",
     "Delétang et al. 2023; Zhou et al. 2023", "reference_parity_hints", "lstm",
     "reference_parity_hints", "rope"),
    ("copying distinct letters extends past the edge, copying with repeats does not",
     "Zhou et al. 2023", "reference_copy_unique", "rope", "reference_copy_repeat", "rope"),
    ("index hints make reversed addition extend past the edge", "Zhou et al. 2023",
     "reference_addition_hints", "rope", "reference_addition_reversed", "rope"),
    ("the same, with hints at a random start (every hint letter trained)", "Zhou et al. 2023",
     "reference_addition_hints_window", "rope", "reference_addition_reversed", "rope"),
    ("the same, both trained shortest first", "Zhou et al. 2023",
     "reference_addition_hints_window", "rope_curriculum", "reference_addition_reversed",
     "rope_curriculum"),
]


def bucket_acc(results: Path) -> tuple[dict[str, float], dict[str, str], float]:
    """Per-bucket accuracy (plus "all ID" and "all OOD"), roles, and all-ID accuracy of one run."""
    task = json.loads(results.read_text(encoding="utf-8"))["tasks"][0]
    buckets = task["templates"][0]["buckets"]
    acc = {b["bucket"]: b["accuracy"] for b in buckets}
    roles = {b["bucket"]: b["role"] for b in buckets}
    for role in ("ID", "OOD"):
        of = [b for b in buckets if b["role"] == role]
        acc[f"all {role}"] = sum(b["correct"] for b in of) / max(1, sum(b["n"] for b in of))
        roles[f"all {role}"] = role
    return acc, roles, acc["all ID"]


def seed_line(results: Path) -> str:
    """One run's ID/OOD accuracy, gap [CI], horizon and per-bucket accuracy [CI], in percent."""
    tpl = json.loads(results.read_text(encoding="utf-8"))["tasks"][0]["templates"][0]
    acc, _, id_acc = bucket_acc(results)
    ood_acc = acc["all OOD"]
    gaps = tpl.get("gaps") or {}
    gap, hor = gaps.get("id_ood") or {}, gaps.get("horizon") or {}
    gap_s = (f"{100 * gap['value']:.1f} [{100 * gap['ci_low']:.1f}, {100 * gap['ci_high']:.1f}]"
             if gap.get("value") is not None else str(gaps.get("status") or "n/a"))
    hor_s = (f"{hor['value']:g} ({hor['factor']:.2f}x max ID; threshold "
             f"{100 * hor['threshold']:.1f}%)" if hor.get("value") is not None else "n/a")
    curve = " · ".join(f"{b['bucket']}: {100 * b['accuracy']:.0f} "
                       f"[{100 * b['ci_low']:.0f}, {100 * b['ci_high']:.0f}]"
                       for b in tpl["buckets"])
    learned = "" if id_acc >= 0.9 else " — not learned (ID < 90%)"
    return (f"- {results.parent.name}: ID {100 * id_acc:.1f}, OOD {100 * ood_acc:.1f}, "
            f"gap {gap_s}, horizon {hor_s}{learned}\n  {curve}")


def family_success(results: list[Path]) -> SeedSuccess | None:
    """``seed_success`` of one family's runs (the board's rule) from their results.json."""
    members, axis = [], None
    for res in results:
        tpl = json.loads(res.read_text(encoding="utf-8"))["tasks"][0]["templates"][0]
        acc, _, id_acc = bucket_acc(res)
        axis = axis or [BucketInfo(label=b["bucket"], index=b["index"], role=b["role"],
                                   lo=b["lo"], hi=b["hi"]) for b in tpl["buckets"]]
        members.append(Member(id_acc, acc["all OOD"], [acc.get(b.label) for b in axis]))
    return seed_success(members, axis or [])


def family_line(s: SeedSuccess) -> str:
    """The family's verdict by the board's rule, in words."""
    return f"verdict: {seed_words(s)}"


def contrast_lines(files: dict[tuple[str, str], list[Path]]) -> list[str]:
    """One markdown row per contrast whose two families have runs."""
    out = ["| claim (paper) | predicted to extend | predicted not to | all-OOD success, "
           "difference [95% CI] | verdict |", "|---|---|---|---|---|"]
    for claim, paper, ta, fa, tb, fb in CONTRASTS:
        if (ta, fa) not in files or (tb, fb) not in files:
            continue
        a, b = family_success(files[(ta, fa)]), family_success(files[(tb, fb)])
        if a is None or b is None:
            continue
        verdict, ci = contrast_verdict(a, b)
        diff = ("n/a (not every family fits)" if ci is None or a.rate is None or b.rate is None
                else f"{100 * (a.rate - b.rate):.0f} [{100 * ci[0]:.0f}, {100 * ci[1]:.0f}] pts")
        out.append(f"| {claim} ({paper}) | {side(ta, fa, a)} | {side(tb, fb, b)} | {diff} | "
                   f"**{verdict}** |")
    return out


def side(task: str, fam: str, s: SeedSuccess) -> str:
    """A contrast's family: fitted seeds, all-OOD and first-OOD-bucket successes, extent."""
    ext = "none" if s.extent is None else f"{s.extent:g}"
    return (f"{task_label(task, fam)}: {s.fitted} of {s.members} fit; all OOD {s.succeeded}, "
            f"edge {s.edge_succeeded} of {s.fitted}; extent {ext}")


def family_table(files: dict[tuple[str, str], list[Path]]) -> list[str]:
    """One markdown row per family: its recipe, seeds, how many fit, ID and OOD accuracy, the
    extent and verdict by the board's rule, the training seconds (wall, one thread, as the
    runs ran) and ``time_recipes.py``'s estimate on a free core."""
    out = ["| task · family | recipe | seeds | fit ID ≥ 90% | all ID % (min–max) | "
           "all OOD % (min–max) | extent (× edge) | verdict | train s (min–max) | "
           "s per model, free core |", "|---|---|---|---|---|---|---|---|---|---|"]
    timing_file = Path(__file__).resolve().parent / "timing.json"
    timing = (json.loads(timing_file.read_text(encoding="utf-8")) if timing_file.is_file()
              else {})
    for (task, fam), runs in sorted(files.items()):
        s = family_success(runs)
        accs = [bucket_acc(r)[0] for r in runs]
        trains = [json.loads((r.parent / "train.json").read_text(encoding="utf-8"))
                  for r in runs if (r.parent / "train.json").is_file()]
        secs = [float(t["seconds"]) for t in trains]
        ext = ("-" if s is None or s.extent is None else f"{s.extent:g}" + (
            f" ({s.extent_factor:.2f}×)" if s.extent_factor is not None else ""))
        out.append(f"| {task_label(task, fam)} | {recipe(trains[0]) if trains else '-'} | "
                   f"{len(runs)} | {'-' if s is None else s.fitted} | {spread(accs, 'all ID')} "
                   f"| {spread(accs, 'all OOD')} | {ext} | "
                   f"{'-' if s is None else s.verdict} | "
                   f"{f'{min(secs):.0f}–{max(secs):.0f}' if secs else '-'} | "
                   f"{free_core(timing.get(f'{task.removeprefix(PREFIX)}/{fam}'))} |")
    return out


def free_core(t: dict[str, float] | None) -> str:
    """``time_recipes.py``'s estimate for one model on a free core (``-``: not timed)."""
    return "-" if t is None else f"{t['model_seconds']:.0f} (load {t['load_average_before']:.1f})"


def recipe(train: dict[str, object]) -> str:
    """A training record's recipe in a few words."""
    if train.get("arch", "transformer") != "transformer":
        what = f"{train['arch']} {train['layers']}×{train['d_model']}"
    else:
        what = f"{train['variant']} {train['layers']}×{train['d_model']}"
    extra = ", shortest first" if train.get("curriculum") else ""
    return f"{what}, {train['steps']} steps, lr {train['lr']:g}{extra}"


def spread(accs: list[dict[str, float]], key: str) -> str:
    xs = [100 * a[key] for a in accs]
    return f"{statistics.fmean(xs):.1f} ({min(xs):.1f}–{max(xs):.1f})"


PREFIX = "reference_"  # of a reference task's folder under leaderboards/reference/


def task_label(task: str, fam: str) -> str:
    return f"{task.removeprefix(PREFIX)} {fam}"


def write_doc(doc: Path, files: dict[tuple[str, str], list[Path]]) -> None:
    """Replace the doc's generated blocks (``<!-- families:start -->`` ... ``:end -->``, and
    the same for ``contrasts``) with this output (``harness.files.write_blocks``)."""
    try:
        write_blocks(doc, {"families": "\n".join(family_table(files)),
                           "contrasts": "\n".join(contrast_lines(files))})
    except HarnessError as e:
        raise SystemExit(str(e)) from None


def main() -> None:
    args = sys.argv[1:]
    doc = None
    if args[:1] == ["--write-doc"]:
        if len(args) < 2:
            raise SystemExit("--write-doc: expected the markdown file to update")
        doc, args = Path(args[1]), args[2:]
    root = Path(args[0] if args else "leaderboards/reference")
    runs: dict[tuple[str, str], list[tuple[int, dict[str, float], float]]] = defaultdict(list)
    roles: dict[str, dict[str, str]] = defaultdict(dict)  # task -> bucket label -> role
    files: dict[tuple[str, str], list[Path]] = defaultdict(list)
    for res in sorted(root.glob("*/*-s*/results.json")):
        variant, seed = res.parent.name.rsplit("-s", 1)
        acc, r, id_acc = bucket_acc(res)
        roles[res.parent.parent.name].update(r)
        runs[(res.parent.parent.name, variant)].append((int(seed), acc, id_acc))
        files[(res.parent.parent.name, variant)].append(res)
    if not runs:
        raise SystemExit(f"no */*-s*/results.json under {root}")
    for (task, variant), seeds in sorted(runs.items()):
        labels = sorted((k for k in seeds[0][1] if not k.startswith("all ")), key=float)
        labels += ["all ID", "all OOD"]
        weak = [s for s, _, id_acc in seeds if id_acc < 0.9]
        print(f"\n### {task} · {variant} · seeds {sorted(s for s, _, _ in seeds)}"
              + (f" — seeds {weak} below 90% ID: not learned" if weak else ""))
        fam = family_success(files[(task, variant)])
        if fam is not None:
            print(f"\n{family_line(fam)}")
        print("\n| bucket | role | mean | sd | min | max |\n|---|---|---|---|---|---|")
        for lab in labels:
            xs = [100 * acc[lab] for _, acc, _ in seeds]
            sd = f"{statistics.stdev(xs):.1f}" if len(xs) > 1 else "n/a"  # one seed: no spread
            print(f"| {lab} | {roles[task][lab]} | {statistics.fmean(xs):.1f} | {sd} | "
                  f"{min(xs):.1f} | {max(xs):.1f} |")
        print()
        for res in files[(task, variant)]:
            print(seed_line(res))
    print("\n### Families (the board's rule: only seeds that fit ID are read)\n")
    print("\n".join(family_table(files)))
    if doc is not None:
        write_doc(doc, files)
    lines = contrast_lines(files)
    if len(lines) > 2:
        print("\n### Contrasts the papers predict (success rates over seeds)\n")
        print("\n".join(lines))


if __name__ == "__main__":
    main()
