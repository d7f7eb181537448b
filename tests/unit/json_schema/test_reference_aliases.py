"""A schema that is a reference alone (``{"$ref": ...}``, other keywords annotations) is the
rule of what it refers to: no rule of its own, and members that hold it are shared."""

from __future__ import annotations

import pytest

from tests.unit.json_schema.helpers import check
from tokensieve.frontends.json_schema import json_schema_to_grammar
from tokensieve.ir import Ref

ADDRESS = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def test_properties_that_refer_to_one_definition_share_its_rule() -> None:
    schema = {
        "type": "object",
        "properties": {
            "home": {"$ref": "#/$defs/address", "description": "where one lives"},
            "work": {"$ref": "#/$defs/via"},
            "post": {"$ref": "#/$defs/address"},
        },
        "$defs": {"address": ADDRESS, "via": {"$ref": "#/$defs/address", "title": "an alias"}},
    }
    grammar = json_schema_to_grammar(schema, property_order="any")
    aliases = [name for name, body in grammar.rules.items() if isinstance(body, Ref)]
    assert aliases == []
    # The definition's rule (and its property's), none per property that refers to it, none
    # for "via".
    refs = sorted(name.rsplit("_", 1)[0] for name in grammar.rules if name.startswith("ref_"))
    assert refs == ["ref_address", "ref_city"]
    check(
        schema,
        valid=[{}, {"home": {"city": "Paris"}, "work": {"city": "Lyon"}, "post": {"city": "Nice"}}],
        invalid=[{"home": {}}, {"work": {"town": "Lyon"}}, {"post": 1}],
        property_order="any",
    )


def test_a_reference_with_constraints_beside_it_keeps_its_own_rule() -> None:
    schema = {
        "type": "object",
        "properties": {"home": {"$ref": "#/$defs/address", "maxProperties": 1}},
        "$defs": {"address": {"type": "object"}},
    }
    check(schema, valid=[{"home": {"city": "Paris"}}], invalid=[{"home": {"city": "Paris", "zip": "1"}}])


@pytest.mark.parametrize(
    "defs",
    [
        {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
        {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/c"}, "c": {"$ref": "#/$defs/b"}},
        {"a": {"$ref": "#/$defs/a"}},
    ],
)
def test_a_cycle_of_references_is_a_rule_that_refers_to_itself(defs: dict[str, object]) -> None:
    # Before the cycle was a chain of rules each naming the next; now one rule names itself.
    # Either way no value matches it (the compiler reports an empty language), and following
    # the chain must end (it did not: a recursion without end, "nests too deeply").
    grammar = json_schema_to_grammar({"$ref": "#/$defs/a", "$defs": defs})
    loops = [name for name, body in grammar.rules.items() if body == Ref(name)]
    assert len(loops) == 1
