"""not of container values, of oneOf, and of member keywords over a bounded key space."""

from __future__ import annotations

import importlib.machinery

import pytest

from tokensieve.compiler import Compiler
from tokensieve.errors import UnsupportedSchemaError
from tokensieve.frontends.json_schema import json_schema_to_grammar
from tokensieve.ir import Difference, Grammar
from tokensieve.matcher import Matcher
from tokensieve.vocabulary import Vocabulary

from .helpers import Raw, check

BYTES = Vocabulary(
    [bytes([b]) for b in range(256)] + [b"<eos>"], eos_token_ids=[256], special_token_ids=[256]
)


def test_not_const_object() -> None:
    check(
        {"not": {"const": {"a": 1, "b": [True]}}},
        [{}, {"a": 1}, {"a": 2, "b": [True]}, {"a": 1, "b": [True], "c": 0}, {"a": 1, "b": []}, 1, "a"],
        [{"a": 1, "b": [True]}, {"b": [True], "a": 1}],
        property_order="any",
    )
    check({"not": {"const": {"a": 1}}}, [], [Raw('{"a": 1.0}'), Raw('{"\\u0061": 1}')], property_order="any")


def test_not_enum_with_arrays_and_scalars() -> None:
    check(
        {"not": {"enum": [[1, "x"], "y", []]}},
        [[1], [1, "x", 2], ["x", 1], [2, "x"], "z", None, {}],
        [[1, "x"], "y", []],
    )
    check({"not": {"enum": [[1, "x"]]}}, [], [Raw('[1.0, "x"]'), Raw('[ 1 , "\\u0078" ]')])


def test_not_one_of_on_objects() -> None:
    schema = {"type": "object", "not": {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}}
    check(
        schema, [{}, {"a": 1, "b": 2}, {"c": 1}], [{"a": 1}, {"b": 1}, {"a": 1, "c": 2}], property_order="any"
    )


def test_one_of_closed_objects_overlapping_in_the_empty_object() -> None:
    a = {"type": "object", "additionalProperties": False, "properties": {"a": {}}}
    b = {"type": "object", "additionalProperties": False, "properties": {"b": {}}}
    check({"oneOf": [a, b]}, [{"a": 1}, {"b": 1}], [{}, {"a": 1, "b": 1}, {"c": 1}], property_order="any")


def test_one_of_closed_objects_with_disjoint_patterns() -> None:
    a = {"type": "object", "additionalProperties": False, "patternProperties": {"^x": {}}}
    b = {"type": "object", "additionalProperties": False, "patternProperties": {"^y": {}}}
    check(
        {"oneOf": [a, b]},
        [{"x1": 1}, {"x1": 1, "x2": 2}, {"y": 1}],
        [{}, {"x": 1, "y": 1}, {"z": 1}],
        property_order="any",
    )


def test_not_property_names_over_finite_keys() -> None:
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"ab": {}, "c": {}},
        "not": {"propertyNames": {"maxLength": 1}},
    }
    check(schema, [{"ab": 1}, {"ab": 1, "c": 2}], [{}, {"c": 1}], property_order="any")


def test_not_pattern_properties_over_finite_keys() -> None:
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"a1": {}, "b": {}},
        "not": {"patternProperties": {"^a": {"type": "string"}}},
    }
    check(schema, [{"a1": 1}, {"a1": None, "b": 2}], [{}, {"a1": "s"}, {"b": 1}], property_order="any")


def test_member_keywords_over_unbounded_keys_stay_unsupported() -> None:
    for negated in ({"propertyNames": {"maxLength": 1}}, {"patternProperties": {"^a": {"type": "string"}}}):
        with pytest.raises(UnsupportedSchemaError) as info:
            json_schema_to_grammar({"type": "object", "not": negated})
        assert info.value.keyword == "not"


def test_not_of_a_recursive_schema_is_grammar_recursion() -> None:
    tree = {"type": "object", "properties": {"c": {"$ref": "#/$defs/t"}, "v": {"type": "integer"}}}
    schema = {"$defs": {"t": tree}, "type": "object", "not": {"$ref": "#/$defs/t"}}
    deep_bad = {"c": {"c": {"c": {"v": "x"}}}}
    deep_good = {"c": {"c": {"c": {"v": 1}}}}
    check(
        schema,
        [{"v": "x"}, {"c": 1}, deep_bad, {"c": {"c": [], "v": 2}}],
        [{}, {"v": 1}, deep_good, {"c": {"v": 3}}],
        property_order="any",
    )


def test_large_scalar_subtraction_is_a_native_difference() -> None:
    # "é" has \u escapes (six states a character), so the automaton is past the Python limit.
    schema = {"type": "string", "pattern": "^[a-zé]{0,800}$", "not": {"pattern": "^ab"}}
    grammar = json_schema_to_grammar(schema)
    assert any(isinstance(e, Difference) for e in _nodes(grammar))
    # The oracle's Python automata are slow on 800-character bounds: the engine judges.
    compiled = Compiler(BYTES).grammar(grammar)
    for text, valid in [
        ('""', True),
        ('"ba"', True),
        ('"a"', True),
        (f'"{"x" * 800}"', True),
        ('"abc"', False),
        ('"ab"', False),
        ('"a\\u0062"', False),
        ('"\\u00e9a\\u00E9"', True),
        ('"a\\u0063"', False),  # printable ASCII has one spelling
        ('"aB"', False),
        (f'"{"x" * 801}"', False),
    ]:
        m = Matcher(compiled)
        assert (m.accept_bytes(text.encode()) and m.is_accepting()) == valid, text
    numbers = {"type": "integer", "minimum": 0, "maximum": 10**60, "not": {"multipleOf": 3}}
    check(numbers, [1, 10**59, 10**59 + 1], [0, 3, 10**59 - 1, -1, Raw("1e0")])


def _nodes(grammar: Grammar) -> list[object]:
    out: list[object] = []
    todo: list[object] = list(grammar.rules.values())
    while todo:
        e = todo.pop()
        out.append(e)
        todo += [c for c in getattr(e, "items", ()) if not isinstance(c, (int, str))]
        todo += [getattr(e, k) for k in ("left", "right", "item") if hasattr(e, k)]
    return out


def test_boolean_schemas_among_the_negated_keywords() -> None:
    # not (required a and not false): "not false" holds always, so only "a" decides.
    schema = {"type": "object", "not": {"required": ["a"], "not": False}}
    check(schema, [{}, {"b": 1}], [{"a": 1}], property_order="any")
    check({"type": "object", "not": {"required": ["a"], "not": True}}, [{}, {"a": 1}], [1])


def test_chained_subtractions_skip_the_counter_walk_of_known_automata(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Operands whose automata are remembered by object (each result of a subtraction, a
    negated string met before) hold no counter or rule: _subtract takes them as they are.
    An operand with a counter is still expanded first."""
    from tokensieve.frontends.json_schema import negation
    from tokensieve.frontends.json_schema.automata import dfa_from_expr
    from tokensieve.frontends.json_schema.converter import Converter
    from tokensieve.frontends.regex import parse_regex
    from tokensieve.frontends.whitespace import WhitespacePolicy
    from tokensieve.ir import CountedAutomaton

    conv = Converter(
        True, WhitespacePolicy.coerce(None), strict=False, property_order="any", relax=False, documents=None
    )
    pos, neg = parse_regex("[a-c]{1,5}"), parse_regex("b+")
    walked: list[object] = []
    real = negation._without_counters

    def counting(conv: Converter, expr: object) -> object:
        walked.append(expr)
        return real(conv, expr)  # type: ignore[arg-type]

    if str(negation.__file__).endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
        pytest.skip("compiled by mypyc: its calls to _without_counters do not go through the module")
    monkeypatch.setattr(negation, "_without_counters", counting)
    dfa_from_expr(pos), dfa_from_expr(neg)  # both remembered now
    out = negation._subtract(conv, pos, neg, ("string",), "")
    assert walked == []
    back = dfa_from_expr(out)
    for word, inside in [(b"a", True), (b"b", False), (b"bbb", False), (b"abc", True), (b"aaaaaa", False)]:
        state = 0
        for byte in word:
            state = next((t for lo, hi, t in back.trans[state] if lo <= byte <= hi), -1)
            if state < 0:
                break
        assert (state >= 0 and back.accept[state]) == inside, word
    # The result is remembered too: the next subtraction of the chain walks nothing either.
    c = parse_regex("c")
    dfa_from_expr(c)
    negation._subtract(conv, out, c, ("string",), "")
    assert walked == []
    counter = CountedAutomaton(((True, ()),), 0, None, lambda g: parse_regex("x*"))
    negation._subtract(conv, counter, neg, ("string",), "")
    assert walked and walked[0] is counter
