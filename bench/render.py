"""Markdown from the benchmark JSON results, and ``docs/benchmarks.md`` from the recorded ones.

    .venv/bin/python bench/render.py [--out docs/benchmarks.md] [RESULT.json ...]

Without arguments it renders every summary in ``bench/results/`` (files ending ``_cases.json``
are per-schema details and are skipped). :func:`markdown_report` is also what
``bench/compare.py`` prints at the end of a run, and :func:`grammar_report` what
``bench/grammars.py`` prints.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import PERCENTILES, RESULTS_DIR  # noqa: E402

BASELINE = "tokensieve"
CLOCK_TEXT = {
    "cpu": "CPU time (process CPU for compiles, thread CPU for masks; clock-read cost subtracted)",
    "wall": "wall time (perf_counter)",
}
LABELS = [label for label, _ in PERCENTILES]


# --------------------------------------------------------------------------- formatting
def fmt_time(seconds: float | None, unit: str) -> str:
    """``seconds`` in ``"ms"`` or ``"us"``, three significant digits; ``-`` when missing."""
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "-"
    value = seconds * (1e3 if unit == "ms" else 1e6)
    if value >= 100:
        return f"{value:,.0f}"  # thousands separators: tails span five orders of magnitude
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def fmt_ratio(peer: float | None, base: float | None) -> str:
    """``peer / base`` as ``"3.1x"`` (above 1: the baseline is faster)."""
    if not peer or not base or math.isnan(peer) or math.isnan(base):
        return "-"
    return f"{peer / base:.2f}x" if peer / base < 10 else f"{peer / base:.0f}x"


def fmt_bytes(n: float | None) -> str:
    if n is None:
        return "-"
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def table(header: list[str], rows: list[list[str]], text_columns: int = 1) -> str:
    """A markdown table; the first ``text_columns`` columns align left, numbers right."""
    align = ["---"] * text_columns + ["--:"] * (len(header) - text_columns)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def percentile_table(
    engines: dict[str, dict[str, Any]], metric: str, unit: str, key: str | None = None
) -> str:
    """One row per engine: n, the percentiles in ``unit``, and peer/tokensieve ratios at p50/p99/max."""
    def stats(summary: dict[str, Any]) -> dict[str, float]:
        return summary[key][metric] if key else summary[metric]

    base = stats(engines[BASELINE]) if BASELINE in engines else None
    header = ["engine", "n", *[f"{label} ({unit})" for label in LABELS]]
    if base is not None:
        header += ["p50 ratio", "p99 ratio", "max ratio"]
    rows = []
    for name, summary in engines.items():
        s = stats(summary)
        row = [name, f"{int(s['n'])}", *[fmt_time(s[label], unit) for label in LABELS]]
        if base is not None:
            row += [fmt_ratio(s[k], base[k]) if name != BASELINE else "1x" for k in ("p50", "p99", "max")]
        rows.append(row)
    return table(header, rows)


# --------------------------------------------------------------------------- MaskBench report
def outcome_table(engines: dict[str, dict[str, Any]]) -> str:
    header = ["engine", "compiled", "compile errors", "timeouts", "crashes", "out of memory",
              "valid accepted", "valid rejected", "invalid rejected", "invalid accepted", "instance errors"]
    rows = []
    for name, s in engines.items():
        sc, v, iv = s["schemas"], s["instances"]["valid"], s["instances"]["invalid"]
        run_v = sum(v.values()) - v["not_run"]
        run_iv = sum(iv.values()) - iv["not_run"]
        bad = ("refused", "engine_error", "timeout", "crash", "oom")
        rows.append([
            name,
            f"{sc['compiled']} / {sc['total']}",
            str(sc["compile_error"]), str(sc["timeout"]), str(sc["crash"]), str(sc["oom"]),
            f"{v['accepted']} / {run_v}",
            str(v["rejected_token"] + v["rejected_eos"]),
            f"{iv['rejected_token'] + iv['rejected_eos']} / {run_iv}",
            str(iv["accepted"]),
            str(sum(v[b] + iv[b] for b in bad)),
        ])
    return table(header, rows)


def memory_table(engines: dict[str, dict[str, Any]]) -> str:
    rows = []
    for name, s in engines.items():
        mem = s["memory"]
        rows.append([name, fmt_bytes(mem["reported_median_bytes"]), fmt_bytes(mem["rss_delta_median_bytes"])])
    return table(["engine", "median reported by the engine", "median RSS growth at compile"], rows)


def targets_table(engines: dict[str, dict[str, Any]]) -> str | None:
    """tokensieve against the bars of issue 6 (``../shared/DESIGN.md``), peers from the same run."""
    ts, xg, ll = engines.get(BASELINE), engines.get("xgrammar"), engines.get("llguidance")
    if ts is None:
        return None
    rows: list[list[str]] = []

    def bar(name: str, ours: float | None, limit: float | None, unit: str, text: str) -> None:
        ours_text = f"{fmt_time(ours, unit)} {unit}"
        if ours is None or limit is None or math.isnan(ours) or math.isnan(limit):
            rows.append([name, text, ours_text, "-", "not measured"])
        else:
            verdict = "met" if ours < limit else "missed"
            rows.append([name, text, ours_text, f"{fmt_time(limit, unit)} {unit}", verdict])

    bar("mask p50", ts["mask_s"]["p50"], xg["mask_s"]["p50"] if xg else None, "us", "below xgrammar's p50")
    bar("mask p99", ts["mask_s"]["p99"], ll["mask_s"]["p99"] / 2 if ll else None, "us",
        "below half of llguidance's p99")
    bar("mask max", ts["mask_s"]["max"], 10e-3, "us", "under 10 ms")
    bar("compile p50", ts["compile_s"]["p50"], ll["compile_s"]["p50"] * (1 + 1e-9) if ll else None, "ms",
        "at or below llguidance's p50")
    bar("compile p99", ts["compile_s"]["p99"], 20e-3 * (1 + 1e-9), "ms", "at most 20 ms")
    kinds = ("timeout", "crash", "oom")
    failures = sum(ts["schemas"][k] for k in kinds)  # while compiling, then while running instances
    failures += sum(ts["instances"][label][k] for label in ("valid", "invalid") for k in kinds)
    rows.append(["timeouts, crashes, OOM", "zero (compiles and instances)", str(failures), "0",
                 "met" if failures == 0 else "missed"])
    ours_mem = ts["memory"]["reported_median_bytes"]
    xg_mem = xg["memory"]["reported_median_bytes"] if xg else None
    met = ours_mem is not None and xg_mem is not None and ours_mem <= xg_mem
    rows.append(["memory per schema (median)", "no larger than xgrammar's", fmt_bytes(ours_mem),
                 fmt_bytes(xg_mem), "met" if met else ("missed" if xg_mem is not None else "not measured")])
    return table(["figure", "bar", "tokensieve", "limit", "verdict"], rows, text_columns=2)


def markdown_report(report: dict[str, Any]) -> str:
    """The MaskBench comparison as markdown: setup, times, ratios, outcomes, memory."""
    engines = report["engines"]
    m = report["machine"]
    lines = [
        f"### MaskBench dev: {report['schemas']} schemas, {report['instances']} instances ({report['date']})",
        "",
        f"Command: `{report['command']}`  ",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, Python {m['python']}  ",
        f"Tokenizer: `{report['tokenizer']}`; timeout {report['timeout_s']:g} s per compile and per "
        f"instance, memory cap {report['max_rss_mib']} MiB per engine process; "
        f"clock: {CLOCK_TEXT[report.get('clock', 'wall')]}",
        "",
        table(["engine", "version", "settings"],
              [[n, s["version"], s["settings"]] for n, s in engines.items()], text_columns=3),
        "",
        "**Compile (time to first mask)**, over the schemas each engine compiled; ratio = peer / tokensieve "
        "(above 1: tokensieve faster)",
        "",
        percentile_table(engines, "compile_s", "ms"),
        "",
        "**Mask time** (one mask per token and one before EOS, every instance of every compiled schema)",
        "",
        percentile_table(engines, "mask_s", "us"),
        "",
    ]
    any_engine = next(iter(engines.values()), None)
    if any_engine and len(engines) > 1:
        n = any_engine["common_schemas"]["n"]
        lines += [
            f"**Like for like: the {n} schemas every engine compiled**",
            "",
            percentile_table(engines, "compile_s", "ms", key="common_schemas"),
            "",
            percentile_table(engines, "mask_s", "us", key="common_schemas"),
            "",
        ]
    targets = targets_table(engines)
    if targets:
        title = "**The bars of issue 6** (each engine's own percentiles, peers from this run)"
        lines += [title, "", targets, ""]
    lines += [
        "**Outcomes** (valid rejected = a token or EOS refused; instance errors = refused after the mask "
        "allowed it, engine error, timeout or crash while running an instance)",
        "",
        outcome_table(engines),
        "",
        "**Memory per compiled schema**",
        "",
        memory_table(engines),
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------- grammar report
def grammar_report(report: dict[str, Any]) -> str:
    """The CFG benchmark (``bench/grammars.py``) as markdown: one table per grammar."""
    m = report["machine"]
    lines = [
        f"### Grammars: any-JSON and CFGs ({report['date']})",
        "",
        f"Command: `{report['command']}`  ",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, Python {m['python']}; "
        f"clock: {CLOCK_TEXT[report.get('clock', 'wall')]}",
        "",
        table(["engine", "version"], [[n, v] for n, v in report["versions"].items()], text_columns=2),
    ]
    for gname, g in report["grammars"].items():
        lines += ["", f"**{gname}** ({g['strings']} strings, {g['tokens']} tokens)", ""]
        base = g["engines"].get(BASELINE)
        header = ["engine", "status", "compile (ms)", "mask p50 (us)", "mask p99 (us)", "mask max (us)",
                  "accepted", "compile ratio", "p50 ratio", "p99 ratio", "max ratio"]
        rows = []
        for name, e in g["engines"].items():
            ok = e["status"] == "compiled"
            ms = e.get("mask_s", {})
            row = [name, e["status"] if ok else f"{e['status']}: {e.get('error', '')[:60]}",
                   fmt_time(e.get("compile_s"), "ms"),
                   *[fmt_time(ms.get(k), "us") for k in ("p50", "p99", "max")],
                   f"{e.get('accepted', 0)} / {g['strings']}"]
            if base is not None and ok and base["status"] == "compiled" and name != BASELINE:
                row += [fmt_ratio(e["compile_s"], base["compile_s"]),
                        *[fmt_ratio(ms[k], base["mask_s"][k]) for k in ("p50", "p99", "max")]]
            else:
                row += ["1x" if name == BASELINE else "-"] * 4
            rows.append(row)
        lines.append(table(header, rows))
    return "\n".join(lines)


# --------------------------------------------------------------------------- docs page
INTRO = """# Benchmarks

Generated by `bench/render.py` from the JSON files in `bench/results/`; do not edit by hand.
How the numbers are taken (fair settings, what is timed, outcomes): `bench/README.md`.
Ratios are peer / tokensieve: above 1 means tokensieve is faster.
"""


def render(paths: list[Path]) -> str:
    parts = [INTRO]
    for path in paths:
        report = json.loads(path.read_text(encoding="utf-8"))
        kind = report.get("benchmark")
        if kind == "grammars":
            body = grammar_report(report)
        elif kind == "end_to_end":
            from bench.end_to_end import markdown_report as end_to_end_report  # imports torch: only here

            body = end_to_end_report(report)
        else:
            body = markdown_report(report)
        parts += [f"<!-- from {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} -->", body, ""]
    return "\n".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="*", type=Path,
                    help="summary JSON files (default: all in bench/results/)")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = ap.parse_args()
    summaries = [p for p in RESULTS_DIR.glob("*.json") if not p.stem.endswith("_cases")]
    # MaskBench first (the headline), then the grammar benchmark, then end to end; by name within each.
    def order(p: Path) -> tuple[int, str]:
        return (1 if p.stem.startswith("grammars") else 2 if p.stem.startswith("end_to_end") else 0, p.name)

    paths = args.results or sorted(summaries, key=order)
    if not paths:
        raise SystemExit(f"no results in {RESULTS_DIR}; run bench/compare.py or bench/grammars.py first")
    args.out.write_text(render(paths), encoding="utf-8")
    print(f"wrote {args.out} from {len(paths)} result file(s)")


if __name__ == "__main__":
    main()
