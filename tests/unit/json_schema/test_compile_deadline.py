"""One ``Limits.max_compile_seconds`` deadline bounds a JSON Schema compile, front-end included."""

from __future__ import annotations

import time

import pytest

import tokensieve as ts
from tokensieve.errors import LimitExceeded
from tokensieve.frontends.json_schema import json_schema_to_grammar

# Ten levels of oneOf over objects: the front-end asks disjointness questions about every
# pair of arms at every level, so the conversion runs long enough to be cut off.
_NESTED: dict = {"type": "string"}
for depth in range(10):
    _NESTED = {
        "oneOf": [
            {"type": "object", "properties": {f"k{depth}": _NESTED}, "required": [f"k{depth}"]},
            {"type": "object", "properties": {f"j{depth}": _NESTED}, "required": [f"j{depth}"]},
        ]
    }


def test_a_passed_deadline_stops_the_conversion() -> None:
    with pytest.raises(LimitExceeded) as info:
        json_schema_to_grammar({"type": "object", "properties": {"a": {"type": "string"}}}, deadline=0.0)
    assert info.value.limit == "max_compile_seconds"
    assert "converting the schema" in str(info.value)


def test_a_distant_deadline_lets_the_conversion_finish() -> None:
    json_schema_to_grammar(_NESTED, deadline=time.monotonic() + 3600)


def test_the_compiler_deadline_covers_the_front_end() -> None:
    vocab = ts.Vocabulary([b"a", b"{", b"}", b'"', b"<eos>"], eos_token_ids=[4], special_token_ids=[4])
    compiler = ts.Compiler(vocab, limits=ts.Limits(max_compile_seconds=1e-6))
    with pytest.raises(LimitExceeded) as info:
        compiler.json_schema(_NESTED)
    assert info.value.limit == "max_compile_seconds"
    assert "converting the schema" in str(info.value)  # stopped in the front-end, not after it
