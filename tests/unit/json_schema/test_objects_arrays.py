"""Objects in both property orders, additional/pattern properties, and arrays."""

from __future__ import annotations

import pytest

from tokensieve.errors import UnsupportedSchemaError
from tokensieve.frontends.json_schema import json_schema_to_grammar

from .helpers import Raw, check

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}, "tags": {"type": "array"}},
    "required": ["name"],
}


def test_declared_order_and_defaults() -> None:
    check(
        PERSON,
        [{"name": "a"}, {"name": "a", "tags": []}, {"name": "a", "age": 1, "zz": None}],
        [{"age": 1}, {"name": 1}, Raw('{"age": 1, "name": "a"}'), Raw('{"name": "a", "name": "b"}')],
    )


def test_any_order_exact_set() -> None:
    check(
        PERSON,
        [{"age": 1, "name": "a"}, {"tags": [], "zz": 1, "name": "a"}],
        [{"age": 1}, Raw('{"name": "a", "name": "b"}'), Raw('{"age": 1, "name": "a", "age": 2}')],
        property_order="any",
    )


def test_additional_keys_exclude_declared_names_in_every_spelling() -> None:
    schema = {"properties": {"é": {"type": "integer"}}, "additionalProperties": {"type": "string"}}
    check(schema, [{"é": 1, "b": "x"}], [{"é": "x"}, Raw('{"é": 1, "\\u00e9": "x"}'), {"b": 1}])
    check(
        {"properties": {"é": {}}, "additionalProperties": False},
        [{"é": 1}, Raw('{"\\u00e9": 1}'), Raw('{"\\u00E9": 1}')],
        [{"b": 1}],
    )


def test_printable_ascii_in_keys_has_one_spelling() -> None:
    # "\u0061" is "a" to a parser, but no serializer writes it: neither a declared key nor
    # an additional one may be spelled so (the values allowed are the same).
    check({"properties": {"a": {}}, "additionalProperties": False}, [{"a": 1}], [Raw('{"\\u0061": 1}')])
    schema = {"properties": {"a": {"type": "integer"}}}
    check(schema, [{"a": 1, "b": "x"}], [Raw('{"\\u0061": "x"}'), Raw('{"\\u0062": "x"}')])


def test_go_html_safe_escapes_are_accepted() -> None:
    # Go's encoding/json writes & < > as \u0026 \u003c \u003e by default: those three
    # printable characters keep their \u spellings, in keys, values and any-JSON strings.
    keys = {"properties": {"a<b": {"type": "integer"}}, "additionalProperties": False}
    check(keys, [{"a<b": 1}, Raw('{"a\\u003cb": 1}'), Raw('{"a\\u003Cb": 1}')], [Raw('{"a\\u003eb": 1}')])
    values = {"enum": ["R&D", "x>y"]}
    check(values, ["R&D", Raw('"R\\u0026D"'), Raw('"x\\u003ey"')], [Raw('"R\\u0027D"'), Raw('"\\u0078>y"')])
    check({"type": "string"}, [Raw('"\\u0026\\u003c\\u003E"')], [Raw('"\\u0041"'), Raw('"\\u007e"')])


def test_pattern_properties_and_property_names() -> None:
    schema = {"patternProperties": {"^x-": {"type": "integer"}}, "additionalProperties": False}
    check(schema, [{}, {"x-a": 1}], [{"x-a": "s"}, {"y": 1}])
    check({"propertyNames": {"maxLength": 2}}, [{"ab": 1}], [{"abc": 1}])


def test_pattern_keys_are_their_spellings_and_overlaps_intersect() -> None:
    # One pattern: its keys are its quoted spellings, with no set difference for the native
    # builder to compute (any string minus (any string minus P) built the automaton of P
    # three times over). Two overlapping patterns: the keys matching both get both values.
    one = {"patternProperties": {"^[a-cé]{1,20}$": {"type": "integer"}}, "additionalProperties": False}
    check(
        one,
        [{}, {"ab": 1}, {"aé": 2}, Raw('{"\\u00e9b": 1}')],
        [{"abd": 1}, {"ab": "s"}, {"": 1}, Raw('{"\\u0061b": 1}')],
    )
    grammar = json_schema_to_grammar(one)
    assert "Difference" not in repr(grammar.rules)
    two = {
        "patternProperties": {"^a": {"type": "integer"}, "b$": {"minimum": 3}},
        "additionalProperties": False,
    }
    check(two, [{"ab": 3}, {"a": 1}, {"b": 7}, {"xb": 3}], [{"ab": 1}, {"ab": "s"}, {"x": 1}, {"b": 1}])


def test_min_max_properties_and_strict() -> None:
    check(
        {"minProperties": 1, "maxProperties": 2}, [{"a": 1}, {"a": 1, "b": 2}], [{}, {"a": 1, "b": 2, "c": 3}]
    )
    check(
        {"properties": {"a": {}, "b": {}}},
        [{"a": 1, "b": 2}],
        [{"a": 1}, {"a": 1, "b": 2, "c": 3}],
        strict=True,
    )


def test_dependencies() -> None:
    check(
        {"dependentRequired": {"a": ["b"]}},
        [{}, {"b": 1}, {"a": 1, "b": 1}],
        [{"a": 1}],
        property_order="any",
    )
    check(
        {"dependentSchemas": {"a": {"properties": {"b": {"type": "string"}}}}},
        [{"b": 1}, {"a": 1, "b": "x"}],
        [{"a": 1, "b": 1}],
        property_order="any",
    )


def test_arrays_items_prefix_and_lengths() -> None:
    check(
        {"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False},
        [[], ["a"], ["a", 1]],
        [[1], ["a", 1, 2]],
    )
    check(
        {"items": [{"type": "string"}], "additionalItems": {"type": "integer"}}, [["a", 1, 2]], [["a", "b"]]
    )
    check(
        {"type": "array", "minItems": 2, "maxItems": 3, "items": {"type": "integer"}},
        [[1, 2], [1, 2, 3]],
        [[1], [1, 2, 3, 4], [1, "a"]],
    )


def test_contains_counts() -> None:
    check(
        {"contains": {"type": "string"}, "minContains": 2, "maxContains": 3},
        [["a", "b"], [1, "a", 2, "b", "c"]],
        [["a"], ["a", "b", "c", "d"], []],
    )


def test_unique_items_small_domains() -> None:
    check({"uniqueItems": True, "items": {"type": "boolean"}}, [[], [True], [False, True]], [[True, True]])
    with pytest.raises(UnsupportedSchemaError) as info:
        json_schema_to_grammar({"uniqueItems": True, "items": {"type": "integer"}})
    assert info.value.keyword == "uniqueItems"
