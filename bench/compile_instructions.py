"""Instructions per compile, counted by valgrind: a compile-time A/B that host noise cannot move.

    .venv/bin/python -m bench.compile_instructions NAME[,NAME...] [--warm N] [--pythonpath DIR]...
        [--phase compile|frontend|lower]

On a shared machine, compile times of the same build move by 8% or more between runs, which
hides the few percent that one change to the compile path makes. The instructions a compile
executes do not move: this runs each named MaskBench dev schema's compile (time to first mask,
as ``bench/compare.py``'s worker measures it: ``gc.collect()`` before, then compile, matcher and
first mask) under ``valgrind --tool=callgrind``, counting only inside it, after warming the
process on ``--warm`` other schemas (an even sample; their terminals fill the cache as earlier
compiles do in ``compare.py``). Prints millions of instructions per schema and build.

``--pythonpath`` adds a build to compare (a ``pip install --target`` directory, or ``src`` for
the development tree); several may be given, each is run in turn; without it, the installed
package is measured. Instructions are not time: a collection walking cold memory or a cache
miss costs more than its count says, so confirm a change that matters with ``compare.py``.
Each build takes about a minute (valgrind runs the warm-up too, uncounted).

``--phase`` counts one step of the compile instead of all of it: ``frontend`` (JSON Schema to
grammar IR, ``json_schema_to_grammar`` with the compiler's settings) or ``lower`` (that IR to
terminals and productions, the compiler's lowering with its terminal cache; the IR is
built first, uncounted). A change to one step then shows at its own scale, not diluted by the
other (a 10% cut in the lowering is 4-6% of a large schema's compile). Toggling valgrind on a
function of the compiled package instead would not do: those functions also run in the
warm-up, and callgrind's call counts for mypyc's functions are not to be trusted either.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _worker(names: list[str], warm: int, phase: str) -> None:
    """Compile ``names`` (or run one ``phase`` of their compiles) inside ``itertools.starmap``
    (what valgrind counts), after warming."""
    import gc
    import warnings

    sys.path.insert(0, str(ROOT))
    warnings.simplefilter("ignore")
    from bench.common import MASKBENCH_DEV, lower_as_compiler, sample_evenly
    from bench.peers.tokensieve_engine import TokensieveEngine

    engine = TokensieveEngine()

    def source(path: Path) -> str:
        return json.dumps(json.loads(path.read_text())["schema"])

    for path in sample_evenly(sorted(MASKBENCH_DEV.glob("*.json")), warm):
        if path.stem in names:
            continue
        try:
            engine.compile("json_schema", source(path))
        except Exception:  # refused schemas warm nothing, as in compare.py
            pass

    from tokensieve.compiler.terminal_cache import TerminalCache
    from tokensieve.frontends.json_schema.converter import json_schema_to_grammar

    # The engine's compiler's limits and terminal cache (the process-wide one for them).
    limits = engine.compiler.limits
    cache = TerminalCache.shared(engine.vocab, limits)

    def first_mask(text: str) -> None:
        engine.session(engine.compile("json_schema", text)).fill()

    def frontend(text: str) -> Any:
        return json_schema_to_grammar(text, property_order="any")  # the engine's settings

    def lowering(grammar: Any) -> None:
        lower_as_compiler(grammar, cache, limits)

    for name in names:
        text = source(MASKBENCH_DEV / f"{name}.json")
        step: Callable[[Any], object] = first_mask if phase == "compile" else frontend
        argument: Any = text
        if phase == "lower":
            step, argument = lowering, frontend(text)
        gc.collect()
        if phase != "compile":
            gc.disable()  # a step alone runs inside the compiler's pause (compiler.gc_pause)
        try:
            # starmap_next is the function valgrind toggles counting on: nothing else runs in it.
            list(itertools.starmap(step, [(argument,)]))
        finally:
            gc.enable()


def _count(names: list[str], warm: int, pythonpath: str | None, phase: str) -> list[float]:
    """Millions of instructions of each schema's compile (or ``phase`` of it), for one build."""
    env = dict(os.environ)
    # Set iteration orders (and so the work of walks over them) follow string hashes: with a
    # random seed per process, WashingtonPost's counts moved 3% between runs of one build.
    env["PYTHONHASHSEED"] = "0"
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        cmd = [
            "valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=starmap_next",
            "--dump-after=starmap_next", f"--callgrind-out-file={out}",
            sys.executable, "-m", "bench.compile_instructions", ",".join(names),
            "--warm", str(warm), "--phase", phase, "--worker",
        ]  # fmt: skip
        subprocess.run(cmd, cwd=ROOT, env=env, check=True, capture_output=True)
        counts = []
        for dump in sorted(Path(tmp).glob("callgrind.out.*"), key=lambda p: int(p.suffix[1:])):
            match = re.search(r"^summary: (\d+)", dump.read_text(errors="replace"), re.MULTILINE)
            if match is not None and int(match.group(1)) > 100_000:  # (starmap's own tiny dumps)
                counts.append(int(match.group(1)) / 1e6)
    if len(counts) != len(names):
        raise RuntimeError(f"expected {len(names)} counted compiles, valgrind dumped {len(counts)}")
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", help="comma-separated MaskBench dev schema names (file stems)")
    ap.add_argument("--warm", type=int, default=20, help="schemas compiled first, uncounted")
    ap.add_argument("--pythonpath", action="append", help="a build to measure (repeatable)")
    ap.add_argument(
        "--phase",
        choices=("compile", "frontend", "lower"),
        default="compile",  # fmt: skip
        help="count the whole compile (time to first mask) or one step of it",
    )
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    names = args.names.split(",")
    if args.worker:
        _worker(names, args.warm, args.phase)
        return
    builds = args.pythonpath or [None]
    counts = {build: _count(names, args.warm, build, args.phase) for build in builds}
    labels = [build or "installed" for build in builds]
    print(f"{args.phase}:")
    print("| schema | " + " | ".join(f"{label} (M instr.)" for label in labels) + " |")
    print("|---|" + "--:|" * len(builds))
    for i, name in enumerate(names):
        print(f"| {name} | " + " | ".join(f"{counts[b][i]:.1f}" for b in builds) + " |")
    if len(builds) > 1:
        first = counts[builds[0]]
        for build, label in zip(builds[1:], labels[1:], strict=True):
            ratios = [c / f for c, f in zip(counts[build], first, strict=True)]
            print(
                f"{label} / {labels[0]}: median {statistics.median(ratios):.3f}, "
                f"sum {sum(counts[build]) / sum(first):.3f}"
            )


if __name__ == "__main__":
    main()
