"""Rule sets shared by grammars are lowered once and spliced (``lower.Fragment``): the spliced
grammar's masks equal the oracle's, and only recurring rule bodies are spliced."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.differential.test_random_grammars import VOCAB, walk_and_compare
from tokensieve.compiler.compiled import TerminalCache
from tokensieve.compiler.lower import Fragment, lower
from tokensieve.ir import Alt, Grammar, Ref, Repeat, Seq, Special, Unordered, literal
from tokensieve.limits import Limits


def _shared_body() -> Any:
    """A recursive rule ``v`` with an Unordered node and a special token inside: what a splice
    must relocate (nonterminals, Unordered rows, terminals, special tokens)."""
    pair = Unordered(
        items=(Seq((literal("a"), Ref("v"))), literal("b")),
        separator=literal("c"),
        required=frozenset({1}),
    )
    return Alt((literal("ab"), Seq((literal("c"), Ref("v"), literal("c"))), pair, Special(VOCAB.size - 1)))


SHARED = _shared_body()


def _grammar(prefix: str) -> Grammar:
    return Grammar({"root": Seq((literal(prefix), Repeat(Ref("v"), 1, 2))), "v": SHARED})


class _Store:
    """A fragment store that counts what it makes."""

    def __init__(self) -> None:
        self.entries: dict[tuple[Any, ...], Fragment] = {}
        self.made = 0

    def __call__(self, key: tuple[Any, ...], make: Callable[[], Fragment]) -> Fragment:
        if key not in self.entries:
            self.entries[key] = make()
            self.made += 1
        return self.entries[key]


def test_only_recurring_bodies_are_spliced_and_then_made_once() -> None:
    limits = Limits()
    cache = TerminalCache(VOCAB, limits)
    store = _Store()
    fresh = Grammar({"root": Seq((literal("a"), Ref("v"))), "v": _shared_body()})  # a new body object
    lower(fresh, cache.get, limits, cache.get_counted, cache.get_counted_units, fragments=store)
    assert store.made == 0  # never seen before: lowered in place
    results = []
    for prefix in ("a", "b", "ab"):
        results.append(lower(_grammar(prefix), cache.get, limits, cache.get_counted, fragments=store))
    assert store.made == 1  # the first grammar analysed v; the second made its fragment; the third reused it
    plain = lower(_grammar("ab"), cache.get, limits, cache.get_counted)
    spliced = results[-1]
    assert len(spliced.productions) == len(plain.productions)
    assert len(spliced.unordered) == len(plain.unordered) == 1
    assert sorted(map(type, spliced.terminals), key=str) == sorted(map(type, plain.terminals), key=str)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    prefix=st.sampled_from(["a", "b", "c", "ba"]),
    choices=st.lists(st.tuples(st.booleans(), st.integers(0, 10**6)), max_size=10),
)
def test_spliced_grammars_match_the_oracle(prefix: str, choices: list[tuple[bool, int]]) -> None:
    for warm in ("a", "b"):  # the Compiler's store: the body recurs, the fragment is made and reused
        walk_and_compare(_grammar(warm), [])
    assert any(key[0] == "fragment" for key in TerminalCache.shared(VOCAB, Limits())._entries)
    walk_and_compare(_grammar(prefix), choices)
