"""What a full garbage collection before a compile costs the compile that follows it.

    .venv/bin/python -m bench.collector_cost [--sample N] [--extra-objects K]

``bench/compare.py``'s worker runs ``gc.collect()`` before every compile so that no engine is
charged for a collection of garbage it did not make; the collection itself is not timed. It
still costs the compile after it: the collector walks every object it tracks, which pushes
out of the CPU caches what the compile would have found there. The cost grows with the
number of tracked objects, and tokensieve's caches of front-end expressions and automata
keep hundreds of thousands of them once many schemas have been compiled.

This script compiles MaskBench schemas through the worker's own tokensieve adapter
(``bench/peers/tokensieve_engine.py``: one ``Compiler``, ``property_order="any"``; each
schema is new to the compiler) and times each compile with its first mask (process CPU time),
with ``gc.collect()`` before it (``collect``, as the worker), with 32 MiB of other memory
written before it instead (``evict``: what pushing the compile's data and code out of the CPU
caches costs alone, with no collection), or with nothing (``none``). The worker's
heap trim after the collection is left out, so that the figure is the collection's alone.
The preparations take turns over consecutive schemas: each schema is compiled once (a second
compile would find its automata in the caches), so each preparation sees a third of the
sample, spread evenly over it, and a noisy machine moves them all alike. ``--extra-objects K`` keeps K
more tracked objects alive (a larger application heap). Not a benchmark against peers (that
is ``compare.py``).
"""

from __future__ import annotations

import argparse
import gc
import json
import time
import warnings

import numpy as np

import tokensieve as ts

from .common import MASKBENCH_DEV, sample_evenly
from .peers.tokensieve_engine import TokensieveEngine

PREPARATIONS = ("none", "collect", "evict")
_EVICTION_BYTES = 32 << 20  # well past the L2 caches (2 MiB a core here)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sample", type=int, default=0, help="an even sample of N schemas (default: all)")
    ap.add_argument("--extra-objects", type=int, default=0, help="keep this many more tracked objects alive")
    args = ap.parse_args()

    engine = TokensieveEngine()
    files = sample_evenly(sorted(MASKBENCH_DEV.glob("*.json")), args.sample)
    sources = [json.dumps(json.loads(p.read_text(encoding="utf-8"))["schema"]) for p in files]
    extra = [[i] for i in range(args.extra_objects)]  # lists are always tracked
    other = np.zeros(_EVICTION_BYTES // 8)
    times: dict[str, list[float]] = {how: [] for how in PREPARATIONS}
    for i, source in enumerate(sources):
        how = PREPARATIONS[i % len(PREPARATIONS)]
        if how == "collect":
            gc.collect()
        elif how == "evict":
            other[::8] += 1.0  # a write to every 64-byte line
        started = time.process_time()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                engine.session(engine.compile("json_schema", source)).fill()
        except (ts.TokensieveError, RecursionError):
            continue
        times[how].append(time.process_time() - started)
    gc.collect()
    tracked = len(gc.get_objects())
    print(f"{len(sources)} schemas; tracked objects at the end: {tracked:,} ({len(extra):,} of them extra)")
    print(f"{'before the compile':<20} {'n':>5} {'p50 (ms)':>9} {'p90 (ms)':>9} {'mean (ms)':>10}")
    for how in PREPARATIONS:
        a = np.array(times[how]) * 1e3
        p50, p90 = np.percentile(a, [50, 90])
        print(f"{how:<20} {len(a):>5} {p50:9.3f} {p90:9.2f} {a.mean():10.3f}")


if __name__ == "__main__":
    main()
