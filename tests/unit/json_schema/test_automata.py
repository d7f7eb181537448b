"""Byte automata: intersection, difference, minimization and the way back to the IR."""

from __future__ import annotations

import itertools

import pytest

from tests.oracle import Oracle
from tokensieve.frontends.json_schema.automata import dfa_from_expr, utf8_strings
from tokensieve.frontends.json_schema.digits import fixed_width
from tokensieve.frontends.regex import parse_regex
from tokensieve.ir import Grammar

WORDS = ["".join(p) for n in range(5) for p in itertools.product("ab", repeat=n)]


def _accepts(dfa, word: str) -> bool:  # type: ignore[no-untyped-def]
    s = 0
    for b in word.encode():
        s = next((t for lo, hi, t in dfa.trans[s] if lo <= b <= hi), -1)
        if s < 0:
            return False
    return dfa.accept[s]


def test_operations_match_set_semantics() -> None:
    x = dfa_from_expr(parse_regex("a*b?"))
    y = dfa_from_expr(parse_regex("(ab|ba)*"))
    for w in WORDS:
        in_x, in_y = _accepts(x, w), _accepts(y, w)
        assert _accepts(x.intersect(y), w) == (in_x and in_y)
        assert _accepts(x.union(y), w) == (in_x or in_y)
        assert _accepts(x.minus(y), w) == (in_x and not in_y)
        assert _accepts(x.complement(), w) == (not in_x)


def test_minimization_merges_equivalent_states() -> None:
    # (a|b)*a(a|b) needs 4 states when minimal, whatever the construction.
    assert dfa_from_expr(parse_regex("(a|b)*a(a|b)")).size == 4
    assert dfa_from_expr(parse_regex("x{0,50}")).size == 51


def test_back_to_ir_expression_and_automaton() -> None:
    dfa = dfa_from_expr(parse_regex("(a|b)*abb")).intersect(dfa_from_expr(parse_regex("a.{0,5}")))
    for expr in (dfa.labeled().to_expr(), dfa.labeled().to_automaton()):
        oracle = Oracle(Grammar({"root": expr}))
        for w in WORDS + ["aabb", "abbabb", "aaabb"]:
            assert oracle.is_complete(w.encode()) == _accepts(dfa, w), w


def test_complement_stays_within_utf8() -> None:
    dfa = utf8_strings().minus(dfa_from_expr(parse_regex("é")))
    assert _accepts(dfa, "e") and not _accepts(dfa, "é")
    assert not any(lo <= 0xC0 <= hi for lo, hi, _ in dfa.trans[0])  # never an overlong lead byte


def test_fixed_width_digit_ranges_are_exact() -> None:
    for lo, hi in [(0, 999), (7, 7), (13, 987), (100, 199), (5, 1234)]:
        width = len(str(hi))
        seqs = fixed_width(lo, hi, width)
        covered = set()
        for digits in seqs:
            for combo in itertools.product(*(range(a, b + 1) for a, b in digits)):
                covered.add(int("".join(map(str, combo))))
        assert covered == set(range(lo, hi + 1))


def test_automata_are_remembered_per_expression_object() -> None:
    expr = parse_regex("[a-z]{3}")
    first = dfa_from_expr(expr)
    assert dfa_from_expr(expr) is first
    assert dfa_from_expr(parse_regex("[a-z]{3}")) is not first  # another object, built again
    with pytest.raises(OverflowError):  # the remembered automaton still obeys the limit
        dfa_from_expr(expr, max_states=2)


def test_right_linear_rules_get_distinct_names() -> None:
    grammar = Grammar()
    graph = dfa_from_expr(parse_regex("(ab|c)+")).labeled()
    first, second = graph.to_rules(grammar, "x"), graph.to_rules(grammar, "x")
    assert first != second
    names = [n for n in grammar.rules if n.startswith("x")]
    assert len(names) == 2 * len(graph.accept)
    for ref in (first, second):
        grammar.rules["root"] = ref
        oracle = Oracle(grammar)
        assert oracle.is_complete(b"abcab") and not oracle.is_complete(b"abb")
