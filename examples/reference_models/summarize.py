"""Mean ± sd and min–max across training seeds, per variant and bucket, from the committed
``leaderboards/reference/<task>/<variant>-s<seed>/results.json`` files (markdown table).

    .venv/bin/python examples/reference_models/summarize.py [--write-doc DOC] [ROOT]

``--write-doc docs/reference-models.md`` also rewrites that page's generated blocks from this
output (``doc_blocks``): the families, the contrasts, the runs left out, and the negative
control's per-seed tables.

Every family is read by the board's rule (``harness.leaderboard.families``): a seed fits
when its all-ID accuracy is at least 90% and so is its accuracy in the last ID bucket (the ID
edge), and only fitted seeds are read for generalization (fewer than 3: "not testable"); a
fitted seed succeeds when its all-OOD accuracy is at least 90% (Madsen & Johansen's measure),
with a 95% Wilson interval; the extent is the largest difficulty up to which at least 90% of
the fitted seeds reach 90% in every bucket, from the ID edge outward. Each family knows its task
format (``FORMATS``: the prompt and answer it was trained and tested on, keyed by task and
template as the run recorded them). Then the paper contrasts (``CONTRASTS``), each judged by
``contrast_verdict``: not comparable (the two formats differ and the claim is not about the
format), reproduced, direction only (extent N× the edge), not reproduced, or not testable (ID
or the ID edge not learned), with Newcombe's interval of the all-OOD success difference (MOVER
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
from typing import NamedTuple

from harness.errors import HarnessError
from harness.files import write_blocks
from harness.leaderboard.board_file import BucketInfo, SeedSuccess
from harness.leaderboard.families import (
    Member,
    contrast_verdict,
    seed_success,
    seed_words,
)

SUCCESS = 0.9  # a seed fits (all ID and the ID edge) and succeeds (all OOD) at this accuracy

#: the task format of each recipe: (task, template) as a run records them (results.json
#: ``run.tasks``, ``run.templates``) → what the model reads and writes. Equal labels mean the
#: same generator, prompt, answer and output type (tests/unit/test_reference_verdicts.py
#: checks it against the committed runs both ways).
FORMATS = {
    ("reference/parity", "bits"): "plain bits → parity bit",
    ("reference/parity_scratchpad", "compact"): "plain bits → running-parity scratchpad",
    ("reference/parity_hints", "compact"): "hinted bits → hinted scratchpad",
    ("reference/copy_unique", "compact"): "letters → letters",
    ("reference/copy_repeat", "compact"): "letters → letters",
    ("reference/copy_unique_wide", "compact"): "letters → letters",
    ("reference/addition_reversed", "compact"): "digits → reversed sum",
    ("reference/addition_hints", "compact"): "hinted digits → hinted reversed sum",
    ("reference/addition_hints_window", "compact"): "hinted digits → hinted reversed sum",
    ("lengthgen/addition_reversed", "plain"): "spaced digits → reversed sum",
    ("lengthgen/copy", "repeat"): "instruction and spaced letters → letters",
}


class Contrast(NamedTuple):
    """A paper's claim: family ``fam_a`` of task ``task_a`` is predicted to extend, ``fam_b`` of
    ``task_b`` not to; ``format_contrasted``: the claim is about the task format itself (index
    hints against none), so the two formats are meant to differ."""

    claim: str
    paper: str
    task_a: str
    fam_a: str
    task_b: str
    fam_b: str
    format_contrasted: bool = False


#: the paper contrasts; each is judged by ``harness.leaderboard.families.contrast_verdict`` over
#: the seeds that fit ID, and only on one format unless the format is what the claim contrasts
CONTRASTS = [
    Contrast("an LSTM extends parity, a transformer does not", "Delétang et al. 2023",
             "reference_parity", "lstm", "reference_parity", "rope"),
    Contrast("the same, the transformer trained shortest first", "Delétang et al. 2023",
             "reference_parity", "lstm", "reference_parity", "rope_curriculum"),
    Contrast("the same, the transformer trained 10,000 steps", "Delétang et al. 2023",
             "reference_parity", "lstm", "reference_parity", "rope_long"),
    Contrast("the same, the transformer writing the running parity", "Delétang et al. 2023; "
             "Anil et al. 2022", "reference_parity", "lstm", "reference_parity_scratchpad",
             "rope"),
    Contrast("the same, the transformer on hinted bits writing bit and running parity per "
             "place", "Delétang et al. 2023; Zhou et al. 2023", "reference_parity", "lstm",
             "reference_parity_hints", "rope"),
    Contrast("the same, both on hinted bits writing bit and running parity per place",
             "Delétang et al. 2023; Zhou et al. 2023", "reference_parity_hints", "lstm",
             "reference_parity_hints", "rope"),
    Contrast("copying distinct letters extends past the edge, copying with repeats does not",
             "Zhou et al. 2023", "reference_copy_unique", "rope", "reference_copy_repeat",
             "rope"),
    Contrast("index hints make reversed addition extend past the edge", "Zhou et al. 2023",
             "reference_addition_hints", "rope", "reference_addition_reversed", "rope",
             format_contrasted=True),
    Contrast("the same, with hints at a random start (every hint letter trained)",
             "Zhou et al. 2023", "reference_addition_hints_window", "rope",
             "reference_addition_reversed", "rope", format_contrasted=True),
    Contrast("the same, both trained shortest first", "Zhou et al. 2023",
             "reference_addition_hints_window", "rope_curriculum",
             "reference_addition_reversed", "rope_curriculum", format_contrasted=True),
]


def run_format(results: Path) -> str | None:
    """The task format of one run (``FORMATS``; None: a recipe not declared there)."""
    run = json.loads(results.read_text(encoding="utf-8")).get("run") or {}
    tasks, templates = run.get("tasks") or [None], run.get("templates") or [None]
    return FORMATS.get((tasks[0], templates[0]))


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
    id_at = [b for b in tpl["buckets"] if b["role"] == "ID"]
    learned = (" — not learned (ID < 90%)" if id_acc < SUCCESS else
               f" — ID edge not learned ({id_at[-1]['bucket']} < 90%)"
               if id_at and id_at[-1]["accuracy"] < SUCCESS else "")
    return (f"- {results.parent.name}: ID {100 * id_acc:.1f}, OOD {100 * ood_acc:.1f}, "
            f"gap {gap_s}, horizon {hor_s}{learned}\n  {curve}")


def family_success(results: list[Path]) -> SeedSuccess | None:
    """``seed_success`` of one family's runs (the board's rule) from their results.json, with
    the family's format (None when its runs differ in format or declare none)."""
    members, axis = [], None
    for res in results:
        tpl = json.loads(res.read_text(encoding="utf-8"))["tasks"][0]["templates"][0]
        acc, _, id_acc = bucket_acc(res)
        axis = axis or [BucketInfo(label=b["bucket"], index=b["index"], role=b["role"],
                                   lo=b["lo"], hi=b["hi"]) for b in tpl["buckets"]]
        members.append(Member(id_acc, acc["all OOD"], [acc.get(b.label) for b in axis]))
    formats = {run_format(res) for res in results}
    return seed_success(members, axis or [], formats.pop() if len(formats) == 1 else None)


def family_line(s: SeedSuccess) -> str:
    """The family's verdict by the board's rule, in words."""
    return f"verdict: {seed_words(s)}"


def contrast_lines(files: dict[tuple[str, str], list[Path]]) -> list[str]:
    """One markdown row per contrast whose two families have runs."""
    out = ["| claim (paper) | predicted to extend | predicted not to | format | all-OOD "
           "success, difference [95% CI] | verdict |", "|---|---|---|---|---|---|"]
    for c in CONTRASTS:
        if (c.task_a, c.fam_a) not in files or (c.task_b, c.fam_b) not in files:
            continue
        a = family_success(files[(c.task_a, c.fam_a)])
        b = family_success(files[(c.task_b, c.fam_b)])
        if a is None or b is None:
            continue
        verdict, ci = contrast_verdict(a, b, c.format_contrasted)
        diff = ("n/a (not every family fits)" if ci is None or a.rate is None or b.rate is None
                else f"{100 * (a.rate - b.rate):.0f} [{100 * ci[0]:.0f}, {100 * ci[1]:.0f}] pts")
        if verdict.startswith("not comparable"):
            diff = "n/a (not comparable)"
        out.append(f"| {c.claim} ({c.paper}) | {side(c.task_a, c.fam_a, a)} | "
                   f"{side(c.task_b, c.fam_b, b)} | {format_words(a, b, c.format_contrasted)} "
                   f"| {diff} | **{verdict}** |")
    return out


def format_words(a: SeedSuccess, b: SeedSuccess, contrasted: bool) -> str:
    """The contrast's formats in words: the same one, a change the claim is about, or a change
    that makes the two families not comparable."""
    if a.format is None or b.format is None:
        return "not recorded"
    if a.format == b.format:
        return f"same ({a.format})"
    change = f"{a.format} vs {b.format}"
    return f"the contrast: {change}" if contrasted else f"differs: {change}"


def side(task: str, fam: str, s: SeedSuccess) -> str:
    """A contrast's family: fitted seeds, all-OOD and first-OOD-bucket successes, extent."""
    ext = "none" if s.extent is None else f"{s.extent:g}"
    only = (s.id_fitted or 0) - (s.fitted or 0)
    edge = f" ({only} more fit all ID but not the edge)" if only else ""
    return (f"{task_label(task, fam)}: {s.fitted} of {s.members} fit{edge}; all OOD "
            f"{s.succeeded}, edge {s.edge_succeeded} of {s.fitted}; extent {ext}")


def fitted_words(s: SeedSuccess) -> str:
    """Seeds that fit (all ID and the ID edge), with those that fit all ID only."""
    only = (s.id_fitted or 0) - (s.fitted or 0)
    return f"{s.fitted}" + (f" ({only} more fit all ID, not the edge)" if only else "")


def family_table(files: dict[tuple[str, str], list[Path]]) -> list[str]:
    """One markdown row per family: its recipe, task format, seeds, how many fit, ID and OOD
    accuracy (mean and the seeds' range), the extent and verdict by the board's rule, the
    training seconds (wall, one thread, as the runs ran) and ``time_recipes.py``'s estimate on
    a free core."""
    out = ["| task · family | recipe | format | seeds | fit ID ≥ 90% (all ID and edge) | "
           "all ID %: mean (seeds' range) | all OOD %: mean (seeds' range) | extent (× edge) | "
           "verdict | train s (seeds' range) | s per model, free core |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
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
                   f"{(s.format if s else None) or '-'} | {len(runs)} | "
                   f"{'-' if s is None else fitted_words(s)} | {spread(accs, 'all ID')} "
                   f"| {spread(accs, 'all OOD')} | {ext} | "
                   f"{'-' if s is None else s.verdict} | {seconds(secs)} | "
                   f"{free_core(timing.get(f'{task.removeprefix(PREFIX)}/{fam}'))} |")
    return out


def seconds(secs: list[float]) -> str:
    """Training seconds over a family's seeds: one value for one seed, else the range."""
    if not secs:
        return "-"
    lo, hi = f"{min(secs):.0f}", f"{max(secs):.0f}"
    return lo if len(secs) == 1 else (f"{lo} (every seed)" if lo == hi else f"{lo}–{hi}")


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
    """Mean over the seeds and their range, in percent: one seed has no range ("one seed"),
    and seeds that agree are said to ("every seed"), so no range reads as an interval of zero
    width."""
    xs = [100 * a[key] for a in accs]
    mean, lo, hi = f"{statistics.fmean(xs):.1f}", f"{min(xs):.1f}", f"{max(xs):.1f}"
    if len(xs) == 1:
        return f"{mean} (one seed)"
    return f"{mean} (every seed)" if lo == hi else f"{mean} ({lo}–{hi})"


PREFIX = "reference_"  # of a reference task's folder under leaderboards/reference/


def task_label(task: str, fam: str) -> str:
    return f"{task.removeprefix(PREFIX)} {fam}"


def runs_of(root: Path) -> dict[tuple[str, str], list[Path]]:
    """(task folder, family) → its runs' results.json under ``root``, in seed order."""
    files: dict[tuple[str, str], list[Path]] = defaultdict(list)
    for res in sorted(root.glob("*/*-s*/results.json"),
                      key=lambda r: (r.parent.parent.name, *seed_key(r.parent.name))):
        files[(res.parent.parent.name, seed_key(res.parent.name)[0])].append(res)
    return dict(files)


def seed_key(run: str) -> tuple[str, int]:
    """``rope-s10`` → ("rope", 10)."""
    fam, seed = run.rsplit("-s", 1)
    return fam, int(seed)


def left_out(root: Path) -> list[str]:
    """Runs trained but without a committed evaluation: a run folder with ``train.json`` and no
    ``results.json`` (an evaluation withdrawn, e.g. one made from a tree with uncommitted
    changes). ``rebuild.sh`` evaluates them again; no table and no board counts them."""
    gone = sorted((t.parent for t in root.glob("*/*-s*/train.json")
                   if not (t.parent / "results.json").is_file()),
                  key=lambda d: (d.parent.name, *seed_key(d.name)))
    if not gone:
        return ["None: every trained run under `leaderboards/reference/` has its evaluation."]
    return [f"- `{d.parent.name}/{d.name}` (`rebuild.sh {d.parent.name.removeprefix(PREFIX)}/"
            f"{seed_key(d.name)[0]}` with `SEEDS={seed_key(d.name)[1]}`)" for d in gone]


CONTROL = "lengthgen_"  # the negative control's task folders
ORDER = ("rope", "learned", "nope")  # the control's position encodings, in the doc's order


def control_tables(files: dict[tuple[str, str], list[Path]]) -> list[str]:
    """The negative control's per-seed tables, one per task: each bucket's accuracy, all ID
    and all OOD, the ID−OOD gap with its interval as results.json has it (Newcombe's, never of
    zero width), the horizon and the training seconds."""
    out: list[str] = []
    for task in sorted({t for t, _ in files if t.startswith(CONTROL)}):
        fams = sorted((f for t, f in files if t == task),
                      key=lambda f: (ORDER.index(f) if f in ORDER else len(ORDER), f))
        first = json.loads(files[(task, fams[0])][0].read_text(encoding="utf-8"))
        rec = first["tasks"][0]
        buckets = rec["templates"][0]["buckets"]
        roles = {r: ", ".join(b["bucket"] for b in buckets if b["role"] == r)
                 for r in ("ID", "OOD")}
        out += [""] if out else []  # a blank line between two tables
        out += [f"`{rec['task']}` ({rec.get('difficulty_name') or 'difficulty'}; ID buckets "
                f"{roles['ID']}; OOD {roles['OOD']}):", "",
                "| variant | seed | " + " | ".join(b["bucket"] for b in buckets)
                + " | all ID | all OOD | ID−OOD gap [95% CI] | horizon | train s |",
                "|---|---|" + "---|" * len(buckets) + "---|---|---|---|---|"]
        for fam in fams:
            for res in files[(task, fam)]:
                out.append(control_row(res, fam))
    return out


def control_row(res: Path, fam: str) -> str:
    """One seed of the negative control as a table row."""
    tpl = json.loads(res.read_text(encoding="utf-8"))["tasks"][0]["templates"][0]
    acc, _, id_acc = bucket_acc(res)
    gaps = tpl.get("gaps") or {}
    gap, hor = gaps.get("id_ood") or {}, gaps.get("horizon") or {}
    gap_s = (f"{100 * gap['value']:.1f} [{100 * gap['ci_low']:.1f}, {100 * gap['ci_high']:.1f}]"
             if gap.get("value") is not None else str(gaps.get("status") or "n/a"))
    hor_s = f"{hor['value']:g}" if hor.get("value") is not None else "n/a"
    train = res.parent / "train.json"
    secs = (f"{json.loads(train.read_text(encoding='utf-8'))['seconds']:.0f}"
            if train.is_file() else "-")
    cells = " | ".join(f"{100 * b['accuracy']:.0f}" for b in tpl["buckets"])
    learned = "" if id_acc >= SUCCESS else " (not learned)"
    return (f"| `{fam}` | {seed_key(res.parent.name)[1]} | {cells} | {100 * id_acc:.1f}{learned} "
            f"| {100 * acc['all OOD']:.1f} | {gap_s} | {hor_s} | {secs} |")


def doc_blocks(root: Path, files: dict[tuple[str, str], list[Path]]) -> dict[str, str]:
    """The doc's generated blocks, by name."""
    return {"families": "\n".join(family_table(files)),
            "contrasts": "\n".join(contrast_lines(files)),
            "left-out": "\n".join(left_out(root)),
            "control-seeds": "\n".join(control_tables(files))}


def write_doc(doc: Path, root: Path, files: dict[tuple[str, str], list[Path]]) -> None:
    """Replace the doc's generated blocks (``<!-- NAME:start -->`` ... ``<!-- NAME:end -->``
    for each name of ``doc_blocks``) with this output (``harness.files.write_blocks``)."""
    try:
        write_blocks(doc, doc_blocks(root, files))
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
    files = runs_of(root)
    for (task, variant), results in files.items():
        for res in results:
            acc, r, id_acc = bucket_acc(res)
            roles[task].update(r)
            runs[(task, variant)].append((seed_key(res.parent.name)[1], acc, id_acc))
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
    print("\n### Families (the board's rule: only seeds that fit ID and its edge are read)\n")
    print("\n".join(family_table(files)))
    if doc is not None:
        write_doc(doc, root, files)
    lines = contrast_lines(files)
    if len(lines) > 2:
        print("\n### Contrasts the papers predict (success rates over seeds)\n")
        print("\n".join(lines))


if __name__ == "__main__":
    main()
