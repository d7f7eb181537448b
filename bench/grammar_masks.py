"""tokensieve's slowest masks on one grammar of ``bench/grammars.py``, with their context.

    PYTHONPATH=src .venv/bin/python bench/grammar_masks.py [--grammar C-like] [--strings 50]
        [--slowest 10] [--repeat 30]

Runs the grammar's strings (the same seed and tokens as ``grammars.py``) through one matcher
each, timing every mask (thread CPU time), and prints p50/p99/max and the slowest masks with
the text before them and the token after. ``--repeat N`` then recomputes the slowest mask N
times with the mask cache off (``Limits(mask_cache_bytes=1)``) and prints its steady cost:
the walk alone, without first builds of token-index entries or suffix groups. Not a comparison
with peers (that is ``grammars.py``): a tool to find and measure a grammar's mask tail.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tokensieve as ts  # noqa: E402
from bench.common import LLAMA3_TOKENIZER  # noqa: E402
from bench.grammars import build_cases  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--grammar", default="C-like", help="arithmetic, C-like or nested lists")
    ap.add_argument("--strings", type=int, default=50)
    ap.add_argument("--slowest", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=0)
    args = ap.parse_args()

    case = next((c for c in build_cases(args.strings) if c.name == args.grammar), None)
    if case is None or case.kind != "gbnf":
        sys.exit(f"no GBNF grammar named {args.grammar!r} in bench/grammars.py")
    vocab = ts.Vocabulary.from_tokenizer_json(str(LLAMA3_TOKENIZER))
    grammar = ts.Compiler(vocab).ebnf(case.source)
    mask = ts.allocate_bitmask(1, vocab.size)
    clock = time.thread_time
    timed: list[tuple[float, int, int]] = []  # (seconds, string, token position)
    for s, instance in enumerate(case.instances):
        matcher = ts.Matcher(grammar)
        for i, token in enumerate([*instance.tokens, None]):
            started = clock()
            matcher.fill_bitmask(mask, 0)
            timed.append((clock() - started, s, i))
            if token is not None and not matcher.accept_token(token):
                sys.exit(f"string {s} refused at token {i}")
    ordered = sorted(t for t, _, _ in timed)

    def us(q: float) -> str:
        return f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1e6:.1f} us"

    print(f"{args.grammar}: {len(ordered)} masks; p50 {us(0.5)}, p99 {us(0.99)}, max {us(1.0)}")

    def context(s: int, i: int) -> tuple[str, str]:
        tokens = case.instances[s].tokens
        before = b"".join(vocab.token_bytes(t) for t in tokens[max(0, i - 6) : i]).decode(errors="replace")
        after = vocab.token_bytes(tokens[i]).decode(errors="replace") if i < len(tokens) else "<eos>"
        return before, after

    slowest = sorted(timed, reverse=True)[: args.slowest]
    for t, s, i in slowest:
        before, after = context(s, i)
        print(f"  {t * 1e3:8.2f} ms  string {s:3d} token {i:4d}  {before!r} -> {after!r}")
    if args.repeat and slowest:
        _, s, i = slowest[0]
        uncached = ts.Compiler(vocab, limits=ts.Limits(mask_cache_bytes=1)).ebnf(case.source)
        matcher = ts.Matcher(uncached)
        for token in case.instances[s].tokens[:i]:
            matcher.accept_token(token)
        matcher.fill_bitmask(mask, 0)  # first builds
        started = clock()
        for _ in range(args.repeat):
            matcher.fill_bitmask(mask, 0)
        print(f"slowest mask again, cache off: {(clock() - started) / args.repeat * 1e3:.2f} ms each")


if __name__ == "__main__":
    main()
