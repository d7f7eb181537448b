"""``Difference`` of regular languages: engine masks == oracle masks, token for token.

The engine determinizes both operands natively and takes their product (OP_DIFFERENCE in
``cpp/src/dfa_difference.cpp``); the oracle runs its own subset construction.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.differential.test_random_grammars import VOCAB, automata, byte_sets, walk_and_compare
from tests.oracle import Oracle
from tokensieve import GrammarSyntaxError
from tokensieve.compiler import Compiler
from tokensieve.ir import Alt, Difference, Expr, Grammar, Ref, Repeat, Seq, literal
from tokensieve.matcher import Matcher


def regular() -> st.SearchStrategy[Expr]:
    leaves = st.one_of(byte_sets(), byte_sets(), st.sampled_from([Seq(()), Alt(())]), automata())

    def extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
        return st.one_of(
            st.lists(children, min_size=1, max_size=3).map(lambda xs: Seq(tuple(xs))),
            st.lists(children, min_size=1, max_size=3).map(lambda xs: Alt(tuple(xs))),
            st.tuples(children, st.integers(0, 2), st.one_of(st.none(), st.integers(0, 2))).map(
                lambda t: Repeat(t[0], t[1], None if t[2] is None else t[1] + t[2])
            ),
            st.tuples(children, children).map(lambda t: Difference(*t)),  # nested differences
        )

    return st.recursive(leaves, extend, max_leaves=6)


def grammars() -> st.SearchStrategy[Grammar]:
    """A Difference alone, or inside a recursive rule (so it is a terminal of a CFG)."""

    def build(left: Expr, right: Expr, nested: bool) -> Grammar:
        diff = Difference(left, right)
        if not nested:
            return Grammar({"root": diff})
        # root ::= diff | "(" root ")" : the difference sits inside a context-free skeleton
        return Grammar({"root": Alt((diff, Seq((literal("a"), Ref("root"), literal("b")))))})

    return st.builds(build, regular(), regular(), st.booleans())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grammar=grammars(), choices=st.lists(st.tuples(st.booleans(), st.integers(0, 10**6)), max_size=8))
def test_difference_matches_oracle(grammar: Grammar, choices: list[tuple[bool, int]]) -> None:
    walk_and_compare(grammar, choices)


def test_words_minus_words() -> None:
    words = Alt((literal("ab"), literal("abc"), literal("b")))
    grammar = Grammar({"root": Difference(words, literal("abc"))})
    oracle = Oracle(grammar)
    matcher = Matcher(Compiler(VOCAB).grammar(grammar))
    assert oracle.is_complete(b"ab") and not oracle.is_complete(b"abc")
    assert matcher.accept_bytes(b"ab") and matcher.is_accepting()
    assert not matcher.accept_bytes(b"c")


def test_non_regular_operand_is_an_error() -> None:
    grammar = Grammar(
        {"root": Difference(Ref("r"), literal("a")), "r": Alt((literal("a"), Seq((literal("a"), Ref("r")))))}
    )
    with pytest.raises(GrammarSyntaxError, match="regular"):
        Compiler(VOCAB).grammar(grammar)


def test_nested_difference_keeps_split_byte_ranges() -> None:
    # Inside a larger program the product is re-encoded as an automaton whose edge labels
    # join the byte ranges of several classes: {a, c} must not become a..c.
    a_or_c = Alt((literal("a"), literal("c")))
    grammar = Grammar({"root": Seq((Difference(a_or_c, literal("x")), literal("b")))})
    compiled = Compiler(VOCAB).grammar(grammar)
    for text, ok in ((b"ab", True), (b"cb", True), (b"bb", False)):
        matcher = Matcher(compiled)
        assert (matcher.accept_bytes(text) and matcher.is_accepting()) == ok, text
