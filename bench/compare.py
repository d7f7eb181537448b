"""Side by side on MaskBench: tokensieve, llguidance, xgrammar and outlines-core in one run.

    .venv/bin/python bench/compare.py [--sample N] [--engines a,b,...]
        [--timeout S] [--max-rss-mib M] [--order schema|engine] [--chunk N] [--out PATH]

For each schema of the MaskBench dev split (or an even ``--sample`` of it), on each engine,
the engines taking turns over blocks of ``--chunk`` schemas (one child process per engine,
see :mod:`bench.worker` and :func:`run_interleaved`; ``--order engine``: each engine over
every schema, one engine after another):

1. compile the schema and compute the first mask: *time to first mask*, with a timeout;
   compile errors, timeouts, crashes and memory over the cap are counted, never fatal;
2. for each instance (``json.dumps(data, ensure_ascii=False)``, Llama-3 tokens), compute a
   mask before each token (timed), check the token is allowed, accept it; at the end check
   that EOS is allowed. A valid instance should pass; an invalid one should be stopped by
   some token or by EOS.

Prints markdown tables (compile and mask percentiles, ratio of each peer to tokensieve,
outcome counts, memory per compiled schema) and writes the summary JSON plus a per-schema
JSON next to it (``bench/results/``); ``bench/render.py`` turns them into
``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shlex
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
if importlib.util.find_spec("tokensieve") is None:  # the dev tree, not installed
    sys.path.append(str(ROOT / "src"))

from bench.common import (  # noqa: E402
    LLAMA3_TOKENIZER,
    MASKBENCH_DEV,
    RESULTS_DIR,
    Case,
    load_maskbench,
    machine_description,
    summarize,
)
from bench.peers import ENGINES  # noqa: E402
from bench.render import markdown_report  # noqa: E402
from bench.worker import CLOCK_NAMES, CaseResult, EngineUnavailable, EngineWorker  # noqa: E402

BASELINE = "tokensieve"
STATUSES = ("compiled", "compile_error", "timeout", "crash", "oom")
INSTANCE_OUTCOMES = (
    "accepted", "rejected_token", "rejected_eos", "refused",
    "engine_error", "timeout", "crash", "oom", "not_run",
)


# --------------------------------------------------------------------------- running
def engine_meta(worker: EngineWorker, seconds: float) -> dict[str, Any]:
    """What the report says of one engine's run: version, settings, restarts, clock cost, and
    ``seconds`` of wall time spent on its cases."""
    return {"version": worker.version, "settings": worker.settings, "restarts": worker.restarts,
            "clock_overhead_ns": worker.clock_overhead, "wall_s": round(seconds, 1)}


def run_engine(
    engine: str, cases: Sequence[Case], timeout_s: float, max_rss: int, clock: str, progress_every: int = 100
) -> tuple[dict[str, Any], list[CaseResult]]:
    """All cases under one engine; returns the engine's metadata and one result per case."""
    worker = EngineWorker(engine, timeout_s, max_rss, clock)
    results: list[CaseResult] = []
    started = time.monotonic()
    try:
        for n, case in enumerate(cases, 1):
            results.append(worker.run(case))
            if n % progress_every == 0 or n == len(cases):
                elapsed = time.monotonic() - started
                print(f"  {engine}: {n}/{len(cases)} schemas, {elapsed:.0f} s", file=sys.stderr)
    finally:
        worker.close()
    return engine_meta(worker, time.monotonic() - started), results


def run_interleaved(
    engines: Sequence[str], cases: Sequence[Case], timeout_s: float, max_rss: int, clock: str,
    chunk: int = 100, progress_every: int = 100,
) -> tuple[dict[str, dict[str, Any]], dict[str, list[CaseResult]]]:
    """The engines take turns over blocks of ``chunk`` schemas (``--order schema``), one child
    process per engine alive for the whole run.

    On a shared machine the host's speed drifts by tens of percent over minutes (one build
    measured 1.26 and 1.45 ms compile p50 in two runs an hour apart): one engine after
    another hands one engine the slow minutes and the next the fast ones, while in turns a
    drift falls on every engine alike. Turns are blocks, not single schemas, because an
    engine's compile finds some of its own state still in the CPU caches from its previous
    compile (the worker's garbage collection before each compile walks Python objects, and
    evicts little of an engine whose state is native): schema by schema, every compile would
    follow another engine's and lose that: on this host ``--chunk 1`` put llguidance's compile
    p50 at 1.59 ms against 1.08 in blocks of 100 (+47%), while tokensieve's stayed within its
    run-to-run spread (1.28 against 1.26-1.30 ms). With blocks of 100, 99% of compiles follow
    the same engine's, as they do one engine after another."""
    workers = {engine: EngineWorker(engine, timeout_s, max_rss, clock) for engine in engines}
    results: dict[str, list[CaseResult]] = {engine: [] for engine in engines}
    busy = dict.fromkeys(engines, 0.0)
    started = time.monotonic()
    try:
        for first in range(0, len(cases), chunk):
            block = cases[first : first + chunk]
            for engine in list(workers):
                t0 = time.monotonic()
                try:
                    results[engine].extend(workers[engine].run(case) for case in block)
                except EngineUnavailable as exc:
                    print(f"  {engine} skipped: {exc}", file=sys.stderr)
                    workers.pop(engine).close()
                    del results[engine]
                    continue
                busy[engine] += time.monotonic() - t0
            done = first + len(block)
            if done % progress_every < chunk or done == len(cases):
                print(f"  {done}/{len(cases)} schemas, {time.monotonic() - started:.0f} s", file=sys.stderr)
    finally:
        for worker in workers.values():
            worker.close()
    return {engine: engine_meta(w, busy[engine]) for engine, w in workers.items()}, results


# --------------------------------------------------------------------------- aggregation
def instance_counts(results: Sequence[CaseResult], cases: Sequence[Case]) -> dict[str, dict[str, int]]:
    """Instance verdicts by label; instances of schemas that did not compile are ``not_run``."""
    counts = {"valid": Counter[str](), "invalid": Counter[str]()}
    for res, case in zip(results, cases, strict=True):
        if res.status != "compiled":
            for inst in case.instances:
                counts["valid" if inst.valid else "invalid"]["not_run"] += 1
            continue
        for inst_res in res.instances:
            counts["valid" if inst_res.valid else "invalid"][inst_res.outcome] += 1
    return {label: {o: c[o] for o in INSTANCE_OUTCOMES} for label, c in counts.items()}


def _median(values: list[int]) -> float | None:
    return float(statistics.median(values)) if values else None


def summarize_engine(
    results: Sequence[CaseResult], cases: Sequence[Case], common: set[str]
) -> dict[str, Any]:
    """Outcome counts, time percentiles and memory for one engine.

    ``common`` names the schemas every engine compiled: percentiles over them compare like
    with like (each engine's own percentiles cover the schemas *it* compiled).
    """
    compiled = [r for r in results if r.status == "compiled"]
    masks = [t for r in compiled for t in r.mask_times]
    errors = Counter(r.error.split(":")[0] + ": " + r.error.split(":", 1)[-1].strip()[:80]
                     for r in results if r.status == "compile_error")
    in_common = [r for r in compiled if r.name in common]
    return {
        "schemas": {s: sum(r.status == s for r in results) for s in STATUSES} | {"total": len(results)},
        "instances": instance_counts(results, cases),
        "compile_s": summarize([r.compile_s for r in compiled if r.compile_s is not None]),
        "mask_s": summarize(masks),
        "accept_s": summarize([t for r in compiled for t in r.accept_times]),
        "memory": {
            "reported_median_bytes": _median(
                [r.memory_reported for r in compiled if r.memory_reported is not None]),
            "rss_delta_median_bytes": _median([r.rss_delta for r in compiled if r.rss_delta is not None]),
        },
        "common_schemas": {
            "n": len(in_common),
            "compile_s": summarize([r.compile_s for r in in_common if r.compile_s is not None]),
            "mask_s": summarize([t for r in in_common for t in r.mask_times]),
        },
        "top_compile_errors": errors.most_common(10),
    }


def case_record(res: CaseResult) -> dict[str, Any]:
    """The per-schema line of the detail file."""
    outcomes = Counter(f"{'valid' if i.valid else 'invalid'}_{i.outcome}" for i in res.instances)
    details = [f"{'valid' if i.valid else 'invalid'} {i.outcome}: {i.detail}" for i in res.instances
               if i.detail and (i.valid or i.outcome not in ("rejected_token", "rejected_eos"))]
    masks = sorted(res.mask_times)
    return {
        "name": res.name,
        "status": res.status,
        "error": res.error,
        "compile_s": res.compile_s,
        "memory_reported": res.memory_reported,
        "rss_delta": res.rss_delta,
        "masks": len(masks),
        "mask_p50_s": masks[len(masks) // 2] if masks else None,
        "mask_max_s": masks[-1] if masks else None,
        "outcomes": dict(outcomes),
        "unexpected": details[:5],
    }


def ratios(engines: dict[str, dict[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """Each peer's percentile divided by tokensieve's (above 1: tokensieve is faster)."""
    base = engines.get(BASELINE)
    out: dict[str, dict[str, dict[str, float]]] = {}
    if base is None:
        return out
    for name, summary in engines.items():
        if name == BASELINE:
            continue
        out[name] = {}
        for metric in ("compile_s", "mask_s"):
            out[name][metric] = {
                k: summary[metric][k] / base[metric][k]
                for k in summary[metric]
                if k not in ("n", "mean") and base[metric].get(k)
            }
    return out


# --------------------------------------------------------------------------- main
def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", type=int, default=0,
                    help="an even, deterministic sample of N schemas (0: all)")
    ap.add_argument("--engines", default=",".join(ENGINES), help=f"comma-separated, from {','.join(ENGINES)}")
    ap.add_argument("--timeout", type=float, default=30.0,
                    help="seconds for one compile (time to first mask) and for one instance")
    ap.add_argument("--clock", choices=CLOCK_NAMES, default="cpu",
                    help="cpu: CPU time, robust on a shared machine (timeouts in CPU seconds); "
                         "wall: perf_counter")
    ap.add_argument("--max-rss-mib", type=int, default=6144, help="kill an engine's child above this memory")
    ap.add_argument("--order", choices=("schema", "engine"), default="schema",
                    help="schema: the engines take turns over blocks of --chunk schemas (a drifting "
                         "host speed falls on all engines alike); engine: each engine over every schema, "
                         "one after another")
    ap.add_argument("--chunk", type=int, default=100,
                    help="schemas per engine turn with --order schema (1: schema by schema, which "
                         "leaves every compile's CPU caches to another engine)")
    ap.add_argument("--out", type=Path,
                    help="summary JSON (default: bench/results/maskbench_dev_<sampleN|full>.json)")
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = [e for e in engines if e not in ENGINES]
    if unknown:
        raise SystemExit(f"unknown engine(s) {unknown}; known: {', '.join(ENGINES)}")
    out = args.out or RESULTS_DIR / f"maskbench_dev_{f'sample{args.sample}' if args.sample else 'full'}.json"

    t0 = time.monotonic()
    cases = load_maskbench(args.sample)
    n_inst = sum(len(c.instances) for c in cases)
    elapsed = time.monotonic() - t0
    print(f"{len(cases)} schemas, {n_inst} instances, tokenized in {elapsed:.1f} s", file=sys.stderr)

    metas: dict[str, dict[str, Any]] = {}
    all_results: dict[str, list[CaseResult]] = {}
    report: dict[str, Any] = {}
    if args.order == "schema":
        chunk = max(1, args.chunk)
        print(f"running {', '.join(engines)} in turns of {chunk} schemas", file=sys.stderr)
        metas, all_results = run_interleaved(
            engines, cases, args.timeout, args.max_rss_mib * 2**20, args.clock, chunk)
        report = build_report(args, argv, cases, metas, all_results)
        write_results(out, report, all_results)
    else:
        for engine in engines:
            print(f"running {engine}", file=sys.stderr)
            try:
                metas[engine], all_results[engine] = run_engine(
                    engine, cases, args.timeout, args.max_rss_mib * 2**20, args.clock)
            except EngineUnavailable as exc:
                print(f"  skipped: {exc}", file=sys.stderr)
                continue
            # Written after every engine, so a long run that is stopped keeps what it measured.
            report = build_report(args, argv, cases, metas, all_results)
            write_results(out, report, all_results)
    print(markdown_report(report))
    print(f"\nwrote {out} and its _cases.json", file=sys.stderr)


def _tree_prefix() -> str:
    """How the run found tokensieve, as the command line says it: ``PYTHONPATH=src `` for the
    development tree (plain Python), nothing for the installed package (compiled by mypyc)."""
    import tokensieve

    return "PYTHONPATH=src " if Path(tokensieve.__file__).resolve().is_relative_to(ROOT / "src") else ""


def build_report(
    args: argparse.Namespace,
    argv: Sequence[str] | None,
    cases: Sequence[Case],
    metas: dict[str, dict[str, Any]],
    all_results: dict[str, list[CaseResult]],
) -> dict[str, Any]:
    """The summary document: setup, machine, per-engine summaries and ratios."""
    compiled_sets = [{r.name for r in rs if r.status == "compiled"} for rs in all_results.values()]
    common = set.intersection(*compiled_sets) if compiled_sets else set()
    summaries = {e: metas[e] | summarize_engine(rs, cases, common) for e, rs in all_results.items()}
    return {
        "benchmark": "maskbench-dev",
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": _tree_prefix() + ".venv/bin/python bench/compare.py " + " ".join(
            shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv)),
        "data": str(MASKBENCH_DEV.relative_to(ROOT.parent)),
        "tokenizer": str(LLAMA3_TOKENIZER.relative_to(ROOT.parent)),
        "schemas": len(cases),
        "instances": sum(len(c.instances) for c in cases),
        "timeout_s": args.timeout,
        "clock": args.clock,
        "max_rss_mib": args.max_rss_mib,
        "machine": machine_description(),
        "engines": summaries,
        "ratios_vs_tokensieve": ratios(summaries),
    }


def write_results(out: Path, report: dict[str, Any], all_results: dict[str, list[CaseResult]]) -> None:
    """The summary JSON at ``out`` and the per-schema records next to it (``*_cases.json``)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    detail = {e: [case_record(r) for r in rs] for e, rs in all_results.items()}
    out.with_name(out.stem + "_cases.json").write_text(json.dumps(detail, indent=0) + "\n", encoding="utf-8")

if __name__ == "__main__":
    main()
