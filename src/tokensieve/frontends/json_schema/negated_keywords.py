"""What "this keyword fails" means, keyword by keyword, as positive schemas.

:func:`negate_keyword` is the table behind :mod:`.negation`'s rewrite of ``not`` for arrays
and objects: ``not (k1 and k2 ...)`` is ``anyOf [k1 fails, k2 fails, ...]``, and each entry
here is exact. Keywords that quantify over *all* members of an object (``additionalProperties``,
``patternProperties``, ``propertyNames``) fail when *some* member breaks them, which a
grammar cannot say in general. It can when the rest of the conjunction bounds the keys
(``additionalProperties: false`` next to the ``not``, the usual ``oneOf`` situation): the
keys the keyword concerns, among those allowed, are then either none (the keyword cannot
fail), finitely many ("some key breaks it" is an ``anyOf`` of ``required`` keys), or all of
them (``additionalProperties: false`` fails exactly when the object is not empty).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from .automata import DFA, utf8_strings
from .disjoint import declared_key_language, disjoint, key_language, pattern_dfa
from .keywords import malformed_count, malformed_count_message
from .location import Location

if TYPE_CHECKING:
    from .converter import Converter

__all__ = ["MAX_FINITE_KEYS", "KeySpace", "differs_from", "negate_keyword"]

MAX_FINITE_KEYS: Final = 64
"""Most key names a negation enumerates (one ``anyOf`` branch each)."""

_ALL_TYPES: Final = ["null", "boolean", "integer", "number", "string", "array", "object"]
_COUNTS: Final = {
    "minProperties": ("object", "maxProperties", -1),
    "maxProperties": ("object", "minProperties", 1),
    "minItems": ("array", "maxItems", -1),
    "maxItems": ("array", "minItems", 1),
}


@dataclass
class KeySpace:
    """The names the objects under negation may have: ``language`` (None: any name)."""

    language: DFA | None

    @staticmethod
    def of(positive: list[Location]) -> KeySpace:
        """The key space of the objects satisfying ``positive``."""
        return KeySpace(key_language(positive))

    def among(self, names: DFA) -> list[str] | None:
        """The allowed names in ``names``, when finitely many (else None)."""
        inside = names if self.language is None else self.language.intersect(names)
        words = inside.finite_words(MAX_FINITE_KEYS)
        return None if words is None else [w.decode() for w in words]

    def finite_names(self) -> tuple[str, ...] | None:
        """The allowed names when finitely many (a hashable identity of this key space)."""
        if self.language is None:
            return None
        words = self.language.finite_words(MAX_FINITE_KEYS)
        return None if words is None else tuple(w.decode() for w in words)

    def only(self, names: DFA) -> bool:
        """True when every allowed name is in ``names``."""
        return self.language is not None and self.language.minus(names).is_empty()


def negate_keyword(conv: Converter, key: str, value: Any, loc: Location, keys: KeySpace) -> list[Any] | None:
    """Schemas whose union is "``key`` of the schema at ``loc`` fails" (None: not expressible).

    ``keys``: the names the objects in question may have.
    """
    s = loc.schema
    if key == "type":
        allowed = {value} if isinstance(value, str) else set(value)
        if "number" in allowed:
            allowed.add("integer")
        out: list[Any] = [{"type": [t for t in _ALL_TYPES if t not in allowed and t != "integer"]}]
        if "integer" in allowed and "number" not in allowed:
            out.append({"type": "number", "not": {"type": "integer"}})
        return out if out[0]["type"] or len(out) > 1 else []
    if key == "required":
        return [{"type": "object", "properties": {name: False}} for name in value]
    if key == "properties":
        return [
            {"type": "object", "required": [p], "properties": {p: {"not": sub}}} for p, sub in value.items()
        ]
    if key in _COUNTS:
        if malformed_count(value):  # (a negated schema's keywords are read here first)
            conv.unsupported(malformed_count_message(key, value), key, loc.pointer)
            return []  # relaxed: the keyword is dropped, so it never fails
        t, other, delta = _COUNTS[key]
        n = int(value) + delta
        return [{"type": t, other: n}] if n >= 0 else []
    if key == "items" and isinstance(value, (dict, bool)) and "prefixItems" not in s:
        return [{"type": "array", "contains": {"not": value}}]
    if key == "contains" and "minContains" not in s and "maxContains" not in s:
        return [{"type": "array", "items": {"not": value}}]
    if key == "not":
        return [value]
    if key == "anyOf" and isinstance(value, list):
        return [{"allOf": [{"not": b} for b in value]}]
    if key == "oneOf" and isinstance(value, list):
        return _one_of_fails(conv, value, loc)
    if key in ("enum", "const"):
        values = value if key == "enum" else [value]
        return [{"allOf": differs_from(values)}] if isinstance(values, list) else None
    if key in ("additionalProperties", "patternProperties", "propertyNames"):
        return _some_member_fails(conv, key, value, loc, keys)
    return None


def _one_of_fails(conv: Converter, branches: list[Any], loc: Location) -> list[Any]:
    """``oneOf`` fails when no branch matches or when two do (pairs proved disjoint skipped)."""
    from .composition import flatten
    from .location import child_pointer
    from .refs import Resolver

    arms = [
        flatten(conv, Resolver.enter(b, child_pointer(loc.pointer, "oneOf", j), loc.base))
        for j, b in enumerate(branches)
    ]
    out: list[Any] = [{"allOf": [{"not": b} for b in branches]}]
    for i in range(len(branches)):
        for j in range(i + 1, len(branches)):
            if not disjoint(conv, arms[i], arms[j]):
                out.append({"allOf": [branches[i], branches[j]]})
    return out


def differs_from(values: list[Any]) -> list[Any]:
    """Schemas that all hold exactly for the values equal (as JSON) to none of ``values``.

    Scalars are excluded together (``not enum``, subtracted on automata); an array or object
    value is excluded structurally: another length or key set, or one member that differs.
    """
    scalars = [v for v in values if not isinstance(v, (list, dict))]
    out: list[Any] = [{"not": {"enum": scalars}}] if scalars else []
    for v in values:
        if isinstance(v, list):
            out.append({"anyOf": _array_differs(v)})
        elif isinstance(v, dict):
            out.append({"anyOf": _object_differs(v)})
    return out


def _array_differs(v: list[Any]) -> list[Any]:
    n = len(v)
    out: list[Any] = [{"not": {"type": "array"}}, {"type": "array", "minItems": n + 1}]
    if n:
        out.append({"type": "array", "maxItems": n - 1})
    for i, item in enumerate(v):
        prefix: list[Any] = [True] * i + [{"allOf": differs_from([item])}]
        out.append({"type": "array", "minItems": n, "maxItems": n, "prefixItems": prefix})
    return out


def _object_differs(v: dict[str, Any]) -> list[Any]:
    names = list(v)
    out: list[Any] = [{"not": {"type": "object"}}]
    out += [{"type": "object", "properties": {k: False}} for k in names]
    # Every name present: another key set means one more key.
    out.append({"type": "object", "required": names, "minProperties": len(names) + 1})
    out += [
        {"type": "object", "required": [k], "properties": {k: {"allOf": differs_from([v[k]])}}} for k in names
    ]
    return out


def _some_member_fails(
    conv: Converter, key: str, value: Any, loc: Location, keys: KeySpace
) -> list[Any] | None:
    """Some present member breaks ``key`` (None: not expressible with this key space)."""
    if key == "propertyNames":
        names = keys.among(utf8_strings())
        if names is None:
            return None
        rule = loc.with_schema(value)
        return [{"type": "object", "required": [n]} for n in names if not conv.is_valid(n, rule)]
    if key == "patternProperties":
        if not isinstance(value, dict):
            return None
        out: list[Any] = []
        for pattern, sub in value.items():
            matched = pattern_dfa(pattern)
            names = None if matched is None else keys.among(matched)
            if names is None:
                return None
            out += [_member_fails(n, sub) for n in names]
        return out
    declared = declared_key_language(loc.schema)
    if declared is None:
        return None
    additional = utf8_strings().minus(declared)
    names = keys.among(additional)
    if names is not None:
        return [_member_fails(n, value) for n in names]
    if value is False and keys.only(additional):
        return [{"type": "object", "minProperties": 1}]  # every allowed key is an additional one
    return None


def _member_fails(name: str, schema: Any) -> dict[str, Any]:
    return {"type": "object", "required": [name], "properties": {name: {"not": schema}}}
