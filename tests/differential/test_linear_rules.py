"""Left-linear rule systems (``LabeledGraph.to_rules``) and large chart sets: engine == oracle.

A string pattern with a length bound whose automaton is too large for the byte level becomes
one rule per state, left-linear, so every item keeps the origin where the string began; the
start of such a string predicts every rule, and completions into that set go through the
matcher's index of items by the symbol they wait on (``Matcher::WaitIndex``, for sets of 48
items and more). Here a cycle of 50 to 70 states over ``ab`` (accepting from a few on; a
cycle, so that the rules are recursive and stay rules) sits between two ``c``s, sometimes
inside recursion, with the three-letter vocabulary of the random grammar tests.

The chain can also share its large start set with an ``Unordered`` (members in any order):
then completing a member goes through the index's dynamic half, items of the ``Unordered``
waiting by the members their state expects.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.differential.test_random_grammars import walk_and_compare
from tokensieve.frontends.json_schema.labeled import LabeledGraph
from tokensieve.ir import Alt, Bytes, Expr, Grammar, Ref, Seq, Unordered, literal


def chain_grammar(
    length: int, first_accepting: int, nested: bool, members: list[str] | None = None
) -> Grammar:
    """``c chain c`` (or ``c (chain | members in any order) c``), optionally after ``a``s."""
    ab = Bytes.of([(97, 98)])
    edges: list[dict[int, Expr]] = [{i + 1: ab} for i in range(length - 1)] + [{1: literal("b")}]
    graph = LabeledGraph(edges, [i >= first_accepting for i in range(length)])
    grammar = Grammar(start="root")
    body = graph.to_rules(grammar, "chain")
    if members:
        for i, word in enumerate(members):
            grammar.rules[f"member{i}"] = literal(word)
        refs = tuple(Ref(f"member{i}") for i in range(len(members)))
        body = Alt((body, Unordered(refs, literal("c"), frozenset({0}), None, 1, None)))
    inner = Seq((literal("c"), body, literal("c")))
    grammar.rules["root"] = Alt((inner, Seq((literal("a"), Ref("root"))))) if nested else inner
    return grammar


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    length=st.integers(50, 70),
    first_accepting=st.integers(0, 5),
    nested=st.booleans(),
    picks=st.lists(st.integers(0, 10**6), max_size=30),
)
def test_left_linear_chains_match_oracle(
    length: int, first_accepting: int, nested: bool, picks: list[int]
) -> None:
    # Always an allowed token: the walk gets deep into the chain, where completions happen.
    walk_and_compare(chain_grammar(length, first_accepting, nested), [(True, r) for r in picks])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    length=st.integers(50, 60),
    members=st.lists(st.text(alphabet="ab", min_size=1, max_size=3), min_size=1, max_size=4, unique=True),
    nested=st.booleans(),
    picks=st.lists(st.integers(0, 10**6), max_size=30),
)
def test_unordered_in_a_large_set_matches_oracle(
    length: int, members: list[str], nested: bool, picks: list[int]
) -> None:
    walk_and_compare(chain_grammar(length, 3, nested, members), [(True, r) for r in picks])
