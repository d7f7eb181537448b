"""Up to draft-07, keywords beside ``$ref`` are ignored (MaskBench Github_hard o38538)."""

from __future__ import annotations

from .helpers import check

FLAGS = {"type": "object", "properties": {"cache": {"type": "boolean"}}}


def test_siblings_of_ref_are_ignored_in_draft_07() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"F": FLAGS},
        "properties": {"out": {"$ref": "#/definitions/F", "additionalProperties": False}},
    }
    check(schema, [{"out": {"cache": True}}, {"out": {"other": 1}}], [{"out": {"cache": 1}}])


def test_siblings_of_ref_apply_in_2020_12() -> None:
    schema = {
        "$defs": {"F": FLAGS},
        "properties": {"out": {"$ref": "#/$defs/F", "additionalProperties": False}},
    }
    check(schema, [{"out": {}}], [{"out": {"cache": True}}, {"out": {"other": 1}}])
