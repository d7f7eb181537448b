"""Serializations of concrete JSON values (``const``, ``enum``) and small finite domains.

A value's language holds every spelling of it that the rest of the front-end accepts:
numbers in any decimal spelling of the same value (``1``, ``1.0``, ``1.00``: JSON Schema
compares numbers by value), strings with the escapes :mod:`.strings` accepts, whitespace
between tokens, and object members in the configured property order.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from ...ir import NOTHING, Expr, literal, seq
from .location import Location
from .numbers import NumberSpec, number_expr
from .objects import Member, member_rule, object_expr
from .strings import json_literal_string

if TYPE_CHECKING:
    from .converter import Converter

__all__ = ["finite_domain", "literal_value"]


def literal_value(conv: Converter, value: Any) -> Expr:
    """Every serialization of ``value``."""
    if value is None:
        return literal("null")
    if value is True:
        return literal("true")
    if value is False:
        return literal("false")
    if isinstance(value, float) and not math.isfinite(value):
        return NOTHING  # no JSON text is Infinity or NaN (a value Python's json reads, JSON lacks)
    if isinstance(value, (int, float)):
        d = Decimal(value) if isinstance(value, int) else Decimal(repr(value))
        return number_expr(NumberSpec(lower=d, upper=d), conv.grammar, "const")
    if isinstance(value, str):
        return json_literal_string(value)
    if isinstance(value, list):
        if not value:
            return seq(literal("["), conv.ws, literal("]"))
        sep = seq(conv.ws, literal(","), conv.ws)
        items: list[Expr] = [literal_value(conv, value[0])]
        for v in value[1:]:
            items += [sep, literal_value(conv, v)]
        return seq(literal("["), conv.ws, *items, conv.ws, literal("]"))
    if isinstance(value, dict):
        members = [
            Member(
                member_rule(conv, json_literal_string(k), literal_value(conv, v)),
                literal_value(conv, v),
                True,
            )
            for k, v in value.items()
        ]
        return object_expr(conv, members, [], 0, None)
    raise TypeError(f"not a JSON value: {value!r}")


def finite_domain(conv: Converter, conj: list[Location]) -> list[Any] | None:
    """All valid values when the conjunction allows finitely many (enum/const/boolean/null)."""
    from .composition import _enum_values, types_of

    values = _enum_values(conj)
    if values is None:
        types = types_of(conj)
        if not types <= {"boolean", "null"}:
            return None
        values = ([True, False] if "boolean" in types else []) + ([None] if "null" in types else [])
    return [v for v in values if all(conv.is_valid(v, loc) for loc in conj)]
