"""Counted terminals (``prefix item{m,n} suffix`` run with a counter): engine == oracle.

The engine lowers long repetitions to a loop automaton plus a counter
(``cpp/include/tokensieve/counted.hpp``) and shares token-index entries between counts far
from the bounds; the oracle unrolls the repetition. ``min_counted_repeat=1`` makes every
repetition a candidate, and the vocabulary's tokens are at most three bytes long, so bounds
of a few items already exercise the "far" entries, the entries near each bound, and the
fallbacks (items that are not prefix-free, suffixes that start like the item).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.differential.test_random_grammars import EOS, TOKENS, VOCAB, byte_sets, walk_and_compare
from tests.oracle import Oracle
from tokensieve import Compiler, Limits, Matcher, Vocabulary
from tokensieve.frontends.json_schema.strings import ANY_CHAR
from tokensieve.ir import Alt, Expr, Grammar, Ref, Repeat, Seq, codepoints, literal

COUNTED = Limits(min_counted_repeat=1)


def items() -> st.SearchStrategy[Expr]:
    """Mostly prefix-free items (a byte set, fixed words, a set of equal-length words), and
    sometimes ones that are not (``a`` | ``ab``), which must fall back to the parser."""
    words = st.lists(st.text("abc", min_size=1, max_size=2), min_size=1, max_size=3)
    return st.one_of(
        byte_sets(),
        byte_sets(),
        words.map(lambda ws: Alt(tuple(literal(w) for w in ws))),
        st.sampled_from(["ab", "ba", "abc"]).map(literal),
    )


def pieces() -> st.SearchStrategy[Expr]:
    """Prefixes and suffixes: empty, a word, a byte set, or a short repetition."""
    return st.one_of(
        st.just(Seq(())),
        st.text("abc", min_size=1, max_size=2).map(literal),
        byte_sets(),
        byte_sets().map(lambda b: Repeat(b, 0, 2)),
    )


def grammars() -> st.SearchStrategy[Grammar]:
    def build(prefix: Expr, item: Expr, lo: int, extra: int | None, suffix: Expr, nested: bool) -> Grammar:
        body = Seq((prefix, Repeat(item, lo, None if extra is None else lo + extra), suffix))
        if not nested:
            return Grammar({"root": body})
        # root ::= body | "c" root "a": the counted terminal sits inside recursion
        return Grammar({"root": Alt((body, Seq((literal("c"), Ref("root"), literal("a")))))})

    return st.builds(
        build,
        pieces(),
        items(),
        st.integers(0, 4),
        st.one_of(st.none(), st.integers(0, 9)),
        pieces(),
        st.booleans(),
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grammar=grammars(), choices=st.lists(st.tuples(st.booleans(), st.integers(0, 10**6)), max_size=14))
def test_counted_matches_oracle(grammar: Grammar, choices: list[tuple[bool, int]]) -> None:
    walk_and_compare(grammar, choices, COUNTED)


def _counted_terminals(grammar: Grammar, limits: Limits) -> int:
    compiled = Compiler(VOCAB, limits=limits).grammar(grammar)
    return compiled.stats.counted_terminals


@pytest.mark.parametrize(
    ("item", "counted"),
    [
        (literal("ab"), True),
        (Alt((literal("a"), literal("bc"))), True),
        (Alt((literal("a"), literal("ab"))), False),  # "a" is a prefix of "ab": not prefix-free
    ],
)
def test_which_repetitions_are_counted(item: Expr, counted: bool) -> None:
    grammar = Grammar({"root": Seq((literal("c"), Repeat(item, 2, 40), literal("c")))})
    assert _counted_terminals(grammar, COUNTED) == (1 if counted else 0)
    # Below the threshold the same repetition is an ordinary automaton.
    assert _counted_terminals(grammar, Limits(min_counted_repeat=41)) == 0


def test_bounds_are_exact_far_from_the_token_length() -> None:
    """A bound far beyond the longest token (3 bytes): accept exactly 2..40 items, with the
    masks near each bound, and the same language without a counter."""
    grammar = Grammar({"root": Seq((literal("c"), Repeat(literal("ab"), 2, 40), literal("c")))})
    for limits in (COUNTED, Limits()):
        compiled = Compiler(VOCAB, limits=limits).grammar(grammar)
        for n in (0, 1, 2, 3, 39, 40, 41):
            m = Matcher(compiled)
            ok = m.accept_bytes(b"c" + b"ab" * n + b"c")
            assert ok == (2 <= n <= 40), (limits, n)
            assert not ok or m.is_accepting()
        m = Matcher(compiled)
        assert m.accept_bytes(b"c" + b"ab" * 39 + b"a")
        allowed = {TOKENS[t] for t in m.allowed_tokens().tolist() if t != EOS}
        # one more "b" completes item 40; then only the closing "c" fits
        assert allowed == {b"b", b"bc"}


# JSON string characters: the token slice's characters are counted as items (no walk at the
# boundary state). A vocabulary of JSON-ish pieces, with "é" split across tokens too.
JSON_PIECES = [b"a", b"n", b'"', b"\\", b"\xc3", b"\xa9", "é".encode(), b"u", b"0"]
JSON_TOKENS = sorted(
    {a + b + c for a in JSON_PIECES for b in [b"", *JSON_PIECES] for c in [b"", *JSON_PIECES]}
)
JSON_VOCAB = Vocabulary(
    [*JSON_TOKENS, b"<eos>"], eos_token_ids=[len(JSON_TOKENS)], special_token_ids=[len(JSON_TOKENS)]
)


def walk_json_vocab(grammar: Grammar, limits: Limits, choices: list[tuple[bool, int]]) -> None:
    """Walks JSON_VOCAB tokens through the engine and the oracle side by side: at each step
    the masks must be equal, then a token is taken (an allowed one or any, by `choices`)."""
    compiled = Compiler(JSON_VOCAB, limits=limits).grammar(grammar)
    oracle = Oracle(grammar)
    matcher = Matcher(compiled)
    eos = len(JSON_TOKENS)
    accepted: list[bytes] = []
    for pick_allowed, r in [*choices, (False, eos)]:
        expected = oracle.mask(accepted, JSON_VOCAB.tokens, special_ids=[eos], eos_ids=[eos])
        assert set(matcher.allowed_tokens().tolist()) == expected, accepted
        t = sorted(expected)[r % len(expected)] if pick_allowed else r % JSON_VOCAB.size
        assert matcher.accept_token(t) == (t in expected)
        if t not in expected or t == eos:
            break
        accepted.append(JSON_TOKENS[t])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lo=st.integers(0, 3),
    extra=st.one_of(st.none(), st.integers(0, 8)),
    choices=st.lists(st.tuples(st.booleans(), st.integers(0, 10**6)), max_size=12),
)
def test_json_string_lengths_match_oracle(
    lo: int, extra: int | None, choices: list[tuple[bool, int]]
) -> None:
    quote = literal('"')
    grammar = Grammar(
        {"root": Seq((quote, Repeat(ANY_CHAR, lo, None if extra is None else lo + extra), quote))}
    )
    bound = lo if extra is None else lo + extra
    compiled = Compiler(JSON_VOCAB, limits=COUNTED).grammar(grammar)
    assert compiled.stats.counted_terminals == (1 if bound >= 1 else 0)
    walk_json_vocab(grammar, COUNTED, choices)


# The token slice decides by character count where it can (token_index.hpp, char_horizon):
# a short maxLength string is a chain of DFA states whose slice tokens stay inside up to the
# characters left, and the items of a counted list of strings take the slice while inside
# one string. Both against the oracle, with the tokens that cross a quote walked as usual.
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lo=st.integers(0, 3),
    extra=st.integers(0, 6),
    counted=st.booleans(),
    choices=st.lists(st.tuples(st.booleans(), st.integers(0, 10**6)), max_size=12),
)
def test_bounded_strings_take_slice_by_length(
    lo: int, extra: int, counted: bool, choices: list[tuple[bool, int]]
) -> None:
    quote = literal('"')
    string = Seq((quote, Repeat(ANY_CHAR, lo, lo + extra), quote))
    grammar = Grammar({"root": Seq((string, Alt((literal("a"), literal("\\u")))))})
    walk_json_vocab(grammar, COUNTED if counted else Limits(), choices)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    max_len=st.one_of(st.none(), st.integers(1, 4)),
    lo=st.integers(0, 2),
    extra=st.integers(0, 6),
    choices=st.lists(st.tuples(st.booleans(), st.integers(0, 10**6)), max_size=16),
)
def test_counted_lists_of_strings_match_oracle(
    max_len: int | None, lo: int, extra: int, choices: list[tuple[bool, int]]
) -> None:
    quote = literal('"')
    string = Seq((quote, Repeat(ANY_CHAR, 0, max_len), quote))
    # "u" [ "n" ... ] "0": brackets and commas spelled with bytes the vocabulary has
    items = Repeat(Seq((literal("n"), string)), lo, lo + extra)
    grammar = Grammar({"root": Seq((literal("u"), string, items, literal("0")))})
    walk_json_vocab(grammar, COUNTED, choices)


def test_slice_horizon_follows_strings_that_loop() -> None:
    """ASCII characters loop where a string starts, one non-ASCII character may follow, then
    only the quote. Two-character plain strings then live ("aa") or die ("éa"): their slice
    tokens must be walked, not taken by length. A horizon search that stops following the
    looping strings (they come back to a state it has seen) must not conclude from the rest
    alone that every two-character string dies."""
    quote = literal('"')
    ascii_text = Repeat(codepoints([(0x20, 0x21), (0x23, 0x5B), (0x5D, 0x7F)]), 0, None)
    non_ascii = Repeat(codepoints([(0x80, 0x10FFFF)]), 0, 1)
    grammar = Grammar({"root": Seq((quote, ascii_text, non_ascii, quote))})
    quote_id = JSON_TOKENS.index(b'"')
    walk_json_vocab(grammar, Limits(), [(False, quote_id), (True, 0), (True, 7)])
    matcher = Matcher(Compiler(JSON_VOCAB).grammar(grammar))
    assert matcher.accept_token(quote_id)
    allowed = {JSON_TOKENS[t] for t in matcher.allowed_tokens().tolist() if t < len(JSON_TOKENS)}
    assert b"aa" in allowed and "é".encode() + b"a" not in allowed
