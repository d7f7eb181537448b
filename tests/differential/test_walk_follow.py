"""Trie walks that skip a completion's closure (``Follow`` in ``cpp/include/tokensieve/matcher.hpp``):
engine == oracle.

A mask walk below a terminal boundary reads token suffixes byte by byte. Where a terminal
may end after every byte (an identifier), the walk closes the completion only at nodes with a
child that can begin what follows; elsewhere the node keeps its continuing scans alone. The
random-grammar vocabularies (one to three letters) make short walks; here tokens run up to
four bytes over identifier letters, brackets, commas and spaces, so that walks pass long runs
of one terminal with boundaries on the way, with and without suffix groups.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.oracle import Oracle
from tokensieve import Compiler, Limits, Matcher, NoTokenAllowed, Vocabulary
from tokensieve.frontends.ebnf import parse_ebnf

ALPHABET = b"ab(), "
TOKENS = [bytes(p) for n in range(1, 5) for p in itertools.product(ALPHABET, repeat=n)]
EOS = len(TOKENS)
VOCAB = Vocabulary([*TOKENS, b"<eos>"], eos_token_ids=[EOS], special_token_ids=[EOS])

# Calls and identifiers: an identifier ends anywhere and is followed by "(", ",", ")", a
# space or the end; `ws` is nullable, so several items complete at once.
CALLS = r"""
root  ::= expr
expr  ::= ident | ident "(" ws (args ws)? ")"
args  ::= expr (ws "," ws expr)*
ident ::= [ab]+
ws    ::= " "*
"""
# The same language shapes with a terminal that ends after each byte on both sides of a space.
WORDS = r"""
root ::= word (" " word)* ("(" root ")")?
word ::= "a"+ | "ab"+ | "b"
"""

# A terminal whose DFA state changes along the run and accepts every other byte.
PAIRS = r"""
root ::= item (" " item)*
item ::= ("ab")+ | "(" root ")" | "b" "a"*
"""

GRAMMARS = {"calls": CALLS, "pairs": PAIRS, "words": WORDS}
# "indexed": every walk that runs scan heads takes them from head indexes (head_index.hpp),
# whatever the subtree's size.
LIMITS = {
    "default": None,
    "grouped": Limits(max_boundary_nodes=1),
    "indexed": Limits(min_head_index_nodes=1),
    "indexed_grouped": Limits(max_boundary_nodes=1, min_head_index_nodes=1),
}


@pytest.mark.parametrize("limits", sorted(LIMITS))
@pytest.mark.parametrize("name", sorted(GRAMMARS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(choices=st.lists(st.integers(0, 10**6), max_size=12))
def test_walk_masks_match_oracle(name: str, limits: str, choices: list[int]) -> None:
    walk_and_compare(GRAMMARS[name], LIMITS[limits], TOKENS, VOCAB, choices)


def walk_and_compare(
    source: str, limits: Limits | None, tokens: list[bytes], vocab: Vocabulary, choices: list[int]
) -> None:
    """Walks the EBNF grammar's language (the allowed token picked by each choice) comparing
    every mask with the oracle's; ``vocab`` is ``tokens`` plus an EOS id after them."""
    eos = len(tokens)
    grammar = parse_ebnf(source)
    oracle = Oracle(grammar)
    matcher = Matcher(Compiler(vocab, limits=limits).grammar(grammar))
    prefix = b""
    for r in choices:
        expected = oracle.mask(prefix, vocab.tokens, special_ids=[eos], eos_ids=[eos])
        if not expected:
            with pytest.raises(NoTokenAllowed):
                matcher.allowed_tokens()
            return
        got = set(matcher.allowed_tokens().tolist())
        extra, missing = sorted(got - expected)[:5], sorted(expected - got)[:5]
        assert got == expected, f"after {prefix!r}: extra {extra}, missing {missing}"
        t = sorted(expected)[r % len(expected)]
        if t == eos:
            return
        assert matcher.accept_token(t)
        prefix += tokens[t]


LONG_WORDS = st.binary(min_size=2, max_size=7).map(lambda b: bytes(ALPHABET[x % len(ALPHABET)] for x in b))


@pytest.mark.parametrize("indexed", [False, True], ids=["stepped", "indexed"])
@pytest.mark.parametrize("name", sorted(GRAMMARS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    words=st.lists(LONG_WORDS, max_size=60),
    choices=st.lists(st.integers(0, 10**6), max_size=10),
)
def test_sparse_vocabularies_match_oracle(
    name: str, indexed: bool, words: list[bytes], choices: list[int]
) -> None:
    """Random long tokens over single bytes: runs where the terminal may end pass nodes without
    a child that may follow, so the walk goes several bytes before it needs chart sets."""
    tokens = sorted(set(words) | {bytes([b]) for b in ALPHABET})
    eos = len(tokens)
    vocab = Vocabulary([*tokens, b"<eos>"], eos_token_ids=[eos], special_token_ids=[eos])
    limits = Limits(max_boundary_nodes=1, min_head_index_nodes=1 if indexed else 1_000_000)
    walk_and_compare(GRAMMARS[name], limits, tokens, vocab, choices)


@pytest.mark.parametrize("limits", sorted(LIMITS))
def test_deep_call_masks_match_oracle(limits: str) -> None:
    """Inside nested calls, where the walks are longest (the C-like grammar's slow masks)."""
    grammar = parse_ebnf(CALLS)
    oracle = Oracle(grammar)
    matcher = Matcher(Compiler(VOCAB, limits=LIMITS[limits]).grammar(grammar))
    prefix = b""
    for piece in (b"ab(", b"a, b", b"(ba(", b" a", b"b"):
        assert matcher.accept_bytes(piece)
        prefix += piece
        expected = oracle.mask(prefix, VOCAB.tokens, special_ids=[EOS], eos_ids=[EOS])
        assert set(matcher.allowed_tokens().tolist()) == expected, prefix
