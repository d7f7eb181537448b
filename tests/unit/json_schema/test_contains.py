"""contains, several of them on one array, with counts and prefixItems."""

from __future__ import annotations

import pytest

from tokensieve.errors import UnsupportedSchemaError
from tokensieve.frontends.json_schema import json_schema_to_grammar

from .helpers import check


def test_two_contains_from_an_all_of() -> None:
    schema = {
        "allOf": [{"contains": {"type": "string"}}, {"contains": {"type": "integer"}, "maxContains": 2}]
    }
    check(
        schema,
        [["a", 1], [1, "a"], [1, "a", 2], [None, "a", None, 3]],
        [[], ["a"], [1], [1, 2, 3, "a"], [None]],
    )


def test_one_item_may_count_for_both() -> None:
    schema = {
        "allOf": [{"contains": {"type": "integer"}}, {"contains": {"minimum": 10}}],
        "items": {"type": "number"},
    }
    check(schema, [[10], [1, 10.5], [12, 3]], [[1], [10.5], [], [1, 2.5]])


def test_contains_with_prefix_items() -> None:
    schema = {
        "prefixItems": [{"type": "string"}, {"type": "string"}],
        "items": {"type": "integer"},
        "contains": {"const": "x"},
        "minContains": 1,
        "maxContains": 1,
    }
    check(
        schema,
        [["x"], ["a", "x"], ["x", "b", 1]],
        [[], ["a", "b"], ["x", "x"], ["x", "b", "x"], ["a", "b", 1]],
    )


def test_min_contains_zero_and_bounds() -> None:
    schema = {"contains": {"type": "null"}, "minContains": 0, "maxContains": 1, "maxItems": 3}
    check(schema, [[], [1, 2, 3], [None, 1]], [[None, None], [1, 2, 3, 4]])


def test_too_many_contains() -> None:
    conds = [{"contains": {"const": i}} for i in range(4)]
    with pytest.raises(UnsupportedSchemaError) as info:
        json_schema_to_grammar({"allOf": conds})
    assert info.value.keyword == "contains"


def test_contains_every_item_matches_is_a_length_bound() -> None:
    # oneOf of arrays over disjoint enums: only [] overlaps; each arm negates the others
    # as "contains an item outside their enum", which every item of the arm satisfies.
    groups = [["a", "b"], ["c"], ["d", "e"], ["f"], ["g"]]
    schema = {"oneOf": [{"type": "array", "maxItems": 3, "items": {"enum": g}} for g in groups]}
    check(schema, [["a"], ["b", "a", "b"], ["g", "g"]], [[], ["a", "c"], ["a", "a", "a", "a"], ["z"]])
    check(
        {"contains": {"type": "integer"}, "items": {"type": "integer"}, "maxContains": 2},
        [[1], [1, 2]],
        [[], [1, 2, 3]],
    )
