"""Hypothesis-generated grammars and inputs: engine masks == oracle masks, token for token.

Grammars are random IR over a three-letter alphabet with recursion, nullable rules, left
recursion, bounded and unbounded repetition, ``Unordered`` item sets, special tokens, seams; the
vocabulary is every string of one to three letters plus specials, so token boundaries fall
everywhere.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.oracle import Oracle
from tokensieve import EmptyLanguageError, NoTokenAllowed
from tokensieve.compiler import Compiler
from tokensieve.ir import Alt, Automaton, Bytes, Expr, Grammar, Ref, Repeat, Seam, Seq, Special, Unordered
from tokensieve.limits import Limits
from tokensieve.matcher import Matcher
from tokensieve.vocabulary import Vocabulary

ALPHABET = b"abc"
TOKENS = [bytes(p) for n in (1, 2, 3) for p in itertools.product(ALPHABET, repeat=n)]
EOS = len(TOKENS)
SPECIAL = EOS + 1
VOCAB = Vocabulary([*TOKENS, b"<eos>", b"<sp>"], eos_token_ids=[EOS], special_token_ids=[EOS, SPECIAL])
RULES = ["r0", "r1", "r2"]


def byte_sets() -> st.SearchStrategy[Expr]:
    return st.sets(st.sampled_from(ALPHABET), min_size=1, max_size=3).map(
        lambda s: Bytes.of((b, b) for b in s)
    )


def automata() -> st.SearchStrategy[Expr]:
    """Small automata given directly (the Automaton node, OP_AUTOMATON in the DFA builder)."""

    def build(n: int, accepting: list[bool], edges: list[tuple[int, int, int]]) -> Expr:
        rows: list[list[tuple[Bytes, int]]] = [[] for _ in range(n)]
        for src, byte, dst in edges:
            rows[src % n].append((Bytes.of([(byte, byte)]), dst % n))
        return Automaton.of([(accepting[i % len(accepting)], tuple(rows[i])) for i in range(n)])

    return st.builds(
        build,
        st.integers(1, 3),
        st.lists(st.booleans(), min_size=1, max_size=3),
        st.lists(st.tuples(st.integers(0, 2), st.sampled_from(ALPHABET), st.integers(0, 2)), max_size=6),
    )


def exprs() -> st.SearchStrategy[Expr]:
    # Byte sets dominate so that most languages are non-trivial; the rarer leaves cover the
    # empty string, the empty language and special tokens.
    leaves = st.one_of(
        byte_sets(),
        byte_sets(),
        byte_sets(),
        st.sampled_from(RULES).map(Ref),
        st.sampled_from([Seq(()), Alt(()), Special(SPECIAL), Seam()]),
        automata(),
    )

    def extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
        bounds = st.tuples(st.integers(0, 2), st.one_of(st.none(), st.integers(0, 3))).filter(
            lambda b: b[1] is None or b[1] >= b[0]
        )
        return st.one_of(
            st.lists(children, min_size=1, max_size=3).map(lambda xs: Seq(tuple(xs))),
            st.lists(children, min_size=1, max_size=3).map(lambda xs: Alt(tuple(xs))),
            st.tuples(children, bounds).map(lambda t: Repeat(t[0], t[1][0], t[1][1])),
            unordered(children),
        )

    return st.recursive(leaves, extend, max_leaves=8)


def unordered(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    """Unordered item sets; items, the repeatable item and the separator start with a byte
    (they must not derive the empty string)."""
    solid = st.tuples(byte_sets(), children).map(lambda t: Seq(t))

    def build(
        items: list[Expr], sep: Expr, required: list[int], rest: Expr | None, lo: int, extra: int | None
    ) -> Expr:
        hi = None if extra is None else lo + extra
        return Unordered(tuple(items), sep, frozenset(r % len(items) for r in required), rest, lo, hi)

    return st.builds(
        build,
        st.lists(solid, min_size=1, max_size=4),
        st.one_of(byte_sets(), solid),
        st.lists(st.integers(0, 3), max_size=2),
        st.one_of(st.none(), solid),
        st.integers(0, 2),
        st.one_of(st.none(), st.integers(0, 3)),
    )


grammars = st.lists(exprs(), min_size=3, max_size=3).map(
    lambda bodies: Grammar(rules=dict(zip(RULES, bodies, strict=True)), start="r0")
)
inputs = st.lists(st.integers(0, len(TOKENS) + 1), min_size=0, max_size=8)


def pieces_of(token_ids: list[int]) -> list[bytes | int]:
    return [TOKENS[t] if t < len(TOKENS) else t for t in token_ids]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grammar=grammars, choices=st.lists(st.tuples(st.booleans(), st.integers(0, 10**6)), max_size=10))
def test_engine_matches_oracle(grammar: Grammar, choices: list[tuple[bool, int]]) -> None:
    walk_and_compare(grammar, choices)


def walk_and_compare(grammar: Grammar, choices: list[tuple[bool, int]], limits: Limits | None = None) -> None:
    """Walk the language (mostly allowed tokens, sometimes any token) comparing every mask,
    the accepting flag and the accept decision with the oracle."""
    oracle = Oracle(grammar)
    compiler = Compiler(VOCAB, limits=limits)
    if oracle.is_empty_language:
        with pytest.raises(EmptyLanguageError):
            compiler.grammar(grammar)
        return
    matcher = Matcher(compiler.grammar(grammar))
    accepted: list[int] = []
    for pick_allowed, r in [*choices, (False, EOS)]:
        expected = oracle.mask(pieces_of(accepted), VOCAB.tokens, special_ids=[EOS, SPECIAL], eos_ids=[EOS])
        if expected:
            got = set(matcher.allowed_tokens().tolist())
        else:
            with pytest.raises(NoTokenAllowed):
                matcher.allowed_tokens()
            got = set()
        assert got == expected, f"prefix {pieces_of(accepted)!r}"
        assert matcher.is_accepting() == oracle.is_complete(pieces_of(accepted))
        t = sorted(expected)[r % len(expected)] if pick_allowed and expected else r % VOCAB.size
        ok = matcher.accept_token(t)
        assert ok == (t in expected)
        if not ok:
            break
        accepted.append(t)
        if t == EOS:
            assert matcher.is_terminated()
            break


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grammar=grammars, token_ids=inputs, data=st.data())
def test_rollback_and_fork_equal_fresh_matcher(
    grammar: Grammar, token_ids: list[int], data: st.DataObject
) -> None:
    compiler = Compiler(VOCAB)
    if Oracle(grammar).is_empty_language:
        return
    compiled = compiler.grammar(grammar)
    matcher = Matcher(compiled)
    accepted: list[int] = []
    for t in token_ids:
        if matcher.is_terminated():
            break
        if matcher.accept_token(t):
            accepted.append(t)
        if accepted and data.draw(st.booleans()):
            n = data.draw(st.integers(1, len(accepted)))
            fork = matcher.fork()
            matcher.rollback(n)
            del accepted[len(accepted) - n :]
            fresh = Matcher(compiled)
            assert fresh.accept_tokens(accepted) == len(accepted)
            assert _mask(matcher) == _mask(fresh)
            assert matcher.is_accepting() == fresh.is_accepting()
            # the fork kept the state before the rollback
            assert fork.num_history == len(accepted) + n


def _mask(m: Matcher) -> set[int]:
    if m.is_terminated():
        return set()
    try:
        return set(m.allowed_tokens().tolist())
    except Exception as e:  # NoTokenAllowed is a valid, comparable outcome here
        return {-1, hash(type(e))}
