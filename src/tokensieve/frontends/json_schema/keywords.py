"""Which keywords exist, which constrain, and which cannot be enforced.

Keywords that are neither here nor annotations are unknown to draft 2020-12 and, as the
specification says, ignored (``x-...`` extensions, OpenAPI's ``nullable``, typos such as
``additonalProperties``). Keywords listed in :data:`UNSUPPORTED` make the conversion fail
(or are dropped with a warning when relaxed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from ...ir import MAX_COUNT

if TYPE_CHECKING:
    from .converter import Converter
    from .location import Location

__all__ = [
    "CONSTRAINTS",
    "COUNT_KEYWORDS",
    "TYPES",
    "UNSUPPORTED",
    "check_keywords",
    "count_keyword",
    "is_trivial",
    "malformed_count",
    "schema_types",
]

TYPES: Final = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})
_NO_TYPES: Final[frozenset[str]] = frozenset()

CONSTRAINTS: Final = frozenset(
    {
        "$ref",
        "type",
        "enum",
        "const",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "items",
        "prefixItems",
        "additionalItems",
        "minItems",
        "maxItems",
        "contains",
        "minContains",
        "maxContains",
        "uniqueItems",
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "dependentSchemas",
        "dependencies",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "unevaluatedProperties",
        "unevaluatedItems",
        "$dynamicRef",
        "$recursiveRef",
    }
)
"""Keywords that can make an instance invalid."""

UNSUPPORTED: Final = {
    "$recursiveRef": "recursive references depend on the evaluation path",
}


def is_trivial(schema: dict[str, Any]) -> bool:
    """True when the schema constrains nothing (only annotations or unknown keywords)."""
    for key in schema:
        if key not in CONSTRAINTS:
            continue
        if key in ("then", "else") and "if" not in schema:
            continue
        if key in ("minContains", "maxContains") and "contains" not in schema:
            continue
        if key == "additionalItems" and not isinstance(schema.get("items"), list):
            continue
        return False
    return True


# The answer for each single type name: ``type`` is one name in most schemas, and the
# conjunction tests ask for it again and again (Github_medium o3626: 667,701 times in one
# conversion), so the common case builds no set.
_ONE_TYPE: Final[dict[str, frozenset[str]]] = {
    name: frozenset({name, "integer"} if name == "number" else {name}) for name in TYPES
}


def schema_types(schema: dict[str, Any]) -> frozenset[str]:
    """The JSON types a schema object's ``type`` keyword allows (all of them if absent)."""
    t = schema.get("type")
    if t is None:
        return TYPES
    if isinstance(t, str):
        return _ONE_TYPE.get(t, _NO_TYPES)
    names = list(t) if isinstance(t, list) else []
    out = {n for n in names if n in TYPES}
    if "number" in out:
        out.add("integer")
    return frozenset(out)


# Keywords whose value is a count: a non-negative integer in every draft.
COUNT_KEYWORDS: Final = (
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minContains",
    "maxContains",
)


def check_keywords(conv: Converter, loc: Location) -> None:
    """Reject keywords that cannot be enforced and obviously malformed keyword values.

    Once per schema object and conversion: a schema is entered several times (as a value,
    then flattened, through each reference to it). One that fails is checked again at its
    next visit, and fails again there."""
    schema = loc.schema
    if id(schema) in conv.checked_schemas:
        return
    for key, reason in UNSUPPORTED.items():
        if key in schema:
            conv.unsupported(reason, key, loc.pointer)
    t = schema.get("type")
    if t is not None:
        names = [t] if isinstance(t, str) else t if isinstance(t, list) else None
        if names is None or any(n not in TYPES for n in names):
            conv.unsupported(f"unknown type {t!r}", "type", loc.pointer)
    req = schema.get("required")
    if req is not None and not (isinstance(req, list) and all(isinstance(r, str) for r in req)):
        conv.unsupported("required must be a list of strings", "required", loc.pointer)
    for key in COUNT_KEYWORDS:
        if key in schema and malformed_count(schema[key]):
            conv.unsupported(malformed_count_message(key, schema[key]), key, loc.pointer)
    conv.checked_schemas.add(id(schema))
    conv.keep_alive(schema)  # (its id is in the set)


def malformed_count(value: Any) -> bool:
    """Whether ``value`` is not a non-negative integer (a float such as ``2.0`` is one, as
    JSON Schema counts numbers by value; ``true``, ``2.5``, ``-1``, ``"3"``, NaN and infinity
    are not)."""
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        return value < 0
    if isinstance(value, float):
        return not (value >= 0 and value.is_integer())
    return True


def malformed_count_message(key: str, value: Any) -> str:
    return f"{key} must be a non-negative integer, not {value!r}"


def count_keyword(schema: dict[str, Any], key: str) -> int | None:
    """A non-negative count keyword (``minItems``...): integers, or floats such as ``2.0``;
    None when absent, malformed (which :func:`check_keywords` refuses, unless the caller
    relaxed the keyword: then it is dropped), or an upper bound (``maxItems``...) past
    :data:`~tokensieve.ir.MAX_COUNT`, which reads as no bound."""
    v = schema.get(key)
    if v is None or malformed_count(v):
        return None
    if key.startswith("max") and v > MAX_COUNT:
        return None
    return int(v)
