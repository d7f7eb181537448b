"""How lowering spends automaton budgets (``compiler/lower.py``, ``TerminalCache.get``).

Budgets count the states of the minimized automaton; the last try before a run of regular
items is cut into pieces lets the subset construction pass through several times as many.
Pieces cut from their quotes end almost anywhere, and every first mask inside them needs the
parser at each byte: keeping a string whole is worth a larger construction.
"""

from __future__ import annotations

import pytest

import tokensieve as ts

VOCAB = ts.Vocabulary([b"a", b'"', b"/", b":", b"<eos>"], eos_token_ids=[4], special_token_ids=[4])


def test_a_uri_reference_string_is_one_terminal_with_its_quotes() -> None:
    # Its subset construction once passed 8,000 states on the way to about 1,300 (fewer
    # since printable ASCII has no \u spelling): under the old rule (budget = subset states)
    # the quotes became terminals of their own and the URI's two alternatives two more, each
    # accepting after nearly every byte.
    grammar = ts.Compiler(VOCAB).json_schema({"type": "string", "format": "uri-reference"})
    assert grammar.stats.terminals == 1  # the string, with the whitespace around it


def test_a_small_budget_still_cuts_the_string() -> None:
    limits = ts.Limits(max_terminal_states=50)
    grammar = ts.Compiler(VOCAB, limits=limits).json_schema({"type": "string", "format": "uri-reference"})
    assert grammar.stats.terminals > 2
    m = ts.Matcher(grammar)
    assert m.accept_bytes(b'"a:/a"') and m.is_accepting()
    assert not ts.Matcher(grammar).accept_bytes(b'"a b"')


def test_a_long_word_count_pattern_under_max_length_runs_with_a_counter() -> None:
    # Up to 50 words in at most 500 characters: a counted automaton whose unit labels are
    # large together (the word-count graph); it has no other way to run, so no size check
    # may keep it from its counter (three MaskBench schemas failed to compile under one).
    schema = {"type": "string", "maxLength": 500, "pattern": "^(?:\\S+\\s+){0,49}\\S+$"}
    grammar = ts.Compiler(VOCAB).json_schema(schema)
    assert grammar.stats.counted_terminals >= 1


def test_a_choice_too_large_alone_is_not_tried_with_each_pair_of_neighbours() -> None:
    # `x "name" y` with 300 random names (and names with a number: not a word list, which
    # gets a larger budget): the whole run and its first group (the quotes and the names)
    # are too large, and so are the names alone, which proves every other group of them too
    # large as well: two builds at the group budget, not three.
    from array import array
    from random import Random
    from typing import Any

    from tokensieve.compiler.compiled import TerminalCache
    from tokensieve.compiler.lower import lower
    from tokensieve.ir import Bytes, Grammar, Repeat, alt, literal, seq

    rng = Random(7)
    names = sorted({"".join(rng.choice("abcdefgh") for _ in range(6)) for _ in range(300)})
    numbered = seq(literal("n"), Repeat(Bytes.of([(48, 57)]), 1, None))
    choice = alt(*(literal(n) for n in names), numbered)
    grammar = Grammar({"root": seq(literal("x"), literal('"'), choice, literal('"'), literal("y"))}, "root")
    limits = ts.Limits(max_terminal_states=50)
    cache = TerminalCache(VOCAB, limits)
    budgets: list[tuple[int, int]] = []

    def build(program: bytes, max_states: int, subset_cap: int) -> Any:
        budgets.append((max_states, len(array("i", program))))
        return cache.get(program, max_states, subset_cap)

    lowered = lower(grammar, build, limits, cache.get_counted)
    group_builds = [words for budget, words in budgets if budget == 4 * limits.max_terminal_states]
    choice_words = min(group_builds)
    assert len(group_builds) == 2 and group_builds[0] > choice_words  # the first group, then the names
    assert lowered.terminals  # and the names are still cut into pieces that fit
    m = ts.Matcher(ts.Compiler(VOCAB, limits=limits).grammar(grammar))
    assert m.accept_bytes(f'x"{names[0]}"y'.encode()) and m.is_accepting()


def test_a_word_list_is_one_terminal_under_a_larger_budget() -> None:
    # An enum's spellings: a trie as one terminal at 8x the terminal budget, rather than a
    # terminal per word (each with its own token index, all tried where the list starts).
    from random import Random

    from tokensieve.ir import Grammar, alt, literal, seq

    rng = Random(7)
    names = sorted({"".join(rng.choice("abcdefgh") for _ in range(6)) for _ in range(60)})
    grammar = Grammar({"root": seq(literal('"'), alt(*(literal(n) for n in names)), literal('"'))}, "root")
    limits = ts.Limits(max_terminal_states=50)  # the trie has about 150 states: over 50, under 400
    compiled = ts.Compiler(VOCAB, limits=limits).grammar(grammar)
    assert compiled.stats.terminals == 1
    for name in (names[0], names[-1]):
        m = ts.Matcher(compiled)
        assert m.accept_bytes(f'"{name}"'.encode()) and m.is_accepting()
    assert not ts.Matcher(compiled).accept_bytes(b'"zzz"')


def test_a_bounded_repetition_is_not_a_word_list() -> None:
    # null or a string of up to 255 letters is a finite language, but not words spelled out:
    # its automaton has a state per length, and it is a counted terminal's job. Tried as a
    # word list it would be built at the larger budget first (a Snowplow schema: 54 ms).
    from typing import Any

    from tokensieve.compiler.compiled import TerminalCache
    from tokensieve.compiler.lower import lower
    from tokensieve.ir import Bytes, Grammar, Repeat, alt, literal, seq

    letters = seq(literal('"'), Repeat(Bytes.of([(97, 122)]), 0, 255), literal('"'))
    grammar = Grammar({"root": seq(literal("["), alt(literal("null"), letters), literal("]"))}, "root")
    limits = ts.Limits(max_terminal_states=50)
    cache = TerminalCache(VOCAB, limits)
    budgets: list[int] = []

    def build(program: bytes, max_states: int, subset_cap: int) -> Any:
        budgets.append(max_states)
        return cache.get(program, max_states, subset_cap)

    lower(grammar, build, limits, cache.get_counted)
    assert 8 * limits.max_terminal_states not in budgets
    m = ts.Matcher(ts.Compiler(VOCAB, limits=limits).grammar(grammar))
    assert m.accept_bytes(b'["abc"]') and m.is_accepting()


def test_the_pieces_of_counted_terminals_are_built_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # A word-count pattern under maxLength runs as counted terminals whose unit labels (the
    # JSON spellings of \S and \s) recur in every unit and every property that uses it: each
    # distinct piece is built once, not once per use.
    from tokensieve.compiler.compiled import TerminalCache
    from tokensieve.compiler.lower import lower
    from tokensieve.frontends.json_schema import json_schema_to_grammar

    from .native_builds import record_native_builds

    built = record_native_builds(monkeypatch).programs
    words = {"type": "string", "maxLength": 200, "pattern": "^(?:\\S+\\s+){0,19}\\S+$"}
    schema = {"type": "object", "properties": {name: words for name in ("a", "b", "c")}}
    limits = ts.Limits()
    cache = TerminalCache(VOCAB, limits)
    grammar = json_schema_to_grammar(schema, property_order="any")
    lowered = lower(grammar, cache.get, limits, cache.get_counted, cache.get_counted_units)
    assert any(not isinstance(t, int) and type(t).__name__ == "CountedTerminal" for t in lowered.terminals)
    assert len(built) == len(set(built))


def test_a_length_bound_past_the_native_counter_is_no_bound() -> None:
    # "maxLength": 4294967295 (a uint32 maximum) is common; the native counter counts in int32,
    # and only an output of more than 2^31 - 1 characters could tell that bound from none.
    grammar = ts.Compiler(VOCAB).json_schema({"type": "string", "minLength": 2, "maxLength": 2**32 - 1})
    m = ts.Matcher(grammar)
    assert m.accept_token(1) and m.accept_token(0)  # "a
    assert not m.accept_token(1)  # "a" is one character short
    assert m.accept_token(0) and m.accept_token(1) and m.is_terminated() is False
    assert m.accept_token(4)  # "aa" then EOS


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "maxItems": 2**32, "items": {"type": "integer"}},
        {"type": "object", "maxProperties": 2**40},
        {"type": "object", "properties": {"a": {"type": "integer"}}, "maxProperties": 2**40},
        {"type": "array", "contains": {"type": "integer"}, "maxContains": 2**40},
    ],
)
@pytest.mark.parametrize("order", ["any", "declared"])
def test_every_upper_bound_past_int32_is_no_bound(schema: dict[str, object], order: str) -> None:
    bounded = {k: v for k, v in schema.items() if not k.startswith("max")}
    compiler = ts.Compiler(VOCAB)
    got = compiler.json_schema(schema, property_order=order)  # type: ignore[arg-type]
    assert got.stats.terminals == compiler.json_schema(bounded, property_order=order).stats.terminals  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "minLength": 2**33},
        {"type": "array", "minItems": 2**33},
        {"type": "object", "properties": {"a": {"type": "integer"}}, "minProperties": 2**40},
    ],
)
@pytest.mark.parametrize("order", ["any", "declared"])
def test_a_lower_bound_past_every_limit_is_refused_at_once(schema: dict[str, object], order: str) -> None:
    # Not a TypeError from the native counter, nor a MemoryError from a right-hand side of 2^33
    # symbols: a limit, named.
    with pytest.raises(ts.LimitExceeded) as info:
        ts.Compiler(VOCAB).json_schema(schema, property_order=order)  # type: ignore[arg-type]
    assert info.value.limit == "max_productions"


def test_a_pattern_bound_past_int32_inside_a_difference_is_no_bound() -> None:
    # "not" of a pattern becomes a difference of regular languages, whose program carries the
    # repetition's counts: an upper bound past int32 is no bound there too (it once escaped as
    # an OverflowError from packing the program).
    grammar = ts.Compiler(VOCAB).json_schema({"not": {"type": "string", "pattern": "^a{2,3000000000}$"}})
    for text, allowed in ((b'"a"', True), (b'"aa"', False), (b'"aaaaaaaa"', False), (b'"a:a"', True)):
        m = ts.Matcher(grammar)
        assert (m.accept_bytes(text) and m.is_accepting()) == allowed


def test_a_pattern_lower_bound_past_int32_inside_a_difference_is_refused_by_name() -> None:
    with pytest.raises(ts.LimitExceeded) as info:
        ts.Compiler(VOCAB).json_schema({"not": {"type": "string", "pattern": "^a{3000000000,}$"}})
    assert info.value.limit == "max_nfa_states"


def test_an_alternation_alone_between_seams_is_one_terminal_under_the_group_budget() -> None:
    # A member's value after its seam, too large for a terminal's budget: split into its
    # alternatives, every mask where it may start would walk the vocabulary through each of
    # them; it gets the larger budget a run's largest item gets with its neighbours instead.
    from tokensieve.ir import SEAM, Bytes, Grammar, Repeat, alt, literal, seq

    digits = Repeat(Bytes.of([(48, 57)]), 0, 30)
    value = alt(seq(literal("a"), digits), seq(literal("b"), digits, literal("!")))
    grammar = Grammar({"root": seq(literal("k"), SEAM, value)}, "root")
    limits = ts.Limits(max_terminal_states=40)  # each alternative fits, their union does not
    compiled = ts.Compiler(VOCAB, limits=limits).grammar(grammar)
    assert compiled.stats.terminals == 2  # "k", and the value whole
    assert ts.Matcher(compiled).accept_bytes(b"ka123") and ts.Matcher(compiled).accept_bytes(b"kb1!")
    assert not ts.Matcher(compiled).accept_bytes(b"kb1a")
    alone = ts.Compiler(VOCAB, limits=ts.Limits(max_terminal_states=10)).grammar(grammar)
    assert alone.stats.terminals > 2  # past the group budget too: still split, still exact
    assert ts.Matcher(alone).accept_bytes(b"kb1!") and not ts.Matcher(alone).accept_bytes(b"kc")
