"""The converter's quick verdict for enum/const filtering agrees with jsonschema.

``Converter.quick_verdict`` answers "is this value valid here?" without a validator when the
schema holds only ``type``, ``enum``, ``const``, size bounds, ``not``, ``allOf``, ``anyOf``,
``oneOf`` and ``$ref`` (of such schemas), keywords for other kinds of values than the one
checked, keywords the validator does not know, and inert keywords (the usual
``{"type": "string", "enum": [...]}``, or a ``not`` around one), and defers (None) otherwise.
Each answer it gives must be jsonschema's, under every draft the root declares.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokensieve.frontends.json_schema.converter import Converter
from tokensieve.frontends.json_schema.location import Location
from tokensieve.frontends.whitespace import WhitespacePolicy

_TYPE_NAMES = ["null", "boolean", "integer", "number", "string", "array", "object", "any", "strnig"]
_DRAFTS = {
    "http://json-schema.org/draft-03/schema#": jsonschema.Draft3Validator,
    "http://json-schema.org/draft-04/schema#": jsonschema.Draft4Validator,
    "http://json-schema.org/draft-06/schema#": jsonschema.Draft6Validator,
    "http://json-schema.org/draft-07/schema#": jsonschema.Draft7Validator,
    "https://json-schema.org/draft/2020-12/schema": jsonschema.Draft202012Validator,
}

scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([1.0, 2.5, -0.0, "a", "b"])
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("ab"), inner, max_size=2),
    max_leaves=5,
)
keywords: dict[str, Any] = {
    "type": st.sampled_from(_TYPE_NAMES) | st.lists(st.sampled_from(_TYPE_NAMES), max_size=3),
    "enum": st.lists(json_values, max_size=4),
    "const": json_values,
    "description": st.text(max_size=5),
    "$comment": st.text(max_size=5),
    "x-note": json_values,
    "minimum": st.integers(-2, 2),
    "minLength": st.integers(0, 2),
    "maxItems": st.integers(0, 2) | st.just(1.5),
    "minProperties": st.integers(0, 2),
    "format": st.just("email"),
    "$ref": st.just("#/$defs/listed"),
    # Keywords of one kind of value (vacuous for the others), and a vendor's annotation
    # (unknown to every draft, so ignored).
    "pattern": st.just("^a"),
    "maximum": st.integers(-2, 2),
    "items": st.just({"type": "string"}),
    "uniqueItems": st.booleans(),
    "properties": st.just({"a": {"type": "null"}}),
    "required": st.just(["a"]),
    "supportedTypes": json_values,
}


def _schemas(optional: dict[str, Any]) -> Any:
    return st.recursive(
        st.booleans() | st.fixed_dictionaries({}, optional=optional),
        lambda inner: st.one_of(
            st.fixed_dictionaries({"not": inner}, optional=optional),
            *(
                st.fixed_dictionaries({key: st.lists(inner, min_size=1, max_size=3)}, optional=optional)
                for key in ("allOf", "anyOf", "oneOf")
            ),
        ),
        max_leaves=4,
    )


schemas = _schemas(keywords)
referenced = _schemas({k: v for k, v in keywords.items() if k != "$ref"})  # no cycle of references


def _converter(root: dict[str, Any]) -> Converter:
    return Converter(
        root, WhitespacePolicy.coerce(None), strict=False, property_order="any", relax=False, documents=None
    )


@settings(max_examples=500, deadline=None)
@given(json_values, schemas, referenced, st.sampled_from(sorted(_DRAFTS)))
def test_every_verdict_is_jsonschemas(value: Any, schema: Any, listed: Any, draft: str) -> None:
    root = {"$schema": draft, "$defs": {"listed": listed, "target": schema}, "$ref": "#/$defs/target"}
    conv = _converter(root)
    assert isinstance(conv.root, dict)
    target = conv.root["$defs"]["target"]  # as the converter reads it (later keywords dropped)
    verdict = conv.quick_verdict(value, Location(target, "/$defs/target", conv.resolver.root_location().base))
    if verdict is not None:
        assert _DRAFTS[draft](root).is_valid(value) == verdict, (draft, value, schema, listed)


@pytest.mark.parametrize(
    ("value", "schema", "verdict"),
    [
        ("a", {"type": "string", "description": "x"}, True),
        (1, {"type": ["string", "null"]}, False),
        (True, {"type": "integer"}, False),  # a boolean is no number
        (2, {"type": "number"}, True),
        (1.0, {"type": "integer"}, None),  # draft 4 and draft 6 differ
        (1.5, {"type": "integer"}, False),
        ("a", {"type": "string", "minLength": 2}, False),
        ("a", {"type": "string", "pattern": "b"}, None),
        ("a", {"type": "any"}, None),
        ("a", False, False),
        (1.0, {"enum": [1, "a"]}, True),  # JSON equality: 1.0 is 1
        (True, {"enum": [1]}, False),  # ... but true is not 1
        ("b", {"not": {"enum": ["a"]}, "type": "string", "x-origin": 1}, True),
        ("a", {"not": {"$ref": "#/$defs/a"}}, False),
        ("b", {"$ref": "#/$defs/a", "type": "integer"}, False),
        ("b", {"$ref": "#/$defs/a", "format": "email"}, None),  # a keyword it leaves to jsonschema
        ("b", {"type": "strnig", "const": "a"}, None),  # jsonschema finds the schema in error
        ("a", {"not": {"minLength": 5}}, True),
        ("a", {"not": {"pattern": "a"}}, None),
        ("a", {"type": "string", "items": {"type": "integer"}, "maximum": 0}, True),  # not for strings
        ([1], {"items": {"type": "string"}}, None),
        (1, {"type": "string", "pattern": "("}, False),  # the type decides
        ("a", {"supportedTypes": ["x"], "type": "string"}, True),  # a vendor's keyword
        ({"a": 1}, {"required": ["a"], "minLength": 3}, None),
        ("a", {"anyOf": [{"type": "integer"}, {"const": "a"}]}, True),
        ("a", {"oneOf": [{"type": "string"}, {"const": "a"}]}, False),  # two arms hold
        ("a", {"allOf": [{"type": "string"}, {"pattern": "a"}]}, None),
        ("a", {"anyOf": [{"type": "integer"}, {"pattern": "a"}]}, None),
    ],
)
def test_it_answers_the_usual_enum_checks_and_defers_the_rest(value: Any, schema: Any, verdict: Any) -> None:
    conv = _converter({"$defs": {"a": {"const": "a"}}, "anyOf": [schema]})
    at = Location(schema, "/anyOf/0", conv.resolver.root_location().base)
    assert conv.quick_verdict(value, at) is verdict


def test_up_to_draft_07_the_siblings_of_a_ref_are_ignored() -> None:
    schema = {"$ref": "#/$defs/a", "type": "integer"}
    for draft, verdict in (("http://json-schema.org/draft-07/schema#", True), (None, False)):
        root = {"$defs": {"a": {"const": "a"}}, "anyOf": [schema]} | ({"$schema": draft} if draft else {})
        conv = _converter(root)
        at = Location(schema, "/anyOf/0", conv.resolver.root_location().base)
        assert conv.quick_verdict("a", at) is verdict
