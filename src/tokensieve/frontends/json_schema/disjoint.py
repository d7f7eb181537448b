"""Disjointness proofs: can two conjunctions of schemas share a value?

``oneOf`` is exact only if no value matches two branches, so each arm carries ``not`` of the
branches it may overlap (:mod:`.composition`). Negating a whole branch is often impossible
in a grammar (``not {additionalProperties: false}``), and usually unnecessary: branches of
real schemas are told apart by a discriminator (``kind: {const: "a"}``), by the type of a
required property, or by the keys they allow. This module proves such facts, type by type,
so that ``not`` is only asked for where the branches really overlap.

Every test here is *sound*: ``True`` means that no value satisfies both sides. It is not
complete: ``False`` means "not proved", and the caller then falls back to ``not``.

Type groups: values are split into the six JSON kinds of :data:`GROUPS` (integers and other
numbers form one group, since ``type: number`` admits both).
"""

from __future__ import annotations

from collections import OrderedDict
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

from ...errors import GrammarSyntaxError
from ...ir import Expr, alt, literal
from ..regex import parse_regex
from .automata import DFA, NotRegular, dfa_from_expr
from .keywords import count_keyword, schema_types
from .location import Location, child_pointer
from .refs import Resolver

if TYPE_CHECKING:
    from .converter import Converter

__all__ = [
    "GROUPS",
    "disjoint",
    "disjoint_on",
    "group_of",
    "declared_key_language",
    "key_language",
    "pattern_dfa",
    "pattern_matches",
    "possible_types",
    "says_nothing_about",
]

GROUPS: Final[tuple[frozenset[str], ...]] = (
    frozenset({"null"}),
    frozenset({"boolean"}),
    frozenset({"integer", "number"}),
    frozenset({"string"}),
    frozenset({"array"}),
    frozenset({"object"}),
)

_TYPE_KEYWORDS: Final[dict[str, frozenset[str]]] = {
    "string": frozenset({"minLength", "maxLength", "pattern", "format"}),
    "number": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}),
    "array": frozenset(
        {
            "items",
            "prefixItems",
            "additionalItems",
            "minItems",
            "maxItems",
            "contains",
            "minContains",
            "maxContains",
            "uniqueItems",
            "unevaluatedItems",
        }
    ),
    "object": frozenset(
        {
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
            "unevaluatedProperties",
        }
    ),
}
_GENERAL: Final = frozenset({"enum", "const", "anyOf", "oneOf", "not", "if"})
_MAX_DEPTH: Final = 6  # nested property values / anyOf branches looked into


def group_of(name: str) -> frozenset[str]:
    """The type group a JSON type name belongs to."""
    return next(g for g in GROUPS if name in g)


# ----------------------------------------------------------------------------- types


def possible_types(conv: Converter, conj: list[Location], depth: int = 0) -> frozenset[str]:
    """The JSON types a value satisfying ``conj`` can have (a superset).

    Sharper than :func:`.composition.types_of`: ``anyOf``/``oneOf`` contribute the union of
    their branches' types, ``not {type: T}`` removes T.
    """
    from .composition import types_of

    types = types_of(conj)
    if depth >= _MAX_DEPTH or not types:
        return types
    # Disjointness questions ask about the same conjunctions over and over (every pair of
    # oneOf arms, every nesting level): remembered per conversion.
    key = ("possible_types", depth, _conjunction_key(conj))
    hit = conv.memo.get(key)  # (read here, as in composition.flatten: a hit makes no closure)
    if hit is None:
        hit = (_narrowed_types(conv, conj, types, depth), _schemas(conj))
        conv.memo[key] = hit
    return hit[0]  # type: ignore[no-any-return]


def _narrowed_types(
    conv: Converter, conj: list[Location], types: frozenset[str], depth: int
) -> frozenset[str]:
    """``types`` less what the conjunction's ``anyOf``/``oneOf`` branches and ``not {type}`` rule out."""
    from .composition import flatten

    for loc in conj:
        for key in ("anyOf", "oneOf"):
            branches = loc.schema.get(key)
            if not isinstance(branches, list):
                continue
            union: frozenset[str] = frozenset()
            for j, b in enumerate(branches):
                sub = Resolver.enter(b, child_pointer(loc.pointer, key, j), loc.base)
                union |= possible_types(conv, flatten(conv, loc.inside(sub)), depth + 1)
            types &= union
        neg = loc.schema.get("not")
        if isinstance(neg, dict) and set(neg) == {"type"}:
            excluded = schema_types(neg)
            if "integer" in excluded and "number" not in excluded:
                excluded -= {"integer"}  # non-integral numbers still pass
            types -= excluded
    return types


def says_nothing_about(conj: list[Location], group: frozenset[str]) -> bool:
    """True when every value of the type group satisfies ``conj``."""
    names = set().union(*(_TYPE_KEYWORDS.get(t, frozenset()) for t in group)) | _GENERAL
    for loc in conj:
        if loc.schema is False or not isinstance(loc.schema, dict):
            return False
        if not (group - {"integer"}) <= schema_types(loc.schema):
            return False
        if any(k in names for k in loc.schema):
            return False
    return True


# ----------------------------------------------------------------------------- disjointness


def disjoint(conv: Converter, a: list[Location], b: list[Location], depth: int = 0) -> bool:
    """True when no value can satisfy both conjunctions (a sound, incomplete test)."""
    shared = possible_types(conv, a, depth) & possible_types(conv, b, depth)
    return all(disjoint_on(conv, a, b, g, depth) for g in GROUPS if g & shared)


def disjoint_on(
    conv: Converter, a: list[Location], b: list[Location], group: frozenset[str], depth: int = 0
) -> bool:
    """True when no value of the type group satisfies both conjunctions."""
    if not group & possible_types(conv, a, depth) & possible_types(conv, b, depth):
        return True
    # oneOf asks about arms (i, j) and (j, i), and nested arms repeat the questions of their
    # parents: remembered per conversion, for the unordered pair (the test is symmetric).
    # The entry keeps the schemas alive, since their ids are the key.
    key = ("disjoint_on", frozenset((_conjunction_key(a), _conjunction_key(b))), group, depth)
    return conv.remembered(key, lambda: _disjoint_on(conv, a, b, group, depth), *_schemas(a), *_schemas(b))


def _conjunction_key(conj: list[Location]) -> tuple[tuple[int, str, Any], ...]:
    return tuple((id(loc.schema), loc.pointer, loc.base) for loc in conj)


def _schemas(conj: list[Location]) -> list[Any]:
    return [loc.schema for loc in conj]


def _disjoint_on(
    conv: Converter, a: list[Location], b: list[Location], group: frozenset[str], depth: int
) -> bool:
    from .composition import _enum_values, _without_listing, listed_in

    for mine, other in ((a, b), (b, a)):
        values = _enum_values(mine)
        if values is None:
            continue
        # The values are in every enum and const of `mine` already; those of `other` are
        # looked up, and every schema is checked without its listing: a large enum checked
        # value by value against its own list is quadratic.
        theirs = _enum_values(other)
        in_other = listed_in(theirs) if theirs is not None else None
        rest = [_without_listing(conv, loc) for loc in [*mine, *other]]
        if not any(
            _in_group(v, group)
            and (in_other is None or in_other(v))
            and all(conv.is_valid(v, loc) for loc in rest)
            for v in values
        ):
            return True
    if group == GROUPS[-1] and depth < _MAX_DEPTH and _objects_disjoint(conv, a, b, depth):
        return True
    if group == GROUPS[3] and _strings_disjoint(a, b):
        return True
    return depth < _MAX_DEPTH and (
        _branches_disjoint(conv, a, b, group, depth) or _branches_disjoint(conv, b, a, group, depth)
    )


_MAX_SPLIT: Final = 16  # anyOf/oneOf branches looked into, per conjunction


def _branches_disjoint(
    conv: Converter, a: list[Location], b: list[Location], group: frozenset[str], depth: int
) -> bool:
    """``a`` holds an ``anyOf``/``oneOf`` each of whose branches (with the rest of ``a``) is
    disjoint from ``b``: then ``a`` is."""
    from .composition import flatten

    for i, loc in enumerate(a):
        for key in ("anyOf", "oneOf"):
            branches = loc.schema.get(key)
            if not isinstance(branches, list) or not branches or len(branches) > _MAX_SPLIT:
                continue
            rest = [*a[:i], loc.with_schema({k: v for k, v in loc.schema.items() if k != key}), *a[i + 1 :]]
            if all(
                disjoint_on(
                    conv,
                    rest
                    + flatten(
                        conv, loc.inside(Resolver.enter(br, child_pointer(loc.pointer, key, j), loc.base))
                    ),
                    b,
                    group,
                    depth + 1,
                )
                for j, br in enumerate(branches)
            ):
                return True
            return False  # one split per conjunction: the cost stays linear in the branches
    return False


def _in_group(value: Any, group: frozenset[str]) -> bool:
    if value is None:
        return "null" in group
    if isinstance(value, bool):
        return "boolean" in group
    if isinstance(value, (int, float)):
        return "number" in group
    if isinstance(value, str):
        return "string" in group
    return ("array" if isinstance(value, list) else "object") in group


def _strings_disjoint(a: list[Location], b: list[Location]) -> bool:
    """Strings: the two sides' lengths exclude each other, or no string matches the patterns
    of both (``oneOf`` of ``^\\d+$`` and ``^>=\\d+$``; without this proof each arm carried
    ``not`` of the others, subtracted on automata of the JSON spellings).

    Sound because every ``pattern`` and length keyword of a conjunction constrains its
    strings: the same content languages the string builder intersects
    (:func:`.composition.tighten_string`), and what is left out (formats, patterns that
    cannot be read or whose automata are past :data:`_MAX_PROOF_STATES`) only widens a side.
    Formats are left out for their cost: the automaton of ``iri`` takes 12 ms to refuse at
    any bound (Github_hard o13457 spent 141 ms on one, comparing two properties' values), and
    the branches formats would tell apart are rare. At least one pattern on each side, or
    nothing is tried: a pattern with nothing to meet is rarely empty."""
    lo, hi = 0, None
    langs: list[Expr] = []
    sides = 0
    for side in (a, b):
        found = False
        for loc in side:
            s = loc.schema
            if not isinstance(s, dict):
                continue
            least, most = count_keyword(s, "minLength"), count_keyword(s, "maxLength")
            lo = max(lo, least or 0)
            hi = most if hi is None else hi if most is None else min(hi, most)
            pattern = s.get("pattern")
            lang = _pattern_language(pattern) if isinstance(pattern, str) else None
            if lang is not None:
                found = True
                if all(lang is not seen for seen in langs):
                    langs.append(lang)
        sides += found
    if hi is not None and lo > hi:
        return True
    if sides < 2:
        return False
    try:
        dfa = dfa_from_expr(langs[0], _MAX_PROOF_STATES)
        for lang in langs[1:]:
            dfa = dfa.intersect(dfa_from_expr(lang, _MAX_PROOF_STATES))
        return dfa.is_empty()
    except (OverflowError, NotRegular):
        return False


# Most states a pattern's automaton may pass through for :func:`_strings_disjoint` (past it:
# not proved). The patterns that tell oneOf branches apart have tens of states (pubspec's
# version range, 45, passes through more than 1000 on the way).
_MAX_PROOF_STATES: Final = 2000


def _objects_disjoint(conv: Converter, a: list[Location], b: list[Location], depth: int) -> bool:
    """Objects: a property required on one side whose values cannot match on both sides
    (a discriminator, a forbidden property, values of different types...), or keys that
    one side requires and the other does not allow."""
    from .composition import flatten

    # The answer is the same whichever name is tried first (each test is a pure, remembered
    # function of the two sides); the order only decides the cost. The proofs that succeed
    # are mostly cheap: a required name that the other side forbids (its value schema is
    # ``false``, as past ``additionalProperties: false``) or values of types that never meet
    # (the first step of :func:`disjoint`), then a listed discriminator (``type: {enum:
    # [story]}``). The proofs that fail can be costly: they go down nested objects (the
    # WashingtonPost oneOf of content, reference and embed tried ``referent`` first, in
    # alphabetical order, 2 ms of a 25 ms compile, and ``version`` proved it in a step).
    pairs: list[tuple[bool, list[Location], list[Location]]] = []
    for name in sorted(_required(a) | _required(b)):
        va, vb = _value_schemas(a, name), _value_schemas(b, name)
        if va is None or vb is None:
            continue
        fa = [f for loc in va for f in flatten(conv, loc)]
        fb = [f for loc in vb for f in flatten(conv, loc)]
        if not possible_types(conv, fa, depth + 1) & possible_types(conv, fb, depth + 1):
            return True
        pairs.append((not (_lists_values(fa) or _lists_values(fb)), fa, fb))
    pairs.sort(key=lambda pair: pair[0])  # stable: listed values first, then by name
    for _, fa, fb in pairs:
        if disjoint(conv, fa, fb, depth + 1):
            return True
    return _keys_disjoint(a, b) or _keys_disjoint(b, a) or _counts_disjoint(a, b) or _counts_disjoint(b, a)


def _lists_values(conj: list[Location]) -> bool:
    """Some schema of ``conj`` lists its values (``enum`` or ``const``)."""
    return any(
        isinstance(loc.schema, dict) and ("enum" in loc.schema or "const" in loc.schema) for loc in conj
    )


def _counts_disjoint(a: list[Location], b: list[Location]) -> bool:
    """``a`` needs more properties (required names, minProperties) than ``b`` allows."""
    caps = [n for loc in b if (n := count_keyword(loc.schema, "maxProperties")) is not None]
    if not caps:
        return False
    least = max([len(_required(a))] + [_count(loc.schema, "minProperties") for loc in a])
    return least > min(caps)


def _required(conj: list[Location]) -> set[str]:
    out: set[str] = set()
    for loc in conj:
        req = loc.schema.get("required")
        if isinstance(req, list):
            out.update(r for r in req if isinstance(r, str))
    return out


def _value_schemas(conj: list[Location], name: str) -> list[Location] | None:
    """The schemas the value of property ``name`` must satisfy (None: a pattern that the
    regex front-end cannot read, so which schemas apply is unknown)."""
    out: list[Location] = []
    for loc in conj:
        s = loc.schema
        matched = False
        props = s.get("properties")
        if isinstance(props, dict) and name in props:
            out.append(Resolver.enter(props[name], child_pointer(loc.pointer, "properties", name), loc.base))
            matched = True
        patterns = s.get("patternProperties")
        for pattern, sub in (patterns or {}).items() if isinstance(patterns, dict) else ():
            hit = pattern_matches(pattern, name)
            if hit is None:
                return None
            if hit:
                where = child_pointer(loc.pointer, "patternProperties", pattern)
                out.append(Resolver.enter(sub, where, loc.base))
                matched = True
        if not matched and "additionalProperties" in s:
            where = child_pointer(loc.pointer, "additionalProperties")
            out.append(Resolver.enter(s["additionalProperties"], where, loc.base))
    return out


def _keys_disjoint(a: list[Location], b: list[Location]) -> bool:
    """``a`` has at least one key, and every key ``a`` allows is one ``b`` forbids."""
    if not _required(a) and not any(_count(loc.schema, "minProperties") >= 1 for loc in a):
        return False
    la, lb = key_language(a), key_language(b)
    if la is None and lb is None:
        return False
    try:
        if la is None:
            return lb.is_empty()  # type: ignore[union-attr]
        if lb is None:
            return False
        return la.intersect(lb).is_empty()
    except (OverflowError, NotRegular):
        return False


def _count(schema: dict[str, Any], key: str) -> int:
    return count_keyword(schema, key) or 0


def key_language(conj: list[Location]) -> DFA | None:
    """The keys (UTF-8 bytes of decoded names) ``conj`` allows at all; None: any key."""
    out: DFA | None = None
    for loc in conj:
        if not isinstance(loc.schema, dict):
            continue
        mine = _own_key_language(loc.schema)
        if mine is not None:
            out = mine if out is None else out.intersect(mine)
    return out


def _own_key_language(s: dict[str, Any]) -> DFA | None:
    """The keys one schema object allows when ``additionalProperties`` is false, else None."""
    if s.get("additionalProperties") is not False:
        return None
    return declared_key_language(s, allowed_only=True)


# By what a schema's declared key language depends on: its property names and its patterns,
# each with whether its schema is ``false``. Not by the schema object, which an entry would
# keep alive (a user's schema, with all it holds, for as long as the entry lives) and which a
# later compile never passes again; the keys are tuples of strings and flags, which the cyclic
# collector stops tracking after one pass.
_Flagged = tuple[tuple[str, bool], ...]  # names or patterns, each with whether its schema is false
_KEYS_CACHE: Final[OrderedDict[tuple[bool, _Flagged, _Flagged], DFA | None]] = OrderedDict()


def declared_key_language(s: dict[str, Any], *, allowed_only: bool = False) -> DFA | None:
    """The names ``properties`` or ``patternProperties`` of one schema object cover (the
    complement are its *additional* names); None when a pattern cannot be read.
    ``allowed_only``: leave out names whose schema is ``false``.

    Remembered per distinct names and patterns (see ``_KEYS_CACHE``).
    """
    props = s.get("properties")
    patterns = s.get("patternProperties")
    names = tuple((name, sub is False) for name, sub in props.items()) if isinstance(props, dict) else ()
    pats = tuple((p, sub is False) for p, sub in patterns.items()) if isinstance(patterns, dict) else ()
    key = (allowed_only, names, pats)
    if key in _KEYS_CACHE:
        _KEYS_CACHE.move_to_end(key)
        return _KEYS_CACHE[key]
    dfa = _declared_key_language(names, pats, allowed_only)
    _KEYS_CACHE[key] = dfa
    if len(_KEYS_CACHE) > 1024:
        _KEYS_CACHE.popitem(last=False)
    return dfa


def _declared_key_language(names: _Flagged, patterns: _Flagged, allowed_only: bool) -> DFA | None:
    options: list[Expr] = [literal(name) for name, false in names if not (allowed_only and false)]
    for pattern, false in patterns:
        lang = _pattern_language(pattern)
        if lang is None:
            return None
        if not (allowed_only and false):
            options.append(lang)
    try:
        return dfa_from_expr(alt(*options))
    except (OverflowError, NotRegular):
        return None


def pattern_dfa(pattern: str) -> DFA | None:
    """The names ``pattern`` matches somewhere (ECMA-262 semantics); None if unreadable."""
    return _pattern_dfa(pattern)


@lru_cache(maxsize=512)
def _pattern_language(pattern: str) -> Expr | None:
    try:
        return parse_regex(pattern, search=True)
    except GrammarSyntaxError:
        return None


@lru_cache(maxsize=512)
def _pattern_dfa(pattern: str) -> DFA | None:
    lang = _pattern_language(pattern)
    if lang is None:
        return None
    try:
        return dfa_from_expr(lang)
    except (OverflowError, NotRegular):
        return None


def pattern_matches(pattern: str, name: str) -> bool | None:
    """Whether ``pattern`` (ECMA-262, unanchored) matches somewhere in ``name``; None: unknown."""
    dfa = _pattern_dfa(pattern)
    if dfa is None:
        return None
    return dfa.accepts(name.encode())
