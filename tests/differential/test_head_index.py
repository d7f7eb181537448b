"""Mask walks judged from head indexes (``cpp/include/tokensieve/head_index.hpp``): engine == oracle.

Below a trie node where the parser holds only scans (the letters of an identifier after a
space), a walk takes each (terminal, DFA state) head's tokens from an index in one OR and walks
with chart sets only below the *exits*, the nodes where a head may end and a child's byte may
begin what follows it. The vocabularies here are built for that: every run of identifier
letters up to six long, with and without a leading space (large subtrees where the terminal
ends at every node), a few tokens that run on into punctuation (the exits), and random longer
tokens. ``min_head_index_nodes=1`` makes every such walk use the indexes, a bound past any
subtree makes every one step the heads node by node, and both must equal the oracle.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.differential.test_walk_follow import walk_and_compare
from tokensieve import Compiler, Limits, Matcher, Vocabulary
from tokensieve.frontends.ebnf import parse_ebnf

LETTERS = b"ab"
PUNCTUATION = b"(), "
RUNS = [bytes(p) for n in range(1, 7) for p in itertools.product(LETTERS, repeat=n)]
BASE = sorted({*RUNS, *(b" " + r for r in RUNS), *(bytes([c]) for c in PUNCTUATION),
               b"a(", b"ab(", b" ab(", b"b)", b" ba,", b"aa)", b"ab, ", b"b(a", b") ", b"),",
               b" abab(", b" aab)", b" bab, ", b" bbba(a", b" abab)", b" ababa)", b" abab ab", b" aab ba",
               b" aab aab", b" aabaab)", b" aabaa)"})

# Identifiers and calls, keywords beside identifiers (several heads at one node: "ab" is a
# keyword and an identifier), words that end where their terminal cannot go on (tokens
# allowed only by the completion's viability), and terminals that accept every second or third
# byte (their states along a path differ).
GRAMMARS = {
    "calls": r"""
root  ::= expr (" " expr)*
expr  ::= ident | ident "(" ws (args ws)? ")"
args  ::= expr (ws "," ws expr)*
ident ::= [ab]+
ws    ::= " "*
""",
    "keywords": r"""
root ::= stmt (" " stmt)*
stmt ::= "ab" " " name | "ba" "(" name ")" | name | name "," name
name ::= [ab]+
""",
    "words": r"""
root ::= word (" " word)*
word ::= "ab" | "aab" | "b" "a"* | "(" root ")"
""",
    "pairs": r"""
root ::= item (" " item)*
item ::= ("ab")+ | "(" root ")" | "b" "a"*
""",
    "triples": r"""
root ::= item (" " item)*
item ::= ("aab")+ | "(" root ")" | "b" "a"*
""",
}
LIMITS = {
    "stepped": Limits(max_boundary_nodes=1, min_head_index_nodes=1_000_000),
    "indexed": Limits(max_boundary_nodes=1, min_head_index_nodes=1),
    "indexed_ungrouped": Limits(min_head_index_nodes=1),
}
# Mostly letters, now and then punctuation; half of them after a space.
EXTRA = st.lists(st.binary(min_size=3, max_size=9).map(
    lambda b: b" "[: b[0] % 2]
    + bytes((LETTERS + PUNCTUATION)[x % 6] if x % 5 == 0 else LETTERS[x % 2] for x in b[1:])
), max_size=40)


def vocabulary(extra: list[bytes]) -> tuple[list[bytes], Vocabulary]:
    tokens = sorted(set(BASE) | set(extra))
    eos = len(tokens)
    return tokens, Vocabulary([*tokens, b"<eos>"], eos_token_ids=[eos], special_token_ids=[eos])


@pytest.mark.parametrize("limits", sorted(LIMITS))
@pytest.mark.parametrize("name", sorted(GRAMMARS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(extra=EXTRA, choices=st.lists(st.integers(0, 10**6), max_size=12))
def test_head_index_masks_match_oracle(
    name: str, limits: str, extra: list[bytes], choices: list[int]
) -> None:
    tokens, vocab = vocabulary(extra)
    walk_and_compare(GRAMMARS[name], LIMITS[limits], tokens, vocab, choices)


def test_indexed_walks_build_indexes() -> None:
    """The indexed configuration does take the indexed path (its indexes add to the native
    grammar's live memory, ``memory_bytes``; ``stats.memory_bytes`` is the compile-time figure), so the
    tests above compare it, not the stepped walk twice."""
    tokens, vocab = vocabulary([])
    grammar = parse_ebnf(GRAMMARS["calls"])
    sizes = {}
    for name in ("stepped", "indexed"):
        compiled = Compiler(vocab, limits=LIMITS[name]).grammar(grammar)
        before = compiled._native.memory_bytes()
        matcher = Matcher(compiled)
        assert matcher.accept_bytes(b"ab(")
        matcher.allowed_tokens()
        sizes[name] = compiled._native.memory_bytes() - before
    assert sizes["indexed"] > sizes["stepped"]
