"""Suffix groups (``SuffixGroups`` in ``cpp/include/tokensieve/token_index.hpp``): engine == oracle.

Where a terminal may end part-way through tokens at more than ``Limits.max_boundary_nodes``
vocabulary-trie nodes (256 by default), a token-index entry keeps the tokens' suffixes after
those points grouped by first byte, and builds a group's trie only when the parser allows that
byte after the terminal. The random-grammar vocabularies are too small to get past 256, so the
differential tests here set the limit to 1: every entry with two or more such nodes groups its
suffixes, on the same random grammars (plain and counted) as the other differential tests.
"""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.differential import test_counted, test_random_grammars
from tests.differential.test_random_grammars import walk_and_compare
from tests.oracle import Oracle
from tokensieve import Compiler, Limits, Matcher, Vocabulary
from tokensieve.ir import Alt, Bytes, Grammar, Ref, Repeat, Seq, literal

GROUPED = Limits(max_boundary_nodes=1)
GROUPED_COUNTED = Limits(max_boundary_nodes=1, min_counted_repeat=1)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    grammar=test_random_grammars.grammars,
    choices=st.lists(st.tuples(st.booleans(), st.integers(0, 10**6)), max_size=10),
)
def test_grouped_suffixes_match_oracle(grammar: Grammar, choices: list[tuple[bool, int]]) -> None:
    walk_and_compare(grammar, choices, GROUPED)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    grammar=test_counted.grammars(),
    choices=st.lists(st.tuples(st.booleans(), st.integers(0, 10**6)), max_size=14),
)
def test_grouped_suffixes_of_counted_terminals_match_oracle(
    grammar: Grammar, choices: list[tuple[bool, int]]
) -> None:
    walk_and_compare(grammar, choices, GROUPED_COUNTED)


def test_default_limit_groups_an_open_ended_terminal() -> None:
    """With the default limit: ``[abc]*`` before a recursive rule may end at 363 nodes of a
    vocabulary of every string of one to six letters over ``abc``; the scan's description
    reports the group roots, and the mask is exact."""
    tokens = [bytes(p) for n in range(1, 7) for p in itertools.product(b"abc", repeat=n)]
    eos = len(tokens)
    vocab = Vocabulary([*tokens, b"<eos>"], eos_token_ids=[eos], special_token_ids=[eos])
    tail = Alt((literal("b"), Seq((literal("c"), Ref("tail"), literal("a")))))
    grammar = Grammar({"root": Seq((Repeat(Bytes.of([(97, 99)]), 0, None), Ref("tail"))), "tail": tail})
    matcher = Matcher(Compiler(vocab).grammar(grammar))
    assert matcher.accept_token(tokens.index(b"ab"))
    rows = matcher._m.describe_scans()
    assert any(len(row) > 6 and row[5] > 0 for row in rows), rows
    expected = Oracle(grammar).mask([b"ab"], tokens, special_ids=[eos], eos_ids=[eos])
    assert set(matcher.allowed_tokens().tolist()) == expected
