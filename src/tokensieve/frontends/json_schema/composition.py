"""Composition: ``allOf``, ``anyOf``, ``oneOf``, ``not``, ``if``/``then``/``else``, dependencies.

A schema is evaluated as a *conjunction*: a list of schema objects (:class:`Location`)
that must all hold. :func:`flatten` inlines ``allOf`` and ``$ref`` (with siblings) into
that list and rewrites the dependency keywords into composition:

- ``dependentRequired {p: [q]}``  = ``anyOf [{properties: {p: false}}, {required: [p, q]}]``
- ``dependentSchemas {p: S}``     = ``anyOf [{properties: {p: false}}, allOf [{required: [p]}, S]]``
- ``if I then T else E``          = ``anyOf [allOf [I, T], allOf [not I, E]]`` (disjoint)

:func:`conjunction_value` then distributes ``anyOf``/``oneOf`` (one alternative per
branch), applies ``not`` (:mod:`.negation`), keeps the ``enum``/``const`` values that pass
every schema, and finally splits by JSON type. ``oneOf`` is exact only when its branches
are provably disjoint (:mod:`.disjoint`) is a plain alternation; otherwise each arm also
carries ``not`` of the branches it may overlap, which is exact where ``not`` is.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

from ...errors import GrammarSyntaxError, UnsatisfiableSchemaError, UnsupportedSchemaError
from ...ir import NOTHING, Expr, alt
from ..regex import parse_regex
from . import formats, negation
from .disjoint import GROUPS, disjoint, disjoint_on, possible_types, says_nothing_about
from .keywords import TYPES, check_keywords, count_keyword, schema_types
from .literals import literal_value
from .location import Location, child_pointer
from .numbers import NumberSpec
from .refs import Resolver
from .strings import StringSpec

if TYPE_CHECKING:
    from .converter import Converter

__all__ = ["conjunction_value", "flatten", "tighten_number", "tighten_string", "types_of"]

_MAX_BRANCHES: Final = 256


def flatten(conv: Converter, loc: Location) -> list[Location]:
    """The schema at ``loc`` as a list of schema objects that must all hold.

    Remembered per conversion: conjunctions, disjointness tests and type questions flatten
    the same subschemas again and again, and each flattening resolves its ``$ref`` s anew.
    Returning the same synthesized schemas (``if`` and dependencies rewritten) each time also
    lets the memos keyed by schema ids downstream hit."""
    key = ("flatten", id(loc.schema), loc.pointer, loc.base, loc.scope, loc.annotates)
    # (The memo is read here rather than through conv.remembered: most calls hit, and a hit
    # then makes no closure.)
    hit = conv.memo.get(key)
    if hit is None:
        hit = (tuple(_flatten(conv, loc)), (loc.schema,))
        conv.memo[key] = hit
    return list(hit[0])


def _flatten(conv: Converter, loc: Location) -> list[Location]:
    out: list[Location] = []
    _add_conjuncts(conv, loc, out, [])
    return out


def _add_conjuncts(conv: Converter, here: Location, out: list[Location], active: list[int]) -> None:
    """Append the schema at ``here`` and the conjuncts it implies (``$ref``, ``allOf``,
    rewritten dependencies) to ``out``; ``active`` holds the ids of the schemas being added.

    A module-level function rather than a closure: a recursive closure is a reference cycle,
    which would keep the whole conversion alive until the garbage collector runs."""
    s = here.schema
    if s is True:
        return
    if s is False or not isinstance(s, dict):
        out.append(Location(False, here.pointer, here.base))
        return
    if id(s) in active:  # A = allOf[A, ...]: A is already part of the conjunction
        return
    check_keywords(conv, here)
    active.append(id(s))
    out.append(here)
    ref = s.get("$ref")
    if isinstance(ref, str):
        _add_conjuncts(conv, here.inside(conv.resolver.resolve(ref, here)), out, active)
    dyn = s.get("$dynamicRef")
    if isinstance(dyn, str):
        _add_conjuncts(conv, here.inside(conv.resolver.resolve_dynamic(dyn, here)), out, active)
    for i, sub in enumerate(s.get("allOf") or []):
        where = Resolver.enter(sub, child_pointer(here.pointer, "allOf", i), here.base)
        _add_conjuncts(conv, here.inside(where), out, active)
    for extra in _rewrites(here):
        out.append(extra)
    active.pop()


_DEPENDENCY_KEYWORDS: Final = ("dependencies", "dependentRequired", "dependentSchemas")
_REWRITTEN_KEYWORDS: Final = frozenset((*_DEPENDENCY_KEYWORDS, "if"))


def _rewrites(loc: Location) -> list[Location]:
    """Dependency keywords and ``if`` rewritten as ``anyOf`` conjuncts."""
    s = loc.schema
    out: list[Location] = []
    if _REWRITTEN_KEYWORDS.isdisjoint(s):
        return out  # (most schemas: no closure made, no keyword looked up one by one)

    def synth(schema: dict[str, Any], *where: str | int) -> None:
        out.append(loc.inside(Location(schema, child_pointer(loc.pointer, *where), loc.base)))

    deps: dict[str, Any] = {}
    for key in _DEPENDENCY_KEYWORDS:
        if isinstance(s.get(key), dict):
            deps.update({name: (key, v) for name, v in s[key].items()})
    for name, (key, dep) in deps.items():
        absent = {"properties": {name: False}}
        if isinstance(dep, list):
            synth(
                {"anyOf": [absent, {"type": "object", "required": [name, *dep]}], "x-disjoint": True},
                key,
                name,
            )
        else:
            synth(
                {
                    "anyOf": [absent, {"allOf": [{"type": "object", "required": [name]}, dep]}],
                    "x-disjoint": True,
                },
                key,
                name,
            )
    if "if" in s:  # even alone: a passing "if" contributes annotations (unevaluated*)
        then = s.get("then", True)
        other = s.get("else", True)
        synth(
            {"anyOf": [{"allOf": [s["if"], then]}, {"allOf": [{"not": s["if"]}, other]}], "x-disjoint": True},
            "if",
        )
    return out


# ----------------------------------------------------------------------------- conjunctions


def types_of(conj: list[Location]) -> frozenset[str]:
    """The JSON types every schema of the conjunction allows."""
    # Called for every conjunction and disjointness test (820 times per schema among the
    # slowest MaskBench schemas): a schema without ``type``, or the first with one, makes no
    # new set.
    types = TYPES
    for loc in conj:
        schema = loc.schema
        if schema is False:
            return _NO_TYPES
        allowed = schema_types(schema)
        if allowed is not TYPES:
            types = allowed if types is TYPES else types & allowed
        if "enum" in schema:
            values = schema["enum"]
            if isinstance(values, list):
                types &= _values_types(values)
        if "const" in schema:
            types &= _value_types(schema["const"])
    return types


def _values_types(values: list[Any]) -> frozenset[str]:
    """The JSON types of an enum's values. One pass that makes no set while the values keep
    to the types seen so far: an enum of 24 strings was a fifth of Github_medium o62056's
    front-end when each value made its own set for a union."""
    out = _NO_TYPES
    for value in values:
        kind = _value_types(value)
        if kind is not out and not kind <= out:
            out = kind if out is _NO_TYPES else out | kind
    return out


_NO_TYPES: Final[frozenset[str]] = frozenset()
_NULL: Final = frozenset({"null"})
_BOOLEAN: Final = frozenset({"boolean"})
_INTEGER: Final = frozenset({"integer", "number"})
_NUMBER: Final = frozenset({"number"})
_STRING: Final = frozenset({"string"})
_ARRAY: Final = frozenset({"array"})
_OBJECT: Final = frozenset({"object"})


def _value_types(value: Any) -> frozenset[str]:
    if isinstance(value, str):  # the usual enum value first
        return _STRING
    if value is None:
        return _NULL
    if isinstance(value, bool):
        return _BOOLEAN
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return _INTEGER
    if isinstance(value, float):
        return _NUMBER
    if isinstance(value, str):
        return _STRING
    return _ARRAY if isinstance(value, list) else _OBJECT


_ORIGIN: Final = "x-tokensieve-origin"  # id of the schema object a stripped copy was made from


def _strip(conv: Converter, loc: Location, *keys: str) -> Location:
    stripped = {k: v for k, v in loc.schema.items() if k not in keys}
    if _ORIGIN not in loc.schema:
        # The id names the origin only while the origin lives: a copy can outlive a schema
        # made during conversion, and a recycled id would then mark another schema's
        # anyOf/oneOf as already distributed.
        conv.keep_alive(loc.schema)
    stripped[_ORIGIN] = loc.schema.get(_ORIGIN, id(loc.schema))
    return loc.with_schema(stripped)


def conjunction_value(
    conv: Converter, conj: list[Location], width: int = 1, done: frozenset[tuple[int, str]] = frozenset()
) -> Expr:
    """The serializations of the instances that satisfy every schema of ``conj``.

    ``width`` is how many alternatives the enclosing ``anyOf``/``oneOf`` distributions have
    already made; their product is bounded by :data:`_MAX_BRANCHES`. ``done`` names the
    ``anyOf``/``oneOf`` already distributed on this path: when a branch brings the same one
    back (through a ``$ref`` cycle), the choice made earlier already satisfies it.
    """
    if any(loc.schema is False for loc in conj) or not types_of(conj):
        return NOTHING
    conv.check_deadline()
    for i, loc in enumerate(conj):
        for key in ("anyOf", "oneOf"):
            branches = loc.schema.get(key)
            if not isinstance(branches, list):
                continue
            rest = [*conj[:i], _strip(conv, loc, key), *conj[i + 1 :]]
            mark = (loc.schema.get(_ORIGIN, id(loc.schema)), key)
            if mark in done:
                return conjunction_value(conv, rest, width, done)
            arms = [
                rest
                + flatten(conv, loc.inside(Resolver.enter(b, child_pointer(loc.pointer, key, j), loc.base)))
                for j, b in enumerate(branches)
            ]
            if key == "oneOf" and not loc.schema.get("x-disjoint"):
                arms = _exclusive_arms(conv, rest, arms, branches, loc)
            elif key == "anyOf" and not loc.schema.get("x-disjoint") and _seen_by_unevaluated(conj, loc):
                _require_disjoint(conv, arms, loc)
            arms = [arm for arm in arms if types_of(arm)]  # arms of incompatible types are empty
            if width * len(arms) > _MAX_BRANCHES:
                raise UnsupportedSchemaError(
                    f"more than {_MAX_BRANCHES} alternatives after distributing anyOf/oneOf",
                    keyword=key,
                    pointer=loc.pointer,
                )
            options = []
            for arm in arms:
                try:
                    options.append(conjunction_value(conv, arm, width * len(arms), done | {mark}))
                except UnsatisfiableSchemaError:
                    continue  # an empty branch adds nothing
            return alt(*options) if options else NOTHING
    types = types_of(conj)
    values = _enum_values(conj)
    if values is not None:
        # Every candidate is in every enum and const of the conjunction already (they were
        # intersected), so each value is checked against the rest of each schema: validating
        # a 500-value enum against its own list is quadratic.
        unlisted = [_without_listing(conv, loc) for loc in conj]
        kept = [v for v in values if all(conv.is_valid(v, loc) for loc in unlisted)]
        return alt(*(literal_value(conv, v) for v in kept)) if kept else NOTHING
    nots = [loc for loc in conj if "not" in loc.schema]
    if nots:
        return negation.with_negations(conv, conj, types, nots)
    return conv.typed_value(conj, types)


def _without_listing(conv: Converter, loc: Location) -> Location:
    """``loc`` with its schema's ``enum`` and ``const`` left out (one object per schema and
    place, so validators built for it are reused)."""
    s = loc.schema
    if not isinstance(s, dict) or ("enum" not in s and "const" not in s):
        return loc
    return conv.remembered(
        ("unlisted", id(s), loc.pointer, loc.base),
        lambda: loc.with_schema({k: v for k, v in s.items() if k not in ("enum", "const")}),
        s,
    )


def _enum_values(conj: list[Location]) -> list[Any] | None:
    """The candidate values when some schema lists them (``enum``/``const``), else None."""
    values: list[Any] | None = None
    for loc in conj:
        for key in ("enum", "const"):
            if key not in loc.schema:
                continue
            mine = loc.schema[key] if key == "enum" else [loc.schema[key]]
            if not isinstance(mine, list):
                raise UnsupportedSchemaError("enum must be an array", keyword="enum", pointer=loc.pointer)
            if values is None:
                values = []
                seen: set[tuple[str, Any]] = set()
                containers: list[Any] = []
                for v in mine:  # no duplicates (by JSON equality): scalars by key, in linear time
                    k = _scalar_key(v)
                    if k is None:
                        if not any(json_equal(v, w) for w in containers):
                            containers.append(v)
                            values.append(v)
                    elif k not in seen:
                        seen.add(k)
                        values.append(v)
            else:
                listed = listed_in(mine)
                values = [v for v in values if listed(v)]
    return values


def listed_in(values: list[Any]) -> Callable[[Any], bool]:
    """A test for membership in ``values`` (by JSON equality): scalars by key, in constant time."""
    scalars = {k for w in values if (k := _scalar_key(w)) is not None}
    others = [w for w in values if _scalar_key(w) is None]

    def listed(value: Any) -> bool:
        k = _scalar_key(value)
        return k in scalars if k is not None else any(json_equal(value, w) for w in others)

    return listed


def _scalar_key(value: Any) -> tuple[str, Any] | None:
    """A key equal for two scalars exactly when they are equal JSON values (``1`` and ``1.0``
    share one; ``true`` and ``1`` do not); None for arrays and objects."""
    if value is None or isinstance(value, (bool, str)):
        return (type(value).__name__, value)
    if isinstance(value, (int, float)):
        return ("number", value)
    return None


def json_equal(a: Any, b: Any) -> bool:
    """JSON Schema equality: 1 == 1.0, but true != 1; objects unordered."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


# ----------------------------------------------------------------------------- oneOf


def _seen_by_unevaluated(conj: list[Location], loc: Location) -> bool:
    """Whether an ``unevaluated*`` keyword sees the annotations of the schema at ``loc``."""
    return any(
        ("unevaluatedProperties" in u.schema or "unevaluatedItems" in u.schema)
        and (u is loc or u.key in loc.scope or u.key == loc.key)
        for u in conj
    )


def _require_disjoint(conv: Converter, arms: list[list[Location]], loc: Location) -> None:
    """With ``unevaluated*``, every anyOf branch that matches contributes annotations; one
    alternative per branch is exact only when no value can match two branches."""
    for i in range(len(arms)):
        for j in range(i + 1, len(arms)):
            if not disjoint(conv, arms[i], arms[j]):
                conv.unsupported(
                    f"branches {i} and {j} may both match, and unevaluatedProperties/Items would "
                    "then see the annotations of both",
                    "anyOf",
                    loc.pointer,
                )
                return


def _exclusive_arms(
    conv: Converter, rest: list[Location], arms: list[list[Location]], branches: list[Any], loc: Location
) -> list[list[Location]]:
    """``oneOf`` arms: branch i, minus every branch j it may overlap, type by type.

    ``rest`` (the other schemas of the conjunction) starts every arm. For each type group
    where arms i and j may share values, arm i either drops the group (branch j accepts
    every value of it) or carries ``not`` branch j for that group only; groups where the two
    are provably disjoint need nothing (:mod:`.disjoint`). This keeps ``not`` away from
    keywords it cannot negate (``additionalProperties``...) whenever a discriminator exists.
    """
    possible = [possible_types(conv, arm) for arm in arms]
    out = []
    for i, arm in enumerate(arms):
        allowed = set(possible[i])
        extra: list[Location] = []
        for j, other in enumerate(arms):
            if j == i:
                continue
            own = other[len(rest) :]  # branch j alone: arm i satisfies rest already
            needs_not: set[str] = set()
            for group in GROUPS:
                if not group & possible[i] & possible[j] or disjoint_on(conv, arm, other, group):
                    continue
                if says_nothing_about(own, group):
                    allowed -= group  # every value of this type satisfies branch j
                else:
                    needs_not |= group & possible[i]
            if not needs_not:
                continue
            pointer = child_pointer(loc.pointer, "oneOf", j)
            negated = {"type": sorted(needs_not), "not": branches[j]}
            others = sorted(allowed - needs_not)
            schema = {"anyOf": [{"type": others}, negated], "x-disjoint": True} if others else negated
            extra.append(Location(schema, pointer, loc.base))
        if allowed != possible[i]:
            where = child_pointer(loc.pointer, "oneOf", i)
            extra.append(Location({"type": sorted(allowed)}, where, loc.base))
        out.append(arm + extra)
    return out


# ----------------------------------------------------------------------------- scalar keywords


def _decimal(value: Any, keyword: str, pointer: str) -> Decimal | None:
    """A numeric keyword's value as an exact decimal (None: not a number). JSON has no
    infinities or NaN, but Python's ``json`` reads ``Infinity`` and ``NaN`` and a schema given
    as a dict may hold them: refused by name, rather than failing deep in the automata."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        raise UnsupportedSchemaError(
            f"{keyword} must be a finite number, not {value!r}", keyword=keyword, pointer=pointer
        )
    return Decimal(value) if isinstance(value, int) else Decimal(repr(value))


def tighten_number(conv: Converter, spec: NumberSpec, loc: Location) -> None:
    """Add the numeric keywords of one schema object to ``spec``."""
    s = loc.schema
    bounds = [
        ("minimum", False, True),
        ("maximum", False, False),
        ("exclusiveMinimum", True, True),
        ("exclusiveMaximum", True, False),
    ]
    for key, strict, lower in bounds:
        raw = s.get(key)
        if isinstance(raw, bool):  # draft-04: exclusiveMinimum/Maximum flag the plain bound
            continue
        v = _decimal(raw, key, loc.pointer)
        if v is None:
            continue
        if not strict:
            strict = s.get("exclusiveMinimum" if lower else "exclusiveMaximum") is True
        if lower:
            if spec.lower is None or v > spec.lower or (v == spec.lower and strict):
                spec.lower, spec.lower_strict = v, strict
        elif spec.upper is None or v < spec.upper or (v == spec.upper and strict):
            spec.upper, spec.upper_strict = v, strict
    step = _decimal(s.get("multipleOf"), "multipleOf", loc.pointer)
    if step is None:
        return
    if step <= 0:
        raise UnsupportedSchemaError(
            "multipleOf must be greater than 0", keyword="multipleOf", pointer=loc.pointer
        )
    # Multiples of both a and b are the multiples of lcm(a, b) (decimals scaled to integers).
    if spec.multiple_of is None:
        spec.multiple_of = step
    else:
        a, b = spec.multiple_of, step
        scale = max(-a.as_tuple().exponent, -b.as_tuple().exponent, 0)  # type: ignore[operator]
        ia, ib = int(a.scaleb(scale)), int(b.scaleb(scale))
        spec.multiple_of = Decimal(ia * ib // math.gcd(ia, ib)).scaleb(-scale)


@lru_cache(maxsize=1024)
def _pattern_language(pattern: str) -> Expr:
    """A ``pattern`` as a content language, parsed once per pattern (so that its automaton,
    remembered per expression object, is built once too)."""
    return parse_regex(pattern, search=True)


def tighten_string(conv: Converter, spec: StringSpec, loc: Location) -> None:
    """Add the string keywords of one schema object to ``spec``."""
    s = loc.schema
    lo, hi = count_keyword(s, "minLength"), count_keyword(s, "maxLength")
    if lo is not None:
        spec.min_length = max(spec.min_length, lo)
    if hi is not None:
        spec.max_length = hi if spec.max_length is None else min(spec.max_length, hi)
    pattern = s.get("pattern")
    if isinstance(pattern, str):
        try:
            spec.languages.append(("pattern", _pattern_language(pattern)))
        except GrammarSyntaxError as exc:
            conv.unsupported(f"pattern {pattern!r}: {exc}", "pattern", child_pointer(loc.pointer, "pattern"))
    fmt = s.get("format")
    if isinstance(fmt, str):
        if fmt in formats.NOT_REGULAR:
            conv.unsupported(f"format {fmt!r} is not a regular language", "format", loc.pointer)
            return
        lang = formats.format_language(fmt)
        if lang is not None:
            spec.languages.append(("format", lang))
