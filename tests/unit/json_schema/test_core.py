"""Types, enum/const, refs and entry-point behaviour of the JSON Schema front-end."""

from __future__ import annotations

import dataclasses

import pytest
from typing_extensions import TypedDict

from tokensieve.errors import UnsatisfiableSchemaError, UnsupportedSchemaError
from tokensieve.frontends.json_schema import json_schema_to_grammar, validate

from .helpers import Raw, accepts, check


def test_types_single_and_list() -> None:
    check({"type": "null"}, [None], [0, False, "null"])
    check({"type": ["string", "boolean"]}, ["x", True, False], [None, 1, []])
    check({"type": "integer"}, [0, -7, 10**30, Raw("1.0"), Raw("-0")], [1.5, "1", Raw("1e2")])


def test_true_and_false_schemas() -> None:
    check(True, [None, 1, "a", [1, {"b": []}]], [Raw("nul")])
    with pytest.raises(UnsatisfiableSchemaError):
        json_schema_to_grammar(False)
    check({"properties": {"a": False}}, [{}, {"b": 1}], [{"a": 1}])


def test_enum_and_const_any_json_values() -> None:
    check(
        {"enum": [1, "a", None, [1, 2], {"k": True}]},
        [1, 1.0, "a", None, [1, 2], {"k": True}],
        [2, "b", [2, 1], {"k": False}, True],
    )
    check({"const": 1}, [1, Raw("1.00")], [True, 2])
    check({"const": "é\n"}, ["é\n", Raw('"\\u00e9\\n"'), Raw('"\\u00E9\\u000a"')], ["é"])


def test_enum_values_filtered_by_sibling_keywords() -> None:
    check({"enum": ["a", "bb", 3], "type": "string", "minLength": 2}, ["bb"], ["a", 3])


def test_enum_duplicates_and_intersections_by_json_equality() -> None:
    # 1 and 1.0 are one value; true and 1 are two; arrays compare by JSON equality too.
    check({"enum": [1, 1.0, True, "1", [1, 2], [1.0, 2]]}, [1, True, "1", [1, 2]], [2, False, [2, 1]])
    check(
        {
            "allOf": [
                {"enum": [1, True, "x", [1, {"a": 2}], None]},
                {"enum": [1.0, "x", [1.0, {"a": 2.0}], False]},
            ]
        },
        [1, "x", [1, {"a": 2}]],
        [True, None, False],
    )
    # const and enum together, and a sibling keyword checked without the list it came from
    check({"enum": ["ab", "abc", 5], "const": "abc", "maxLength": 3}, ["abc"], ["ab", 5])
    check({"enum": ["ab", "abc"], "maxLength": 2}, ["ab"], ["abc"])


def test_unsatisfiable_reports_pointer() -> None:
    with pytest.raises(UnsatisfiableSchemaError):
        json_schema_to_grammar({"type": "integer", "minimum": 5, "maximum": 4})
    with pytest.raises(UnsatisfiableSchemaError):
        json_schema_to_grammar({"allOf": [{"type": "string"}, {"type": "number"}]})


def test_unsupported_names_keyword_and_pointer() -> None:
    with pytest.raises(UnsupportedSchemaError) as info:
        json_schema_to_grammar({"properties": {"a": {"$recursiveRef": "#"}}})
    assert info.value.keyword == "$recursiveRef"
    assert info.value.pointer == "/properties/a"


def test_relax_drops_keyword_with_warning() -> None:
    schema = {"type": "string", "format": "regex"}
    with pytest.raises(UnsupportedSchemaError):
        json_schema_to_grammar(schema)
    with pytest.warns(UserWarning, match="format"):
        g = json_schema_to_grammar(schema, relax={"format"})
    assert g.rules


def test_refs_defs_definitions_anchor_and_recursion() -> None:
    tree = {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
                "additionalProperties": False,
            }
        },
        "$ref": "#/$defs/node",
    }
    deep: dict = {"kids": []}
    for _ in range(12):  # deeper than any unrolling would go
        deep = {"kids": [deep, {}]}
    check(tree, [{}, deep], [{"kids": [1]}, {"x": 1}])
    check(
        {"definitions": {"a": {"$anchor": "A", "type": "integer"}}, "items": {"$ref": "#A"}},
        [[1, 2]],
        [["x"]],
    )
    check(
        {
            "$id": "http://x.test/root.json",
            "$defs": {"b": {"$id": "b.json", "type": "boolean"}},
            "$ref": "b.json",
        },
        [True],
        [1],
    )


def test_reference_rules_are_named_after_their_definitions() -> None:
    # A rule's name says which definition it is (debugging a grammar reads them): the last
    # token of its JSON pointer (as written there, escapes included), where characters that
    # are no word characters become underscores and letters of any script stay.
    names = ["plain_name", "with-dash", "a.b c", "straße", "数字", "x/y", "~tilde"]
    schema = {
        "$defs": {name: {"properties": {"v": {"const": i}}} for i, name in enumerate(names)},
        "type": "array",
        "prefixItems": [{"$ref": "#/$defs/" + name.replace("~", "~0").replace("/", "~1")} for name in names],
    }
    rules = set(json_schema_to_grammar(schema).rules)
    for expected in ("plain_name", "with_dash", "a_b_c", "straße", "数字", "x_1y", "_0tilde"):
        assert any(r.startswith(f"ref_{expected}_") for r in rules), (expected, sorted(rules))


def test_json_string_and_python_types() -> None:
    assert accepts('{"type": "integer"}', "12")

    class TD(TypedDict):
        a: int
        b: str

    @dataclasses.dataclass
    class DC:
        x: float
        y: list[int]

    check(list[int], [[1, 2]], [["a"]])
    check(TD, [{"a": 1, "b": "x"}], [{"a": 1}])
    check(DC, [{"x": 1.5, "y": []}], [{"x": "no", "y": []}])


def test_pydantic_model() -> None:
    pydantic = pytest.importorskip("pydantic")

    class M(pydantic.BaseModel):
        name: str
        age: int | None = None

    check(M, [{"name": "a"}, {"name": "a", "age": None}, {"name": "a", "age": 3}], [{"age": 3}])


def test_whitespace_policy_bounds_runs() -> None:
    assert accepts({"type": "array"}, "[1,  2]")
    assert not accepts({"type": "array"}, "[1," + " " * 40 + "2]")
    assert not accepts({"type": "array"}, "[1, 2]", whitespace="compact")
    assert accepts({"type": "array"}, "[1,2]", whitespace="compact")


def test_validate_checks_formats() -> None:
    assert validate({"type": "string", "format": "date"}, "2024-02-29") == []
    assert validate({"type": "string", "format": "date"}, "2023-02-29")
    assert validate({"type": "integer"}, "x")
