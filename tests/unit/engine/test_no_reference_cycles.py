"""A compile leaves no reference cycles behind.

Everything a compile allocates and does not keep (IR nodes, the converter, its memos) must be
freed by reference counting when the compile returns. A cycle among them (a recursive
closure is one; under mypyc, so are closures that call each other) keeps the whole object
graph it reaches alive until the cyclic garbage collector runs, and that collection, paid by
whichever compile or request comes next, walks every one of those objects: on the MaskBench
dev split it was 12% of all compile time and single pauses of 0.3 s.

Each schema below takes one of the paths that held such a cycle; the check is that a
collection right after the compile finds nothing to collect.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

import tokensieve as ts

_VOCAB = ts.Vocabulary(
    [bytes([b]) for b in range(256)] + [b"<eos>"], eos_token_ids=[256], special_token_ids=[256]
)

SCHEMAS: dict[str, Any] = {
    "allOf and $ref (conjunct flattening)": {
        "$defs": {"name": {"type": "string", "minLength": 1}},
        "allOf": [{"$ref": "#/$defs/name"}, {"maxLength": 5}],
    },
    "declared-order object with optional members": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"}},
        "required": ["b"],
        "minProperties": 1,
        "maxProperties": 2,
    },
    "prefixItems with bounds": {
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "string"}, {"type": "null"}],
        "items": {"type": "boolean"},
        "minItems": 2,
        "maxItems": 5,
    },
    "contains with counts": {
        "type": "array",
        "items": {"type": "integer"},
        "contains": {"minimum": 10},
        "minContains": 1,
        "maxContains": 2,
    },
    "an older draft (later keywords dropped)": {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"x": {"$ref": "#/definitions/x", "minimum": 3}},
        "definitions": {"x": {"type": "integer"}},
    },
    "a negated pattern (state elimination)": {
        "type": "string",
        "pattern": "^[a-c]{2,3}$",
        "not": {"pattern": "^ab"},
    },
    "non-ASCII characters (UTF-8 decoding)": {
        "type": "string",
        "pattern": "^[é-ü€]+$",
        "not": {"const": "é"},
    },
    "a counted pattern, negated": {
        "type": "string",
        "pattern": "^[a-z]+@[a-z]+$",
        "minLength": 3,
        "maxLength": 100,  # enough states for a counter (strings.CharGraph.counted)
        "not": {"pattern": "^x"},  # which the difference expands again
    },
}


@pytest.fixture
def collector_off() -> Iterator[None]:
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    yield
    if was:
        gc.enable()


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_a_compile_leaves_nothing_for_the_cycle_collector(name: str, collector_off: None) -> None:
    schema = SCHEMAS[name]
    for order in ("declared", "any"):
        ts.Compiler(_VOCAB).json_schema(schema, property_order=order)  # module-level caches filled
        gc.collect()
        compiled = ts.Compiler(_VOCAB).json_schema(schema, property_order=order)
        assert gc.collect() == 0, f"{name} ({order} order) left reference cycles"
        assert compiled.memory_bytes > 0
