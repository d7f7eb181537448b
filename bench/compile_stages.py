"""Where tokensieve's compile time goes, stage by stage, on MaskBench schemas.

    .venv/bin/python bench/compile_stages.py [--sample N] [--repeat N] [--cold] [--faults]
        [--profile TOP] [--slowest K] [--json PATH] [--property-order any|declared]

It measures the installed package when there is one (its compile path compiled by mypyc),
else the development tree; ``PYTHONPATH=src`` picks the development tree (plain Python).

For each schema (sorted; an even ``--sample`` of them), in one process with one terminal
cache as in ``bench/compare.py``'s worker, times each stage of a compile (with
``property_order="any"`` as there, or ``--property-order declared``, the library's default):

- ``frontend``: JSON Schema -> grammar IR (``json_schema_to_grammar``);
- ``lower``: IR -> terminals and productions (the compiler's lowering), its own work alone;
- ``terminals``: what the lowering spends in the terminal cache (``TerminalCache.get`` and
  the counted builders): the native DFA builds, products and token indexes of terminals not
  yet cached, and the lookups of those that are (the native lowering finds most of those in
  its own memo, without a call: their lookups are then in ``lower``);
- ``native``: the native ``CompiledGrammar`` (parser tables);
- ``first_mask``: a matcher and its first mask.

Prints p50/p90/p99/max per stage (process CPU time) and the slowest schemas with their
stage split. ``--repeat N`` compiles every schema N more times and reports, per schema and
stage, the fastest of those warm runs (every cache filled: the Python cost of a compile
without the native automata builds, steady against a noisy machine). ``--cold`` runs a full
garbage collection and ``malloc_trim`` before each compile, as ``compare.py``'s worker does
(the collection walks every live object and so leaves the CPU caches cold, and the trim hands
glibc's free pages back, so a compile faults in again every page it touches). ``--faults``
also counts the minor page faults of each stage (``getrusage``, read with the clock: its system
call adds about a microsecond per reading to the times). ``--profile TOP`` also
runs ``cProfile`` over the first compiles and prints the TOP functions by own time. Not a
benchmark against peers (that is ``compare.py``): a tool to find what to make faster.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import importlib.util
import json
import pstats
import resource
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
if importlib.util.find_spec("tokensieve") is None:  # the dev tree, not installed
    sys.path.append(str(ROOT / "src"))

import numpy as np  # noqa: E402

import tokensieve as ts  # noqa: E402
from bench.common import (  # noqa: E402
    LLAMA3_TOKENIZER,
    MASKBENCH_DEV,
    lower_as_compiler,
    release_free_memory,
    sample_evenly,
)
from tokensieve import _core  # noqa: E402
from tokensieve.compiler.compiled import TerminalCache, native_grammar  # noqa: E402
from tokensieve.compiler.gc_pause import gc_paused  # noqa: E402
from tokensieve.frontends.json_schema import json_schema_to_grammar  # noqa: E402

STAGES = ("frontend", "lower", "terminals", "native", "first_mask")


def compile_in_stages(
    schema: Any,
    cache: TerminalCache,
    limits: ts.Limits,
    faults: dict[str, float] | None = None,
    property_order: str = "any",
) -> dict[str, float]:
    """Seconds of process CPU per stage for one schema (raises what the compiler raises), with
    the garbage collector paused as a ``Compiler`` pauses it; ``faults``, when given, receives
    the minor page faults of each stage of the same compile."""
    with gc_paused():
        return _stages(schema, cache, limits, faults, property_order)


def _stages(
    schema: Any, cache: TerminalCache, limits: ts.Limits, faults: dict[str, float] | None, property_order: str
) -> dict[str, float]:
    marks: list[int] = []  # fault counts, read at each clock reading when asked for

    def clock() -> float:
        if faults is not None:
            marks.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt)
        return time.process_time()

    in_cache = [0.0]  # seconds spent inside the terminal cache during the lowering
    cache_faults = [0]

    def timed(build: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            started = clock()
            try:
                return build(*args)
            finally:
                in_cache[0] += clock() - started
                if faults is not None:
                    cache_faults[0] += marks[-1] - marks[-2]

        return call

    t0 = clock()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grammar = json_schema_to_grammar(schema, property_order=property_order)  # type: ignore[arg-type]
    t1 = clock()
    lowered = lower_as_compiler(
        grammar, cache, limits, timed(cache.get), timed(cache.get_counted), timed(cache.get_counted_units)
    )
    t2 = clock()
    native = native_grammar(lowered, cache, limits)
    t3 = clock()
    matcher = _core.Matcher(native)
    mask = np.zeros((1, (cache.native_vocab.size + 31) // 32), dtype=np.int32)
    matcher.fill_mask(mask, 0)
    t4 = clock()
    if faults is not None:  # marks: t0, pairs around each terminal-cache call, t1, t2, t3, t4
        first, after_frontend = marks[0], marks[1]
        lowered_at, native_at, masked_at = marks[-3], marks[-2], marks[-1]
        faults["frontend"] = after_frontend - first
        faults["lower"] = lowered_at - after_frontend - cache_faults[0]
        faults["terminals"] = cache_faults[0]
        faults["native"] = native_at - lowered_at
        faults["first_mask"] = masked_at - native_at
    return {
        "frontend": t1 - t0,
        "lower": t2 - t1 - in_cache[0],
        "terminals": in_cache[0],
        "native": t3 - t2,
        "first_mask": t4 - t3,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", type=int, default=400, help="an even sample of N schemas (0: all)")
    ap.add_argument("--repeat", type=int, default=0, help="also time N warm compiles per schema")
    ap.add_argument("--cold", action="store_true", help="gc.collect() and malloc_trim before each compile")
    ap.add_argument("--faults", action="store_true", help="also count minor page faults per stage")
    ap.add_argument("--profile", type=int, default=0, help="print the TOP functions by own time")
    ap.add_argument("--slowest", type=int, default=10, help="list the K slowest schemas")
    ap.add_argument("--json", type=Path, help="write per-schema stage times here")
    ap.add_argument(
        "--property-order",
        choices=("any", "declared"),
        default="any",
        help="the front-end's property order (default any, as compare.py; declared is the library's default)",
    )
    args = ap.parse_args()

    files = sample_evenly(sorted(MASKBENCH_DEV.glob("*.json")), args.sample)
    vocab = ts.Vocabulary.from_tokenizer_json(str(LLAMA3_TOKENIZER))
    limits = ts.Limits()
    cache = TerminalCache(vocab, limits)
    schemas = [(p.stem, json.loads(p.read_text(encoding="utf-8"))["schema"]) for p in files]

    profiler = cProfile.Profile() if args.profile else None
    rows: list[tuple[str, dict[str, float]]] = []
    fault_rows: list[tuple[str, dict[str, float]]] = []
    failed = 0
    for name, schema in schemas:
        if args.cold:
            gc.collect()
            release_free_memory()
        if profiler:
            profiler.enable()
        try:
            counted: dict[str, float] | None = {} if args.faults else None
            rows.append((name, compile_in_stages(schema, cache, limits, counted, args.property_order)))
            if counted is not None:
                fault_rows.append((name, counted))
        except (ts.TokensieveError, RecursionError):
            failed += 1
        finally:
            if profiler:
                profiler.disable()

    print(f"{len(rows)} schemas compiled, {failed} refused; process CPU time in ms")
    _print_table("first compile", rows)
    if fault_rows:
        _print_table("minor page faults, same compiles (counts)", fault_rows, scale=1.0)
    if args.repeat:
        warm = []
        by_name = dict(schemas)
        for name, _ in rows:
            best = {stage: float("inf") for stage in STAGES}
            for _ in range(args.repeat):
                for stage, seconds in compile_in_stages(
                    by_name[name], cache, limits, None, args.property_order
                ).items():
                    best[stage] = min(best[stage], seconds)
            warm.append((name, best))
        _print_table(f"warm: per schema, the fastest of {args.repeat} more compiles", warm)

    print(f"\nslowest {args.slowest}:")
    for name, t in sorted(rows, key=lambda r: -sum(r[1].values()))[: args.slowest]:
        split = " ".join(f"{s}={t[s] * 1e3:.1f}" for s in STAGES)
        print(f"  {sum(t.values()) * 1e3:9.1f} ms  {name}  ({split})")

    if profiler:
        print()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.profile)
    if args.json:
        args.json.write_text(json.dumps({name: t for name, t in rows}, indent=1))


def _print_table(title: str, rows: list[tuple[str, dict[str, float]]], scale: float = 1e3) -> None:
    print(f"\n{title}")
    print(f"{'stage':<11} {'p50':>8} {'p90':>8} {'p99':>8} {'max':>9} {'sum':>9}")
    for stage in (*STAGES, "total"):
        values = np.array([sum(t.values()) if stage == "total" else t[stage] for _, t in rows]) * scale
        p50, p90, p99 = np.percentile(values, [50, 90, 99])
        print(f"{stage:<11} {p50:8.3f} {p90:8.3f} {p99:8.2f} {values.max():9.1f} {values.sum():9.0f}")


if __name__ == "__main__":
    main()
