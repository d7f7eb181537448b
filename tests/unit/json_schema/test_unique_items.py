"""uniqueItems over finite item domains: an Unordered set of values, any domain size."""

from __future__ import annotations

import json

import pytest

from tokensieve.compiler import Compiler
from tokensieve.errors import UnsupportedSchemaError
from tokensieve.frontends.json_schema import json_schema_to_grammar
from tokensieve.ir import Unordered
from tokensieve.matcher import Matcher
from tokensieve.vocabulary import Vocabulary

from .helpers import Raw, check

BYTES = Vocabulary(
    [bytes([b]) for b in range(256)] + [b"<eos>"], eos_token_ids=[256], special_token_ids=[256]
)
COLORS = ["red", "green", "blue", "cyan", "magenta", "yellow", "black", "white", "gray", "navy"]


def _has_unordered(grammar: object) -> bool:
    def walk(e: object) -> bool:
        if isinstance(e, Unordered):
            return True
        return any(walk(c) for c in getattr(e, "items", ()) if not isinstance(c, (int, str)))

    return any(walk(body) for body in grammar.rules.values())  # type: ignore[attr-defined]


def test_enum_items_more_than_the_subset_limit() -> None:
    schema = {"type": "array", "uniqueItems": True, "items": {"enum": COLORS}}
    grammar = json_schema_to_grammar(schema)
    assert _has_unordered(grammar)
    # Ten values are beyond the oracle's 2^n expansion of Unordered: the engine judges.
    compiled = Compiler(BYTES).grammar(grammar)
    valid = [[], ["red"], ["navy", "red", "gray"], COLORS, list(reversed(COLORS))]
    invalid = [["red", "red"], ["red", "blue", "red"], ["purple"], [*COLORS, "red"]]
    texts = [(json.dumps(v), True) for v in valid] + [(json.dumps(v), False) for v in invalid]
    texts.append(('["red", "\\u0072ed"]', False))  # another spelling of a used value
    for text, ok in texts:
        m = Matcher(compiled)
        assert (m.accept_bytes(text.encode()) and m.is_accepting()) == ok, text
    small = {"type": "array", "uniqueItems": True, "items": {"enum": COLORS[:4]}}
    check(small, [COLORS[:4], ["cyan", "red"]], [["red", "red"], ["navy"]])
    check(small, [], [Raw('["red", "\\u0072ed"]')])


def test_counts_and_equal_numbers() -> None:
    schema = {"uniqueItems": True, "items": {"enum": [1, 2, 3, "1"]}, "minItems": 2, "maxItems": 3}
    check(schema, [[1, 2], [3, "1", 1], ["1", 1]], [[1], [1, 2, 3, "1"], [1, 1.0], []])
    check(schema, [], [Raw("[2, 2.0]"), Raw("[1, 1.00]")])


def test_const_items_and_empty_domains() -> None:
    check({"uniqueItems": True, "items": {"const": "x"}}, [[], ["x"]], [["x", "x"]])
    check({"uniqueItems": True, "items": False}, [[]], [[1]])
    check({"uniqueItems": True, "items": {"enum": [1, 2]}, "minItems": 3}, [], [[1, 2], [1, 2, 1]])


def test_prefix_items_keep_the_subset_construction() -> None:
    schema = {"uniqueItems": True, "prefixItems": [{"enum": [1, 2]}], "items": {"enum": [2, 3]}}
    check(schema, [[1, 2, 3], [2, 3], [1]], [[2, 2], [1, 3, 3], [3]])


def test_infinite_domains_stay_unsupported() -> None:
    with pytest.raises(UnsupportedSchemaError) as info:
        json_schema_to_grammar({"uniqueItems": True, "items": {"type": "string"}})
    assert info.value.keyword == "uniqueItems"
