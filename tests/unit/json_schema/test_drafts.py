"""Keywords newer than the declared draft are annotations; draft-04 integers have no fraction."""

from __future__ import annotations

from tokensieve.frontends.json_schema.drafts import declared_draft, without_later_keywords

from .helpers import Raw, check

DRAFT4 = "http://json-schema.org/draft-04/schema#"
DRAFT7 = "http://json-schema.org/draft-07/schema#"


def test_if_and_const_are_annotations_before_their_draft() -> None:
    schema = {
        "$schema": DRAFT4,
        "type": "object",
        "properties": {"t": {"const": "a"}, "if": {"type": "integer"}},
        "if": {"required": ["t"]},
        "then": {"required": ["x"]},
    }
    check(schema, [{"t": "b"}, {"t": "a"}, {"if": 1}], [{"if": "s"}, 1], property_order="any")
    check(
        {**schema, "$schema": DRAFT7},
        [{"t": "a", "x": 1}, {}],
        [{"t": "b"}, {"t": "a"}],
        property_order="any",
    )


def test_unevaluated_properties_need_draft_2019() -> None:
    schema = {"$schema": DRAFT7, "type": "object", "unevaluatedProperties": False}
    check(schema, [{}, {"a": 1}], [[]], property_order="any")
    check({**schema, "$schema": "https://json-schema.org/draft/2020-12/schema"}, [{}], [{"a": 1}])


def test_declared_draft_and_copy() -> None:
    assert declared_draft({"$schema": DRAFT4}) == 4
    assert declared_draft({"$schema": "https://json-schema.org/draft/2019-09/schema"}) == 2019
    assert declared_draft({}) == declared_draft(True) == 2020
    root = {"$schema": DRAFT4, "definitions": {"d": {"const": 1, "enum": [{"const": 2}]}}, "const": 3}
    assert without_later_keywords(root, 4) == {
        "$schema": DRAFT4,
        "definitions": {"d": {"enum": [{"const": 2}]}},
    }
    assert without_later_keywords(root, 2020) is root


def test_only_objects_with_something_dropped_below_are_copied() -> None:
    untouched = {"type": "object", "properties": {"a": {"type": "integer"}}}
    changed = {"type": "object", "properties": {"b": {"const": 1, "type": "integer"}}}
    items = [{"type": "string"}, {"if": {"type": "string"}}]
    root = {
        "$schema": DRAFT4,
        "definitions": {"u": untouched, "c": changed},
        "anyOf": items,
        "allOf": [untouched],
        "$ref": "#/definitions/u",  # draft 4: the siblings below are ignored
        "maxLength": 3,
    }
    out = without_later_keywords(root, 4)
    assert out == {
        "$schema": DRAFT4,
        "definitions": {"u": untouched, "c": {"type": "object", "properties": {"b": {"type": "integer"}}}},
        "$ref": "#/definitions/u",
    }
    assert out["definitions"]["u"] is untouched  # nothing to drop below: the same object
    assert out["definitions"]["c"] is not changed
    assert changed["properties"]["b"] == {"const": 1, "type": "integer"}  # the input is left as it was
    assert root["anyOf"] is items and items[1] == {"if": {"type": "string"}}
    plain = {"$schema": DRAFT4, "properties": {"a": {"type": "integer"}}, "items": [{"type": "string"}]}
    assert without_later_keywords(plain, 4) is plain
    nested = {"$schema": DRAFT4, "items": [{"type": "string"}, {"items": {"then": {}}}]}
    expected = {"$schema": DRAFT4, "items": [{"type": "string"}, {"items": {}}]}
    assert without_later_keywords(nested, 4) == expected


def test_draft4_integers() -> None:
    check({"$schema": DRAFT4, "type": "integer"}, [3], [Raw("3.0"), 3.5])
