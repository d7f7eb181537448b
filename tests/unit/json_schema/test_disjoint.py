"""oneOf whose branches are proved disjoint type by type (no ``not`` of the whole branch)."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest

from tokensieve.errors import UnsupportedSchemaError
from tokensieve.frontends.json_schema import json_schema_to_grammar
from tokensieve.frontends.json_schema.converter import Converter
from tokensieve.frontends.json_schema.disjoint import declared_key_language, disjoint, possible_types
from tokensieve.frontends.json_schema.refs import Location
from tokensieve.frontends.whitespace import WhitespacePolicy

from .helpers import check

CLOSED_A = {
    "properties": {"kind": {"enum": ["a"]}, "x": {"type": "integer"}},
    "required": ["kind"],
    "additionalProperties": False,
}
CLOSED_B = {
    "properties": {"kind": {"enum": ["b"]}, "y": {"type": "string"}},
    "required": ["kind", "y"],
    "additionalProperties": False,
}


def test_untyped_branches_with_a_discriminator() -> None:
    # No "type": both branches accept every string, number... so oneOf rejects them all.
    check(
        {"oneOf": [CLOSED_A, CLOSED_B]},
        [{"kind": "a"}, {"kind": "a", "x": 1}, {"kind": "b", "y": "s"}],
        ["s", 1, None, [], {"kind": "b"}, {"kind": "a", "y": "s"}, {"kind": "c"}],
        property_order="any",
    )


def test_discriminator_declared_next_to_the_one_of() -> None:
    schema = {
        "type": "object",
        "properties": {"msg": {"enum": ["open", "close"]}},
        "required": ["msg"],
        "oneOf": [
            {
                "properties": {"msg": {"enum": ["open"]}, "n": {"type": "integer"}},
                "additionalProperties": False,
            },
            {"properties": {"msg": {"enum": ["close"]}}},
        ],
    }
    check(
        schema,
        [{"msg": "open"}, {"msg": "open", "n": 2}, {"msg": "close", "z": 1}],
        [{"msg": "open", "z": 1}, {"msg": "other"}, {}],
        property_order="any",
    )


def test_required_property_of_different_types() -> None:
    # Branch a requires "a" as a string; branch b lets "a" be null only (patternProperties).
    a = {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}}
    b = {"type": "object", "required": ["b"], "patternProperties": {"^(a|c)$": {"type": "null"}}}
    check(
        {"oneOf": [a, b]},
        [{"a": "s"}, {"b": 1}, {"b": 1, "a": None}, {"a": "s", "b": 1}],
        [{}, {"a": None}, {"c": 1}],
        property_order="any",
    )


def test_branches_with_disjoint_key_languages() -> None:
    scale = {"type": "object", "patternProperties": {"^[0-9]x$": {}}, "additionalProperties": False}
    locale = {"type": "object", "patternProperties": {"^[a-z]{2}$": {}}, "additionalProperties": False}
    check(
        {"oneOf": [{**scale, "minProperties": 1}, {**locale, "minProperties": 1}]},
        [{"2x": 1}, {"en": 1, "fr": 2}],
        [{}, {"2x": 1, "en": 2}, {"abc": 1}],
        property_order="any",
    )


def test_types_of_nested_one_of_branches() -> None:
    inner = {"oneOf": [{"type": "null"}, {"type": "string", "enum": ["L", "R"]}]}
    schema = {"oneOf": [inner, {"type": "array", "items": inner}]}
    check(schema, [None, "L", [], ["R", None]], ["X", ["X"], 1, {}])


def test_overlap_in_one_type_keeps_the_negation_there_only() -> None:
    # Strings overlap (negated on automata); objects are disjoint (no negation of the
    # additionalProperties keyword is needed).
    a = {
        "type": ["string", "object"],
        "required": ["k"],
        "properties": {"k": {}},
        "additionalProperties": False,
    }
    b = {"type": ["string", "object"], "maxLength": 2, "properties": {"k": False}}
    check(
        {"oneOf": [a, b]},
        ["abc", "abcd", {"k": 1}, {}, {"z": 1}],
        ["", "a", "ab", {"k": 1, "z": 2}, 1],
        property_order="any",
    )


def test_a_real_overlap_still_needs_not() -> None:
    a = {"type": "object", "additionalProperties": False, "properties": {"p": {}}}
    b = {"type": "object", "properties": {"q": {"type": "integer"}}}
    with pytest.raises(UnsupportedSchemaError) as info:
        json_schema_to_grammar({"oneOf": [a, b]})
    assert info.value.keyword == "not"


def _conv(schema: object) -> Converter:
    return Converter(
        schema,
        WhitespacePolicy.coerce(None),
        strict=False,
        property_order="any",
        relax=False,
        documents=None,
    )


def test_disjoint_is_sound_on_overlapping_values() -> None:
    conv = _conv(True)
    here = conv.resolver.root_location()

    def loc(s: object) -> list[Location]:
        return [Location(s, "", here.base)]

    assert disjoint(conv, loc({"type": "string"}), loc({"type": "integer"}))
    # Without "type", object keywords leave strings alone: both sides accept "s".
    assert not disjoint(conv, loc({"required": ["a"]}), loc({"type": "string"}))
    assert disjoint(conv, loc({"type": "object", "required": ["a"]}), loc({"properties": {"a": False}}))
    assert not disjoint(conv, loc({"required": ["a"]}), loc({"properties": {"a": {"type": "string"}}}))
    # Same discriminator value: not disjoint; 1 and 1.0 are equal values.
    assert not disjoint(
        conv,
        loc({"type": "object", "required": ["a"], "properties": {"a": {"const": 1}}}),
        loc({"type": "object", "required": ["a"], "properties": {"a": {"const": 1.0}}}),
    )
    assert possible_types(conv, loc({"anyOf": [{"type": "null"}, {"type": "string"}]})) == {"null", "string"}
    assert possible_types(conv, loc({"not": {"type": "integer"}})) >= {"number"}


def test_disjoint_through_nested_one_of_and_property_counts() -> None:
    repo = {
        "type": "object",
        "oneOf": [
            {"required": ["type", "url"], "properties": {"type": {"const": "vcs"}}},
            {"required": ["type", "path"], "properties": {"type": {"const": "path"}}},
        ],
    }
    disabled = {
        "type": "object",
        "additionalProperties": {"const": False},
        "minProperties": 1,
        "maxProperties": 1,
    }
    check(
        {"oneOf": [repo, disabled]},
        [
            {"type": "vcs", "url": 1},
            {"type": "path", "path": "p"},
            {"x": False},
            {"type": "vcs", "url": 1, "path": 2},
        ],
        [{"x": True}, {}, {"type": "vcs"}, {"type": "git", "url": 1}, {"type": False, "url": 1}],
        property_order="any",
    )


def test_listed_values_are_compared_by_json_equality_with_the_other_side() -> None:
    conv = _conv(True)
    here = conv.resolver.root_location()

    def loc(*parts: object) -> list[Location]:
        return [Location(s, "", here.base) for s in parts]

    big = list(range(2, 500))  # each side's own list is not re-checked value by value
    assert not disjoint(conv, loc({"enum": [*big, 1]}), loc({"enum": ["x", 1.0]}))
    assert disjoint(conv, loc({"enum": [*big, True]}), loc({"enum": ["x", 1]}))  # true is not 1
    assert disjoint(conv, loc({"enum": ["ab", "c"]}), loc({"enum": ["ab", "c"]}, {"minLength": 3}))
    assert not disjoint(conv, loc({"enum": ["ab", "c"]}, {"type": "string"}), loc({"enum": [["q"], "c"]}))
    assert disjoint(conv, loc({"enum": [{"k": 1}]}), loc({"enum": [{"k": 1.5}]}, {"type": "object"}))
    assert not disjoint(conv, loc({"enum": [{"k": 1}]}), loc({"enum": [{"k": 1.0}]}, {"type": "object"}))


def test_strings_told_apart_by_patterns_formats_and_lengths() -> None:
    conv = _conv(True)
    here = conv.resolver.root_location()

    def loc(*parts: object) -> list[Location]:  # strings only: other types satisfy both sides
        return [Location(s, "", here.base) for s in [{"type": "string"}, *parts]]

    version = {"type": "string", "pattern": r"^\d+\.\d+$"}
    caret = {"type": "string", "pattern": r"^\^\d+\.\d+$"}
    assert disjoint(conv, loc(version), loc(caret))
    # Patterns search anywhere: "maker" and "customer" both occur in "customer maker".
    assert not disjoint(conv, loc({"pattern": "maker"}), loc({"pattern": "customer"}))
    # Digits only: both case-insensitive hex patterns match it.
    assert not disjoint(conv, loc({"pattern": "^[0-9a-f]{4}$"}), loc({"pattern": "^[0-9A-F]{4}$"}))
    # Formats are left out of the proof (their automata may cost more than it saves).
    assert not disjoint(conv, loc({"format": "date"}), loc({"pattern": "^[a-z]+$"}))
    # A side's languages are intersected before they meet the other side's.
    assert disjoint(conv, loc({"pattern": "a"}, {"pattern": "^[0-9]*$"}), loc({"pattern": "^[0-9a]*$"}))
    assert not disjoint(conv, loc({"pattern": "a"}), loc({"pattern": "^[0-9a]*$"}))
    assert disjoint(conv, loc({"maxLength": 2}), loc({"type": "string", "minLength": 3}))
    assert not disjoint(conv, loc({"maxLength": 3}), loc({"type": "string", "minLength": 3}))
    # Unreadable patterns are left out, which only widens a side.
    assert not disjoint(conv, loc({"pattern": "(?<=x)a"}), loc({"pattern": "^b$"}))


def test_one_of_of_disjoint_patterns_needs_no_negation() -> None:
    schema = {
        "oneOf": [
            {"type": "string", "pattern": r"^\d+\.\d+\.\d+(?:[+-]\S+)?$"},
            {"type": "string", "pattern": r"^(?:(?:>=|>|<=|<)\d+\.\d+\.\d+\s*)+$"},
            {"type": "string", "pattern": "maker"},
            {"type": "string", "pattern": "customer"},
        ]
    }
    check(
        schema,
        ["1.2.3", "1.2.3+b\u00e9ta", ">=1.0.0 <2.0.0", "maker", "a customer"],
        ["", "1.2", ">=1.0", "customer maker", "1.2.3-maker", None],
    )


def _accepts(dfa: Any, word: bytes) -> bool:
    state: int | None = 0
    for byte in word:
        state = next((t for lo, hi, t in dfa.trans[state] if lo <= byte <= hi), None)
        if state is None:
            return False
    return bool(dfa.accept[state])


class _Schema(dict):  # type: ignore[type-arg]
    """A schema object that a weak reference can watch (a plain dict cannot be one's target)."""


def test_declared_key_languages_are_remembered_by_value_and_keep_no_schema_alive() -> None:
    schema = _Schema(properties={"a": {}, "b": False}, patternProperties={"^x": {}})
    watch = weakref.ref(schema)
    first = declared_key_language(schema)
    twin = {"properties": {"a": {"type": "string"}, "b": False}, "patternProperties": {"^x": True}}
    assert declared_key_language(twin) is first  # the same names and patterns: one entry
    allowed = declared_key_language(schema, allowed_only=True)
    assert first is not None and allowed is not None
    assert _accepts(first, b"b") and not _accepts(allowed, b"b") and _accepts(allowed, b"xy")
    del schema
    gc.collect()
    assert watch() is None
