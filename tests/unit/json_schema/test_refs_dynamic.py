"""``$dynamicRef``: the target is the outermost resource of the dynamic scope that defines
the ``$dynamicAnchor``; the grammar gets one rule per scope that changes the meaning."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from tokensieve.errors import UnsupportedSchemaError
from tokensieve.frontends.json_schema import json_schema_to_grammar
from tokensieve.frontends.json_schema.refs import BaseURI, Location, Resolver, names_no_resources

from .helpers import check

# A generic list whose items are whatever the outermost "itemType" dynamic anchor says;
# numberList and stringList each extend it with their own item type.
_GENERIC_LISTS: dict[str, Any] = {
    "$id": "https://example.test/main",
    "properties": {
        "numbers": {"$ref": "numberList"},
        "strings": {"$ref": "stringList"},
        "plain": {"$ref": "genericList"},
    },
    "$defs": {
        "genericList": {
            "$id": "genericList",
            "type": "array",
            "items": {"$dynamicRef": "#itemType"},
            "$defs": {"default": {"$dynamicAnchor": "itemType", "type": "boolean"}},
        },
        "numberList": {
            "$id": "numberList",
            "$ref": "genericList",
            "$defs": {"itemType": {"$dynamicAnchor": "itemType", "type": "number"}},
        },
        "stringList": {
            "$id": "stringList",
            "$ref": "genericList",
            "$defs": {"itemType": {"$dynamicAnchor": "itemType", "type": "string"}},
        },
    },
}


def _agrees_with_jsonschema(schema: Any, valid: list[Any], invalid: list[Any]) -> None:
    """The expectations are jsonschema's too, and the grammar matches them."""
    validator = jsonschema.Draft202012Validator(schema)
    assert all(validator.is_valid(v) for v in valid)
    assert not any(validator.is_valid(v) for v in invalid)
    check(schema, valid, invalid, property_order="any")


def test_one_schema_in_two_dynamic_scopes() -> None:
    _agrees_with_jsonschema(
        _GENERIC_LISTS,
        [{"numbers": [1, 2.5], "strings": ["a"], "plain": [True]}, {"numbers": [], "strings": []}],
        [{"numbers": ["a"]}, {"strings": [1]}, {"plain": [1]}, {"plain": ["a"]}, {"numbers": [True]}],
    )


def test_outermost_definer_wins_and_persists_through_recursion() -> None:
    # The root binds "node" first; the tree's own anchor is then never the target, even
    # at depth: each level of children is checked with the root's extra rule.
    schema = {
        "$id": "https://example.test/strict",
        "$dynamicAnchor": "node",
        "$ref": "tree",
        "properties": {"name": {"type": "string"}},
        "$defs": {
            "tree": {
                "$id": "tree",
                "$dynamicAnchor": "node",
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$dynamicRef": "#node"}}},
            }
        },
    }
    _agrees_with_jsonschema(
        schema,
        [{"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]}, {"children": []}],
        [{"children": [{"children": [{"name": 1}]}]}, {"name": 2}],
    )


def test_dynamic_ref_without_matching_dynamic_anchor_is_static() -> None:
    # The fragment names a plain $anchor: no dynamic search, even though the root defines
    # a $dynamicAnchor of that name.
    schema = {
        "$id": "https://example.test/root",
        "$ref": "list",
        "$defs": {
            "foo": {"$dynamicAnchor": "items", "type": "string"},
            "list": {
                "$id": "list",
                "type": "array",
                "items": {"$dynamicRef": "#items"},
                "$defs": {"items": {"$anchor": "items", "type": "integer"}},
            },
        },
    }
    _agrees_with_jsonschema(schema, [[1, 2], []], [["a"], [1.5]])


def test_scopes_only_bind_contested_names() -> None:
    # A single definer: $dynamicRef is static and locations carry no bindings, so a schema
    # without competing dynamic anchors gets no extra rules.
    schema = {"$dynamicAnchor": "x", "type": "array", "items": {"$dynamicRef": "#x"}}
    resolver = Resolver(schema)
    assert resolver.root_location().base.dynamic == ()
    static = {"$anchor": "x", "type": "array", "items": {"$ref": "#x"}}
    assert len(json_schema_to_grammar(schema).rules) == len(json_schema_to_grammar(static).rules)


def test_base_uri_bindings() -> None:
    definers = {"https://a.test/x": frozenset({"n"}), "https://a.test/y": frozenset({"n", "m"})}
    base = BaseURI("https://a.test/x", (), definers)
    assert base.binding("n") is None and base == "https://a.test/x"  # not in the scope yet
    outer = base.joined()
    assert outer.uri == "https://a.test/x" and outer.binding("n") == "https://a.test/x"
    inner = outer.at("https://a.test/y").joined()
    assert inner.binding("n") == "https://a.test/x"  # the outer definer stays bound
    assert inner.binding("m") == "https://a.test/y"
    assert inner != base.at("https://a.test/y").joined()  # same URI, other scope
    assert inner != "https://a.test/y"  # bound: not the plain URI
    assert hash(base) == hash("https://a.test/x")
    assert Location({}, "/p", inner).key == "https://a.test/y#/p"


def test_resources_entered_in_place_join_the_scope_only_when_they_refer() -> None:
    # r and s both define "x"; the $dynamicRef sits in u, entered in place from s, entered
    # in place from r: no reference was followed from r or s, so the scope is just u and
    # the static target s#x stands (jsonschema's dynamic scope; not r).
    schema = {
        "$id": "https://example.test/r",
        "$dynamicAnchor": "x",
        "type": "object",
        "properties": {
            "a": {
                "$id": "s",
                "$dynamicAnchor": "x",
                "type": ["object", "string"],
                "properties": {"b": {"$id": "u", "$dynamicRef": "s#x"}},
            },
            "c": {"$ref": "#/properties/a/properties/b"},  # followed from r: r is outermost
        },
    }
    _agrees_with_jsonschema(
        schema,
        [{"a": {"b": "str"}}, {"a": {"b": {"b": "s"}}}, {"c": {}}],
        [{"a": {"b": 1}}, {"c": "str"}, {"a": 1}],
    )


def test_ref_to_a_contested_dynamic_anchor_is_an_error_where_readings_differ() -> None:
    # The specification reads this $ref statically (integers); jsonschema dynamically
    # (strings, the root's definition comes first in the scope).
    schema: dict[str, Any] = {
        "$id": "https://example.test/root",
        "$ref": "list",
        "$defs": {
            "foo": {"$dynamicAnchor": "items", "type": "string"},
            "list": {
                "$id": "list",
                "type": "array",
                "items": {"$ref": "#items"},
                "$defs": {"items": {"$dynamicAnchor": "items", "type": "integer"}},
            },
        },
    }
    with pytest.raises(UnsupportedSchemaError) as info:
        json_schema_to_grammar(schema)
    assert info.value.keyword == "$ref" and info.value.pointer == "/$defs/list/items"
    # The list entered in place: the root never joins the scope, both readings agree.
    in_place = {
        "$id": "https://example.test/root",
        "$defs": {"foo": schema["$defs"]["foo"]},
        "properties": {"l": schema["$defs"]["list"]},
    }
    _agrees_with_jsonschema(in_place, [{"l": [1, 2]}], [{"l": ["a"]}])


@pytest.mark.parametrize("ref", ["#nowhere", "other.json#items"])
def test_unresolvable_dynamic_refs_raise(ref: str) -> None:
    with pytest.raises(UnsupportedSchemaError) as info:
        json_schema_to_grammar({"$id": "https://example.test/s", "items": {"$dynamicRef": ref}})
    assert info.value.keyword == "$ref"


def test_resolutions_are_remembered_per_reference_and_scope() -> None:
    schema = {
        "$id": "https://a.test/root",
        "$defs": {"x": {"type": "integer"}, "y": {"$id": "y", "$defs": {"x": {"type": "string"}}}},
    }
    resolver = Resolver(schema)
    here = resolver.root_location()
    first = resolver.resolve("#/$defs/x", here)
    assert first.schema == {"type": "integer"} and first.pointer == "/$defs/x"
    assert resolver.resolve("#/$defs/x", here) is first  # remembered
    inside_y = resolver.resolve("y", here)
    other = resolver.resolve("#/$defs/x", inside_y)  # the same reference from another base
    assert other.schema == {"type": "string"} and other is not first
    with pytest.raises(UnsupportedSchemaError):
        resolver.resolve("#/$defs/missing", here)
    with pytest.raises(UnsupportedSchemaError):  # a failure is not remembered as an answer
        resolver.resolve("#/$defs/missing", here)


def test_a_text_naming_no_resource_is_not_walked_and_one_that_may_is() -> None:
    assert names_no_resources('{"properties": {"a": {"$ref": "#/$defs/x"}}}')
    assert names_no_resources(b'{"type": "integer"}')
    assert not names_no_resources('{"$defs": {"x": {"$id": "x"}}}')
    assert not names_no_resources('{"$defs": {"x": {"$anchor": "a"}}}')
    assert not names_no_resources(b'{"$defs": {"x": {"$dynamicAnchor": "a"}}}')
    assert not names_no_resources('{"$defs": {"x": {"\\u0024id": "x"}}}')  # an escape may spell one
    assert not names_no_resources(b'{"$defs": {"x": {"$\\u0069d": "x"}}}')
    assert names_no_resources('{"description": "caf\\u00e9 \\ud83d\\ude00"}')  # not ASCII: no key
    # Given as text, a schema whose subschemas define resources resolves as the same dict does.
    schema = {
        "$id": "https://a.test/root",
        "$defs": {"y": {"$id": "y", "$defs": {"x": {"type": "string"}}, "$ref": "#/$defs/x"}},
        "$ref": "y",
    }
    escaped = json.dumps(schema).replace('"$id"', '"\\u0024id"')
    for text in (json.dumps(schema), escaped):
        check(text, ["a"], [1])
    check(json.dumps({"$defs": {"x": {"type": "string"}}, "$ref": "#/$defs/x"}), ["a"], [1])
