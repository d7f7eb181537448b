"""``CountedAutomaton``: a path of min..max *units* through an automaton, run by a counted
terminal (``CountedTerminal.from_units``); engine masks == oracle masks, token for token.

Units are one or two letters; the units leaving a state start with different letters, so they
are prefix-free and disjoint, as the JSON Schema front-end's character spellings are.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.differential.test_random_grammars import ALPHABET, VOCAB, byte_sets, walk_and_compare
from tokensieve import Compiler, EmptyLanguageError, LimitExceeded, Matcher
from tokensieve.ir import Alt, Bytes, CountedAutomaton, Expr, Grammar, Ref, Seq, literal


def counted_automata() -> st.SearchStrategy[CountedAutomaton]:
    def build(n: int, spec: list[tuple[bool, list[tuple[int, bool, Expr, int]]]], lo: int, extra: int | None):
        units = []
        for s in range(n):
            accepting, edges = spec[s % len(spec)]
            row, used = [], set()
            for first, two_bytes, second, target in edges:
                byte = ALPHABET[first % len(ALPHABET)]
                if byte in used:
                    continue
                used.add(byte)
                head = Bytes.of([(byte, byte)])
                row.append((Seq((head, second)) if two_bytes else head, target % n))
            units.append((accepting, tuple(row)))
        return CountedAutomaton(tuple(units), lo, None if extra is None else lo + extra)

    edge = st.tuples(st.integers(0, 2), st.booleans(), byte_sets(), st.integers(0, 3))
    state = st.tuples(st.booleans(), st.lists(edge, max_size=3))
    return st.builds(
        build,
        st.integers(1, 4),
        st.lists(state, min_size=1, max_size=4),
        st.integers(0, 4),
        st.one_of(st.none(), st.integers(0, 6)),
    )


def grammars() -> st.SearchStrategy[Grammar]:
    """The automaton alone, between neighbours that may join its terminal, or in a recursion."""

    def build(counted: CountedAutomaton, shape: int) -> Grammar:
        if shape == 0:
            return Grammar({"root": counted})
        if shape == 1:
            return Grammar({"root": Seq((literal("c"), counted, literal("a")))})
        return Grammar({"root": Alt((counted, Seq((literal("a"), Ref("root"), literal("b")))))})

    return st.builds(build, counted_automata(), st.integers(0, 2))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grammar=grammars(), choices=st.lists(st.tuples(st.booleans(), st.integers(0, 10**6)), max_size=10))
def test_counted_automata_match_oracle(grammar: Grammar, choices: list[tuple[bool, int]]) -> None:
    try:
        Compiler(VOCAB).grammar(grammar)
    except LimitExceeded:
        assume(False)  # an automaton whose lengths never settle: no counter runs it
    except EmptyLanguageError:
        pass  # walk_and_compare checks that the oracle agrees
    walk_and_compare(grammar, choices)


def test_lengths_are_counted_in_units() -> None:
    # "ab" is one unit, "c" another: 2..3 units, not bytes.
    ab, c = Seq((literal("a"), literal("b"))), literal("c")
    counted = CountedAutomaton(((True, ((ab, 0), (c, 0))),), 2, 3)
    matcher_grammar = Compiler(VOCAB).grammar(Grammar({"root": counted}))
    for text, ok in ((b"abab", True), (b"abcab", True), (b"cccc", False), (b"ab", False), (b"abcabc", False)):
        m = Matcher(matcher_grammar)
        accepted = m.accept_bytes(text) and m.is_accepting()
        assert accepted == ok, text


def test_lengths_that_never_settle_are_refused() -> None:
    # (aa)* has even lengths only: R_k alternates forever, and no counter runs it.
    a = literal("a")
    counted = CountedAutomaton(((True, ((a, 1),)), (False, ((a, 0),))), 0, 40)
    with pytest.raises(LimitExceeded):
        Compiler(VOCAB).grammar(Grammar({"root": counted}))
