"""Seams (``ir.Seam``): where the lowering cuts a regular sequence into separate terminals.

A JSON object member ``"key" ws ":" ws value`` has seams around ``ws ":" ws``, so that part is
one automaton for every member of every schema, and a value is one automaton for every member
with that value: a second schema with new property names builds automata for its keys only,
and one with new enum values for those values only.
"""

from __future__ import annotations

from array import array
from typing import Any

import pytest

import tokensieve as ts
from tokensieve import _core
from tokensieve.compiler.compiled import TerminalCache
from tokensieve.compiler.lower import lower
from tokensieve.frontends.json_schema import json_schema_to_grammar
from tokensieve.ir import SEAM, Grammar, Ref, alt, literal, seq

from .native_builds import record_native_builds

VOCAB = ts.Vocabulary([b"a", b"b", b"ab", b"ba", b"<eos>"], eos_token_ids=[4], special_token_ids=[4])


class _Recorder:
    """A terminal builder that remembers the programs it was asked for."""

    def __init__(self, cache: TerminalCache) -> None:
        self.cache = cache
        self.programs: list[tuple[int, ...]] = []

    def __call__(self, program: bytes, max_states: int, subset_cap: int) -> Any:
        self.programs.append(tuple(array("i", program)))  # int32 words
        return self.cache.get(program, max_states, subset_cap)


_COLON = (0, 1, ord(":"), ord(":"))  # OP_BYTES, one range, ':'..':'


def _has_colon(program: tuple[int, ...]) -> bool:
    """Whether a program (int32 words) reads a ':' byte on its own: a member's value part."""
    return any(program[i : i + 4] == _COLON for i in range(len(program)))


def _lower(grammar: Grammar, limits: ts.Limits | None = None) -> tuple[Any, _Recorder]:
    limits = limits or ts.Limits()
    cache = TerminalCache(VOCAB, limits)
    recorder = _Recorder(cache)
    return lower(grammar, recorder, limits, cache.get_counted), recorder


def test_a_seam_cuts_a_regular_sequence_in_two_terminals() -> None:
    whole = Grammar(rules={"root": seq(literal("ab"), literal("ba"))})
    cut = Grammar(rules={"root": seq(literal("ab"), SEAM, literal("ba"))})
    assert len(_lower(whole)[0].terminals) == 1
    assert len(_lower(cut)[0].terminals) == 2


def test_a_seam_behind_a_rule_reference_cuts_too() -> None:
    grammar = Grammar(rules={"root": Ref("m"), "m": seq(literal("ab"), SEAM, literal("b"))})
    lowered, _ = _lower(grammar)
    assert len(lowered.terminals) == 2


def test_a_seamed_item_cuts_the_sequence_around_it() -> None:
    # "ba" SEAM "a" m "a" with m = "ab" SEAM "b": the run before m takes m's first piece, m's
    # last piece ends a terminal, and the "a" after m starts a new one. (A sequence cut at its
    # own seams is lowered run by run; one without seams would be tried as one terminal first.)
    member = seq(literal("ab"), SEAM, literal("b"))
    root = seq(literal("ba"), SEAM, literal("a"), Ref("m"), literal("a"))
    grammar = Grammar(rules={"root": root, "m": member})
    lowered, recorder = _lower(grammar)
    assert len(lowered.terminals) == 4
    assert len(recorder.programs) == 4  # "ba", "aab", "b", "a": no automaton spans a seam
    compiled = ts.Compiler(VOCAB).grammar(grammar)
    for text, ok in ((b"baaabba", True), (b"baaaba", False), (b"baaabb", False), (b"baaabbaa", False)):
        m = ts.Matcher(compiled)
        assert (m.accept_bytes(text) and m.is_accepting()) == ok, text


def test_an_alternation_holding_a_seam_is_cut_at_it() -> None:
    # "a" ("b" SEAM "a" | "bb"): the alternation is lowered by its structure (a nonterminal
    # with one production per alternative), so no automaton spans the seam.
    seamed = seq(literal("b"), SEAM, literal("a"))
    grammar = Grammar(rules={"root": seq(literal("a"), alt(seamed, literal("bb")))})
    lowered, recorder = _lower(grammar)
    assert len(lowered.terminals) == 3  # "a" (twice, one automaton), "b", "bb"
    assert len(recorder.programs) == 3  # before the cut: one, "a" ("ba" | "bb")
    compiled = ts.Compiler(VOCAB).grammar(grammar)
    for text, ok in ((b"aba", True), (b"abb", True), (b"ab", False), (b"aab", False)):
        m = ts.Matcher(compiled)
        assert (m.accept_bytes(text) and m.is_accepting()) == ok, text


def test_optional_members_in_declared_order_keep_their_values_apart() -> None:
    # Optional members make a list tail per declared index, each an alternation (every later
    # member may be left out). Made one automaton, a tail would read the keys and values of
    # every member after it, and the object the whole list (before the cut: one terminal of
    # 1,192 states here). Cut at the members' seams, no terminal reads two members' colons.
    properties = {n: {"type": "boolean"} for n in "pqrs"}
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    grammar = json_schema_to_grammar(schema, property_order="declared")
    lowered, _ = _lower(grammar)
    doc = b'{"p":true,"q":false,"s":true}'
    spans = {doc[i:j] for i in range(len(doc)) for j in range(i, len(doc) + 1) if doc[i:j].count(b":") == 2}
    for terminal in lowered.terminals:
        assert not any(terminal.dfa.is_prefix(span) for span in spans)
    compiled = ts.Compiler(VOCAB).grammar(grammar)
    cases = ((doc, True), (b'{"q":true,"r":true,"s":false}', True), (b"{}", True))
    for text, ok in (*cases, (b'{"s":true,"p":false}', False), (b'{"p":true,"p":true}', False)):
        m = ts.Matcher(compiled)
        assert (m.accept_bytes(text) and m.is_accepting()) == ok, text


@pytest.mark.parametrize("order", ["declared", "any"])
def test_a_long_repetition_of_objects_keeps_its_counter(order: str) -> None:
    # The seams inside the objects do not keep a counter from the array: unrolled, up to
    # 100,000 items would need a parser rule per count.
    item = {
        "type": "object",
        "properties": {"a": {"type": "boolean"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    grammar = json_schema_to_grammar(
        {"type": "array", "items": item, "maxItems": 100_000}, property_order=order
    )
    lowered, _ = _lower(grammar)
    assert any(isinstance(t, _core.CountedTerminal) for t in lowered.terminals)
    assert len(lowered.productions) < 10
    compiled = ts.Compiler(VOCAB).grammar(grammar)
    for text, ok in ((b'[{"a":true},{"a":false}]', True), (b"[]", True), (b'[{"a":true},]', False)):
        m = ts.Matcher(compiled)
        assert (m.accept_bytes(text) and m.is_accepting()) == ok, text


def test_member_values_share_one_automaton_across_schemas() -> None:
    cache = TerminalCache(VOCAB, ts.Limits())
    recorder = _Recorder(cache)

    def members(names: list[str]) -> None:
        schema = {"type": "object", "properties": {n: {"type": "string"} for n in names}}
        grammar = json_schema_to_grammar(schema, property_order="any")
        lower(grammar, recorder, ts.Limits(), cache.get_counted)

    members(["alpha", "beta"])
    first = set(recorder.programs)
    recorder.programs.clear()
    members(["gamma", "delta"])
    second = set(recorder.programs)
    # `ws ":" ws` and `"string"` are the same automata in both schemas; only keys are new.
    assert any(_has_colon(p) for p in first & second)
    assert not any(_has_colon(p) for p in second - first)


def test_declared_order_members_share_their_value_automaton() -> None:
    """In declaration order a member follows the comma of the member before it, in a sequence
    with every later member: the member's seam still cuts that sequence, so its value part is
    the automaton every other member and schema with that value uses."""
    cache = TerminalCache(VOCAB, ts.Limits())
    recorder = _Recorder(cache)

    def members(names: list[str]) -> set[tuple[int, ...]]:
        recorder.programs.clear()
        schema = {"type": "object", "properties": {n: {"type": "string"} for n in names}}
        lower(json_schema_to_grammar(schema), recorder, ts.Limits(), cache.get_counted)
        return set(recorder.programs)

    first = {p for p in members(["alpha"]) if _has_colon(p)}
    second = {p for p in members(["beta", "gamma", "delta"]) if _has_colon(p)}
    # `ws ":" ws` (and the value automata) for one member are those of three
    # members with other names: no automaton holds a key, a comma or a later member with them.
    assert second == first


def test_a_value_particular_to_a_schema_is_an_automaton_of_its_own() -> None:
    """An enum is particular to its schema: its automaton is built for it, while ``ws ":" ws``
    before it is the one every member of every schema uses (joined to the value, it would be
    built again for each enum)."""
    cache = TerminalCache(VOCAB, ts.Limits())
    recorder = _Recorder(cache)

    def members(values: list[str]) -> set[tuple[int, ...]]:
        recorder.programs.clear()
        schema = {"type": "object", "properties": {"kind": {"enum": values}}, "required": ["kind"]}
        lower(json_schema_to_grammar(schema, property_order="any"), recorder, ts.Limits(), cache.get_counted)
        return set(recorder.programs)

    first, second = members(["red", "green"]), members(["north", "south"])
    assert {p for p in second if _has_colon(p)} <= first  # the colon's automaton is shared
    assert second - first  # the new enum's automaton


def test_other_keys_share_their_string_automaton_across_schemas(monkeypatch: pytest.MonkeyPatch) -> None:
    """An object's "any other key" is a difference, JSON string minus the declared names: its
    left operand is the same in every object, so it is built once and only the product is new."""
    built = record_native_builds(monkeypatch)
    limits = ts.Limits()
    cache = TerminalCache(VOCAB, limits)
    for names in (["alpha", "beta"], ["gamma"], ["delta", "epsilon", "zeta"]):
        schema = {"type": "object", "properties": {n: {"type": "integer"} for n in names}}
        lower(json_schema_to_grammar(schema, property_order="any"), cache.get, limits, cache.get_counted)
    assert len(built.products) == 3
    # Every product's left operand is the JSON string: one automaton, built for the first
    # schema and taken from the cache for the others.
    assert len({id(left) for left, _, _ in built.products}) == 1
