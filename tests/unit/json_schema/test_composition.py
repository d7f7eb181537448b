"""anyOf / oneOf / allOf / not / if-then-else."""

from __future__ import annotations

import pytest

from tokensieve.errors import UnsupportedSchemaError
from tokensieve.frontends.json_schema import json_schema_to_grammar
from tokensieve.ir import Ref

from .helpers import check


def test_any_of_and_all_of() -> None:
    check({"anyOf": [{"type": "string", "maxLength": 1}, {"type": "integer"}]}, ["a", 3], ["ab", None])
    check(
        {"allOf": [{"type": "string", "pattern": "a"}, {"pattern": "b"}, {"maxLength": 3}]},
        ["ab", "bxa"],
        ["a", "b", "abab"],
    )


def test_one_of_overlapping_branches_exclude_the_overlap() -> None:
    schema = {"oneOf": [{"type": "integer", "minimum": 0}, {"type": "integer", "maximum": 10}]}
    check(schema, [-5, 11], [0, 5, 10, "x"])
    objects = {"oneOf": [{"required": ["a"]}, {"required": ["b"]}], "type": "object"}
    check(objects, [{"a": 1}, {"b": 1}], [{"a": 1, "b": 2}, {}], property_order="any")


def test_one_of_with_discriminator() -> None:
    schema = {
        "oneOf": [
            {"properties": {"kind": {"const": "a"}, "x": {"type": "integer"}}, "required": ["kind"]},
            {"properties": {"kind": {"const": "b"}, "y": {"type": "string"}}, "required": ["kind"]},
        ]
    }
    check(schema, [{"kind": "a", "x": 1}, {"kind": "b", "y": "s"}], [{"kind": "c"}, {"kind": "a", "x": "s"}])


def test_not_on_scalars_and_required() -> None:
    check({"not": {"type": "string"}}, [1, None, [], {}], ["a"])
    check({"type": "string", "not": {"enum": ["a", "b"]}}, ["c", ""], ["a", "b"])
    check({"type": "integer", "not": {"minimum": 5}}, [4, -1], [5, 6])
    check({"not": {"required": ["a"]}}, [{}, {"b": 1}], [{"a": 1}, 1])


def test_not_on_objects_and_arrays_keyword_by_keyword() -> None:
    check({"not": {"minProperties": 2}}, [{}, {"a": 1}], [{"a": 1, "b": 2}, 1, "x"])
    check({"type": "array", "not": {"items": {"type": "integer"}}}, [["a"], [1, "a"]], [[], [1, 2]])
    check(
        {"not": {"type": "object", "required": ["a"], "properties": {"b": {"type": "string"}}}},
        [1, {}, {"a": 1, "b": 2}],
        [{"a": 1}, {"a": 1, "b": "x"}],
        property_order="any",
    )


def test_not_on_objects_that_cannot_be_expressed() -> None:
    with pytest.raises(UnsupportedSchemaError) as info:
        json_schema_to_grammar({"type": "object", "not": {"additionalProperties": False}})
    assert info.value.keyword == "not"


def test_if_then_else() -> None:
    schema = {
        "if": {"properties": {"t": {"const": "n"}}},
        "then": {"properties": {"v": {"type": "integer"}}},
        "else": {"properties": {"v": {"type": "string"}}},
    }
    check(
        schema,
        [{"t": "n", "v": 1}, {"t": "s", "v": "x"}, {"v": 1}],
        [{"t": "n", "v": "x"}, {"v": "x"}, {"t": "s", "v": 1}],
        property_order="any",
    )


def test_objects_merged_by_all_of_share_their_rules() -> None:
    # A base object merged into three extensions: its member "k" is one rule, not one per
    # merge, and "a", whose schema meets the base's in y and z alike (two equal but
    # distinct schema objects), is one merged rule, z's name standing for y's.
    base = {"type": "object", "properties": {"a": {"type": "string"}, "k": {"type": "boolean"}}}
    schema = {
        "type": "object",
        "definitions": {"base": base},
        "properties": {
            "x": {"allOf": [{"$ref": "#/definitions/base"}, {"properties": {"b": {"type": "integer"}}}]},
            "y": {"allOf": [{"$ref": "#/definitions/base"}, {"properties": {"a": {"maxLength": 2}}}]},
            "z": {"allOf": [{"$ref": "#/definitions/base"}, {"properties": {"a": {"maxLength": 2}}}]},
        },
        "additionalProperties": False,
    }
    for order in ("any", "declared"):
        grammar = json_schema_to_grammar(schema, property_order=order)
        members = [body for name, body in grammar.rules.items() if name.startswith("member_")]
        assert len(members) == len(set(members))
        merges = [body for name, body in grammar.rules.items() if name.startswith("all_of_")]
        assert sum(isinstance(body, Ref) for body in merges) == 1  # z's merge of "a" is y's
        check(
            schema,
            [{"x": {"a": "long", "k": True, "b": 1}, "y": {"a": "ab"}, "z": {"a": "", "k": False}}],
            [{"x": {"a": 1}}, {"y": {"a": "abc"}}, {"z": {"a": "abc"}}, {"z": {"k": 1}}],
            property_order=order,
        )


def test_a_schema_met_twice_at_one_location_is_not_merged_with_itself() -> None:
    # "a" meets the base's schema through b and through c: the same schema twice, which is
    # that schema's own rule, not a merge of it with itself. (Declared order: b's own members
    # first, then those of the base, then c's.)
    schema = {
        "definitions": {
            "base": {"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}}},
            "b": {"allOf": [{"$ref": "#/definitions/base"}], "properties": {"b": {"type": "integer"}}},
            "c": {"allOf": [{"$ref": "#/definitions/base"}], "properties": {"c": {"type": "integer"}}},
        },
        "allOf": [{"$ref": "#/definitions/b"}, {"$ref": "#/definitions/c"}],
    }
    for order in ("any", "declared"):
        grammar = json_schema_to_grammar(schema, property_order=order)
        assert not [name for name in grammar.rules if name.startswith("all_of_")]
        check(schema, [{"b": 1, "a": "abc", "c": 2}, {}], [{"a": "abcd"}, {"b": "1"}], property_order=order)
