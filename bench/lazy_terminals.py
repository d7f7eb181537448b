"""What building terminal automata lazily would do to compile and mask times: an estimate.

    .venv/bin/python bench/lazy_terminals.py [--sample N] [--cap-ms MS ...]
        [--group-budget-ms MS] [--pessimistic]

Today a compile builds the DFA and token index of every terminal it lowers to, while the first
mask touches few of them. This script measures, on MaskBench schemas and their instances (one
``Compiler``, as in ``compare.py``'s worker; process CPU time for compiles, thread CPU time for
masks, as there), what a design that built each terminal at the first mask needing it would
move from compile into masks:

- every DFA build, product and token index a compile makes is timed and kept with the index;
- after the first mask, an index that the mask left untouched (its ``memory_bytes`` did not
  grow) counts as *deferred*: its build time leaves the compile;
- during the instances, a deferred index is charged to the mask after which it first grew.

With ``--cap-ms``, only terminals whose build took less than the cap are deferred. The row
"lazy, finite programs" defers what a design could defer without building anything to find
out: terminals whose programs are finite languages (byte sets, sequences and alternations, no
repetition: property names, enums, name sets) and differences whose right side is one ("any
key but these"), whose automata are bounded by their programs' size, so that the lowering
knows they fit their state budget before they are built.

With ``--group-budget-ms``, the terminals that one mask would build together (the keys of an
object it enters: a design knows these groups when it lowers the object) are built with the
compile instead when their builds add up to more than the budget, which bounds what laziness
adds to any one mask.

It is an estimate with one known blind spot, which makes the compile figure a lower bound and
the mask figures upper-bound-ish: the matcher also walks terminal DFAs without touching their
token indexes (the suffix of a token that crosses from one terminal into the next is walked
through the next one's DFA), and those uses are not seen here, so some terminals counted as
deferred would be needed by the first mask after all (typically the keys of the root object).
``--pessimistic`` counts what the first instance's second mask builds (after the first token,
usually ``{``: the root object's keys) as compile time too, which covers the usual case.
Counted terminals are never deferred (nor are the builds of their pieces). Not a benchmark
against peers (that is ``compare.py``).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
if importlib.util.find_spec("tokensieve") is None:  # the dev tree, not installed
    sys.path.append(str(ROOT / "src"))

import numpy as np  # noqa: E402

import tokensieve as ts  # noqa: E402
from bench.common import LLAMA3_TOKENIZER, load_maskbench  # noqa: E402
from tokensieve import _core  # noqa: E402

OP_BYTES, OP_SEQ, OP_ALT = 0, 1, 2  # the regex program's opcodes (cpp/include/tokensieve/dfa.hpp)


def is_finite(words: np.ndarray) -> bool:
    """Whether a regex program uses byte sets, sequences and alternations only."""
    pending, at = 1, 0  # expressions still to read, and where the next one starts
    while pending:
        op = int(words[at])
        if op == OP_BYTES:
            at += 2 + 2 * int(words[at + 1])
        elif op in (OP_SEQ, OP_ALT):
            pending += int(words[at + 1])
            at += 2
        else:
            return False
        pending -= 1
    return True


class BuildLog:
    """Times the native builds a compile makes and ties them to the token index they end in.

    The lowering and the terminal cache call ``_core.build_dfa``, ``_core.dfa_product`` and
    ``_core.DfaTokenIndex`` through the module, so wrapping the module's attributes sees every
    call (the compiled package looks them up at each call too)."""

    def __init__(self) -> None:
        self.pending = 0.0  # build seconds not yet tied to an index
        self.finite = True  # whether every program built since the last index was finite
        # (index, bytes when made, build seconds, finite programs only)
        self.indexes: list[tuple[Any, int, float, bool]] = []
        build_dfa = self._timed(_core.build_dfa)

        def dfa(words: Any, *args: Any) -> Any:
            self.finite = self.finite and is_finite(np.asarray(words))
            return build_dfa(words, *args)

        _core.build_dfa = dfa  # type: ignore[assignment]
        _core.dfa_product = self._timed(_core.dfa_product)  # type: ignore[assignment]
        make_index = _core.DfaTokenIndex

        def index(*args: Any, **kwargs: Any) -> Any:
            started = time.process_time()
            made = make_index(*args, **kwargs)
            self.pending += time.process_time() - started
            self.indexes.append((made, made.memory_bytes(), self.pending, self.finite))
            self.pending, self.finite = 0.0, True
            return made

        _core.DfaTokenIndex = index  # type: ignore[misc,assignment]

        # A counted terminal's pieces are DFA builds too, with no token index of their own: they
        # are its cost (never deferred), not the next index's. (The stand-in class makes
        # `GrammarStats.counted_terminals` miss those made by `from_units`; nothing here reads it.)
        log = self

        class Counted(_core.CountedTerminal):  # type: ignore[misc]
            def __init__(self, *args: Any) -> None:
                super().__init__(*args)
                log.pending, log.finite = 0.0, True

            @staticmethod
            def from_units(*args: Any) -> Any:
                made = counted_from_units(*args)
                log.pending, log.finite = 0.0, True
                return made

        counted_from_units = _core.CountedTerminal.from_units
        _core.CountedTerminal = Counted  # type: ignore[misc,assignment]

    def _timed(self, build: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            started = time.process_time()
            try:
                return build(*args)
            finally:
                self.pending += time.process_time() - started

        return call

    def start(self) -> None:
        self.pending, self.finite = 0.0, True
        self.indexes.clear()


Entry = tuple[Any, int, float, bool]  # see BuildLog.indexes


def touched(entry: Entry) -> bool:
    """Whether a mask built an entry of the index since it was made."""
    index, made_bytes, _, _ = entry
    return int(index.memory_bytes()) > made_bytes


def designs(caps_ms: list[float]) -> list[tuple[str, Callable[[Entry], bool]]]:
    """Each lazy design: its label, and which terminals (untouched by the first mask) it defers."""
    def under(cap_s: float) -> Callable[[Entry], bool]:
        return lambda e: e[2] < cap_s

    out: list[tuple[str, Callable[[Entry], bool]]] = []
    for ms in caps_ms:
        if ms <= 0:
            out.append(("lazy, every terminal", under(float("inf"))))
        else:
            out.append((f"lazy, builds under {ms:g} ms", under(ms * 1e-3)))
    out.append(("lazy, finite programs", lambda e: e[3]))
    return out


def run(sample: int, caps_ms: list[float], group_budget_ms: float, pessimistic: bool) -> None:
    log = BuildLog()
    cases = load_maskbench(sample)
    vocab = ts.Vocabulary.from_tokenizer_json(str(LLAMA3_TOKENIZER))
    compiler = ts.Compiler(vocab)
    mask = ts.allocate_bitmask(1, vocab.size)
    lazy = designs(caps_ms)
    group_budget = float("inf") if group_budget_ms <= 0 else group_budget_ms * 1e-3
    compile_now: list[float] = []
    masks_now: list[float] = []
    compile_lazy: list[list[float]] = [[] for _ in lazy]
    masks_lazy: list[list[float]] = [[] for _ in lazy]
    for case in cases:
        log.start()
        started = time.process_time()
        try:
            grammar = compiler.json_schema(case.source, property_order="any")
            ts.Matcher(grammar).fill_bitmask(mask, 0)
        except ts.TokensieveError:
            continue
        seconds = time.process_time() - started
        compile_now.append(seconds)
        # Per design, the indexes the first mask left alone that it would defer.
        untouched = [e for e in log.indexes if not touched(e)]
        deferred = [[e for e in untouched if defers(e)] for _, defers in lazy]
        for d, entries in enumerate(deferred):
            compile_lazy[d].append(seconds - sum(e[2] for e in entries))
        for first, inst in enumerate(case.instances):
            matcher = ts.Matcher(grammar)
            for step, token in enumerate([*inst.tokens, None]):
                t0 = time.thread_time()
                matcher.fill_bitmask(mask, 0)
                mask_s = time.thread_time() - t0
                masks_now.append(mask_s)
                for d, entries in enumerate(deferred):
                    now_touched = [touched(e) for e in entries]
                    extra = sum(e[2] for e, t in zip(entries, now_touched, strict=True) if t)
                    deferred[d] = [e for e, t in zip(entries, now_touched, strict=True) if not t]
                    # Built with the compile instead: past the group budget, or (--pessimistic)
                    # needed by the first instance's second mask.
                    if extra > group_budget or (pessimistic and first == 0 and step == 1):
                        compile_lazy[d][-1] += extra
                        extra = 0.0
                    masks_lazy[d].append(mask_s + extra)
                if token is None:
                    break
                try:
                    if not matcher.accept_token(token):
                        break
                except ts.TokensieveError:
                    break
    print(f"{len(compile_now)} schemas compiled, {len(masks_now)} masks (process/thread CPU time)\n")
    print(f"| {'design':<28} | compile p50 | p90 | p99 | mask p50 | p99 | p99.9 | max |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|")
    _row("eager (today)", compile_now, masks_now)
    for (label, _), compiles, masks in zip(lazy, compile_lazy, masks_lazy, strict=True):
        _row(label, compiles, masks)


def _row(label: str, compiles: list[float], masks: list[float]) -> None:
    c = np.percentile(np.array(compiles) * 1e3, [50, 90, 99])
    m = np.array(masks) * 1e6
    mp = np.percentile(m, [50, 99, 99.9])
    print(f"| {label:<28} | {c[0]:.2f} ms | {c[1]:.1f} | {c[2]:.0f} | {mp[0]:.1f} us | {mp[1]:.0f} | "
          f"{mp[2]:.0f} | {m.max():.0f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", type=int, default=400, help="an even sample of N schemas (0: all)")
    ap.add_argument("--cap-ms", type=float, nargs="*", default=[0.0, 0.3],
                    help="defer only builds under this many ms (0: all)")
    ap.add_argument("--group-budget-ms", type=float, default=0.0,
                    help="terminals one mask would build together for more than this many ms are "
                         "built with the compile instead (0: no budget)")
    ap.add_argument("--pessimistic", action="store_true",
                    help="count what the first instance's second mask builds as compile time (the "
                         "blind spot's usual case: the root object's keys)")
    args = ap.parse_args()
    run(args.sample, args.cap_ms, args.group_budget_ms, args.pessimistic)


if __name__ == "__main__":
    main()
