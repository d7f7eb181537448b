"""The converter's shortcut for enum/const filtering agrees with jsonschema.

``_typed_only_verdict`` answers "is this value valid here?" without a validator when the
schema holds only ``type`` and annotations (the usual ``{"type": "string", "enum": [...]}``
once its listing is set aside), and defers (None) otherwise. Each answer it gives must be
jsonschema's, under every draft.
"""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from tokensieve.frontends.json_schema.converter import _typed_only_verdict

_TYPE_NAMES = ["null", "boolean", "integer", "number", "string", "array", "object", "any", "strnig"]
_VALIDATORS = [
    jsonschema.Draft3Validator,
    jsonschema.Draft4Validator,
    jsonschema.Draft6Validator,
    jsonschema.Draft7Validator,
    jsonschema.Draft202012Validator,
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)
schemas = st.one_of(
    st.booleans(),
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(_TYPE_NAMES) | st.lists(st.sampled_from(_TYPE_NAMES), max_size=3),
            "description": st.text(max_size=5),
            "default": json_values,
            "minimum": st.integers(),
            "format": st.just("email"),
        },
    ),
)


@settings(max_examples=400, deadline=None)
@given(json_values, schemas)
def test_every_verdict_is_jsonschemas(value: Any, schema: Any) -> None:
    verdict = _typed_only_verdict(value, schema)
    if verdict is None:
        return
    for validator in _VALIDATORS:
        if isinstance(schema, bool) and validator is jsonschema.Draft3Validator:
            continue  # (boolean schemas came with draft 6... and draft 4's meta-schema)
        if isinstance(schema, bool) and validator is jsonschema.Draft4Validator:
            continue
        assert validator(schema).is_valid(value) == verdict, (validator.__name__, value, schema)


def test_it_answers_the_usual_enum_checks_and_defers_the_rest() -> None:
    assert _typed_only_verdict("a", {"type": "string", "description": "x"}) is True
    assert _typed_only_verdict(1, {"type": ["string", "null"]}) is False
    assert _typed_only_verdict(True, {"type": "integer"}) is False  # a boolean is no number
    assert _typed_only_verdict(2, {"type": "number"}) is True
    assert _typed_only_verdict(1.0, {"type": "integer"}) is None  # draft 4 and draft 6 differ
    assert _typed_only_verdict(1.5, {"type": "integer"}) is False
    assert _typed_only_verdict("a", {"type": "string", "minLength": 2}) is None
    assert _typed_only_verdict("a", {"type": "any"}) is None
    assert _typed_only_verdict("a", False) is False
