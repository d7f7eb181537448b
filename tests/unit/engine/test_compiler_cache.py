"""The Compiler's cache is bounded by what its grammars hold *now*, not at compile time.

A compiled grammar's mask cache and head indexes grow as its matchers compute masks (up to
``Limits.mask_cache_bytes`` and ``Limits.head_index_bytes`` each); the growth is reported to
the compiler's memory meter, so ``Limits.cache_bytes`` bounds it too.
"""

from __future__ import annotations

import gc
import threading
import weakref

import pytest

import tokensieve as ts

TOKENS = [b"(", b")", b"x", b"((", b"))", b"<eos>"]
NESTED = 'root ::= "(" root ")" | "x"'
# Three grammars of about one size, none sharing a cache entry with another.
SOURCES = [NESTED, 'root ::= "(" root ")" | "x" | "(("', 'root ::= "(" root ")" | "x" | "))"']


@pytest.fixture(scope="module")
def vocab() -> ts.Vocabulary:
    return ts.Vocabulary(TOKENS, eos_token_ids=[5], special_token_ids=[5])


def descend(grammar: ts.CompiledGrammar, depth: int) -> None:
    """Masks at ``depth`` distinct parser states: each nesting level has its own signature,
    so each mask is a new entry of the grammar's mask cache."""
    matcher = ts.Matcher(grammar)
    bitmask = ts.allocate_bitmask(1, grammar.vocab.size)
    for _ in range(depth):
        matcher.fill_bitmask(bitmask, 0)
        assert matcher.accept_token(0)


def test_memory_bytes_is_live(vocab: ts.Vocabulary) -> None:
    compiler = ts.Compiler(vocab)
    grammar = compiler.ebnf(NESTED)
    assert grammar.memory_bytes == grammar.stats.memory_bytes == compiler.cache_bytes
    descend(grammar, 40)
    growth = grammar.memory_bytes - grammar.stats.memory_bytes
    assert growth > 40 * 4  # at least a mask word per state
    assert compiler.cache_bytes == grammar.stats.memory_bytes + growth


def test_growth_evicts_least_recently_used(vocab: ts.Vocabulary) -> None:
    sizes = [ts.Compiler(vocab).ebnf(src).stats.memory_bytes for src in SOURCES]
    # All three fit as compiled; not once the first has served masks.
    limit = sum(sizes) + 64
    compiler = ts.Compiler(vocab, limits=ts.Limits(cache_bytes=limit))
    first = compiler.ebnf(SOURCES[0])
    second = compiler.ebnf(SOURCES[1])
    descend(first, 40)
    assert compiler.cache_bytes > sum(sizes[:2]) + 64 + sizes[2]
    first_alive = weakref.ref(first)
    del first  # held by the cache alone now
    compiler.ebnf(SOURCES[2])
    # The first went (least recently used), and its caches with it: the cache did not keep
    # it at its compile-time size.
    assert first_alive() is None
    assert compiler.cache_bytes <= limit
    assert compiler.ebnf(SOURCES[1]) is second


def test_bytes_come_back_when_grammars_go(vocab: ts.Vocabulary) -> None:
    compiler = ts.Compiler(vocab)
    grammar = compiler.ebnf(NESTED)
    descend(grammar, 30)
    size = grammar.stats.memory_bytes
    assert compiler.cache_bytes > size
    del grammar
    gc.collect()
    assert compiler.cache_bytes > size  # still cached: still paid for
    compiler.clear_cache()
    gc.collect()
    assert compiler.cache_bytes == 0


def test_an_evicted_grammar_in_use_is_still_counted(vocab: ts.Vocabulary) -> None:
    compiler = ts.Compiler(vocab)
    kept = compiler.ebnf(NESTED)
    descend(kept, 30)
    growth = kept.memory_bytes - kept.stats.memory_bytes
    compiler.clear_cache()
    assert compiler.cache_bytes == growth  # a matcher's grammar keeps its caches alive
    del kept
    gc.collect()
    assert compiler.cache_bytes == 0


def test_growth_from_several_threads(vocab: ts.Vocabulary) -> None:
    compiler = ts.Compiler(vocab)
    grammar = compiler.ebnf(NESTED)
    threads = [threading.Thread(target=descend, args=(grammar, 25 + i)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert compiler.cache_bytes == grammar.memory_bytes > grammar.stats.memory_bytes


def test_grammars_compiled_without_the_cache_are_not_counted(vocab: ts.Vocabulary) -> None:
    from tokensieve.frontends.ebnf import parse_ebnf

    compiler = ts.Compiler(vocab)
    uncached = compiler.grammar(parse_ebnf(NESTED))
    descend(uncached, 30)
    assert uncached.memory_bytes > uncached.stats.memory_bytes
    assert compiler.cache_bytes == 0


def test_a_compiler_loads_the_json_schema_front_end_so_the_first_schema_does_not() -> None:
    # Importing the front-end takes tens of milliseconds; `import tokensieve` stays without it.
    import subprocess
    import sys

    code = (
        "import sys, tokensieve as ts;"
        "before = 'tokensieve.frontends.json_schema' in sys.modules;"
        "ts.Compiler(ts.Vocabulary([b'a', b'<eos>'], eos_token_ids=[1], special_token_ids=[1]));"
        "sys.exit(0 if not before and 'tokensieve.frontends.json_schema' in sys.modules else 1)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
