"""``not``: what a grammar can subtract.

Scalar values (null, booleans, numbers, strings) form regular languages, so ``not S`` is
exact for them: the language of S restricted to that type is subtracted on automata.
Numbers lose their exponent spellings in a subtraction (bounded numbers have none, see
:mod:`.numbers`). For arrays and objects only two outcomes are exact: S says nothing
about the type (then no value of that type survives) or S excludes the type (nothing to
subtract). Objects constrained only by ``properties``/``required`` are rewritten instead:
``not {required: [a], properties: {p: S}}`` is "an object without a, or with p present and
failing S" (the ``if``/``then`` discriminator pattern).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from ...ir import (
    NOTHING,
    Alt,
    Bytes,
    CountedAutomaton,
    Difference,
    Expr,
    Ref,
    Repeat,
    Seq,
    Special,
    Unordered,
    alt,
)
from .automata import NotRegular, dfa_from_expr, remembered_dfa
from .disjoint import disjoint, possible_types
from .location import Location, child_pointer
from .negated_keywords import KeySpace, negate_keyword
from .refs import Resolver

if TYPE_CHECKING:
    from .converter import Converter

__all__ = ["NO_ANNOTATIONS", "with_negations"]

NO_ANNOTATIONS: Final = "x-tokensieve-no-annotations"
"""Marks a synthetic schema whose properties were not *evaluated* in the spec's sense."""

_TYPE_KEYWORDS: Final = {
    "string": {"minLength", "maxLength", "pattern", "format"},
    "number": {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
    "array": {"items", "prefixItems", "additionalItems", "minItems", "maxItems", "contains", "uniqueItems"},
    "object": {
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
    },
}
_GENERAL: Final = {"enum", "const", "anyOf", "oneOf", "not", "if"}
_GROUPS: Final = (("null",), ("boolean",), ("integer", "number"), ("string",), ("array",), ("object",))
_NO_EXPONENT: Final = Repeat(Bytes(((0x2D, 0x2E), (0x30, 0x39))), 0, None)


def with_negations(
    conv: Converter, conj: list[Location], types: frozenset[str], nots: list[Location]
) -> Expr:
    """The instances satisfying ``conj`` (whose members ``nots`` carry a ``not``)."""
    from .composition import conjunction_value, flatten

    positive = [
        loc.with_schema({k: v for k, v in loc.schema.items() if k != "not"}) if "not" in loc.schema else loc
        for loc in conj
    ]
    generic: list[list[Location]] = []
    keys: list[KeySpace] = []  # the names the positive objects may have, computed once
    for loc in nots:
        neg = flatten(conv, Resolver.enter(loc.schema["not"], child_pointer(loc.pointer, "not"), loc.base))
        if not neg:  # not true
            return NOTHING
        if any(n.schema is False for n in neg):  # not false: no constraint
            continue
        double = _double_negation(neg)
        if double is not None:  # not (not S) = S
            inner = Location(double, child_pointer(loc.pointer, "not", "not"), loc.base, annotates=False)
            positive.append(loc.inside(inner))
            continue
        either = _negated_any_of(neg)
        if either is not None:  # not (anyOf [A, B]) = allOf [not A, not B]
            positive += [
                loc.inside(Location({"not": b}, child_pointer(loc.pointer, "not"), loc.base)) for b in either
            ]
            continue
        if not _mentions_containers(neg) and not _constrains_containers(conv, neg, types):
            generic.append(neg)  # scalars only: subtracted on automata below
            continue
        if not keys:
            keys.append(KeySpace.of(positive) if "object" in types else KeySpace(None))
        branches, reason = _rewrite(conv, loc, neg, types, keys[0])
        if branches is None:
            conv.unsupported(f"not: {reason}", "not", neg[0].pointer)
            continue
        # Branches no positive value can satisfy add nothing, and cost a distribution each.
        where = child_pointer(loc.pointer, "not")
        branches = [
            b for b in branches if not disjoint(conv, positive, flatten(conv, Location(b, where, loc.base)))
        ]
        rewritten = {"anyOf": branches}
        positive.append(loc.inside(Location(rewritten, child_pointer(loc.pointer, "not"), loc.base)))
    if not generic:
        return conjunction_value(conv, positive)
    options: list[Expr] = []
    for group in _GROUPS:
        present = frozenset(group) & types
        if not present:
            continue
        typed = [*positive, Location({"type": sorted(present)}, positive[0].pointer, positive[0].base)]
        expr = conjunction_value(conv, typed)
        for neg in generic:
            if expr == NOTHING:
                break
            neg_types = present & possible_types(conv, neg)
            if not neg_types:
                continue  # the negated schema rejects this type: nothing to subtract
            if neg_types == present and _says_nothing_about(neg, group):
                expr = NOTHING
                break
            if group[0] in ("array", "object"):
                conv.unsupported(
                    f"not with {group[0]} keywords cannot be expressed by a grammar", "not", neg[0].pointer
                )
                continue
            minus = conjunction_value(
                conv, [*neg, Location({"type": sorted(present)}, neg[0].pointer, neg[0].base)]
            )
            expr = _subtract(conv, expr, minus, group, neg[0].pointer)
        options.append(expr)
    return alt(*options) if options else NOTHING


def _rewrite(
    conv: Converter, loc: Location, neg: list[Location], types: frozenset[str], keys: KeySpace
) -> tuple[list[Any] | None, str]:
    """The ``anyOf`` branches of ``not`` at ``loc`` (:func:`_keyword_negation`), made once per
    negated schema object, types and key space.

    The same branch objects for the same negation matter beyond speed: value positions
    inside them are memoized as grammar rules by schema identity, so the negation of a
    recursive schema becomes grammar recursion instead of an endless expansion.
    """
    names = keys.finite_names()
    key = ("not", id(loc.schema["not"]), loc.base, types, names)
    if names is not None or keys.language is None:
        hit = conv.memo.get(key)
        if hit is not None:
            return hit[0], hit[1]
    branches, reason = _keyword_negation(conv, neg, types, keys)
    if branches is not None:
        # What a "not" proves is no annotation: unevaluated* must not see these properties.
        branches = [b if isinstance(b, bool) else {**b, NO_ANNOTATIONS: True} for b in branches]
    if names is not None or keys.language is None:
        conv.memo[key] = (branches, reason, loc.schema["not"])  # the schema keeps its id
    return branches, reason


def _only(neg: list[Location], key: str) -> Any:
    """The value of ``key`` when the negated conjunction is one schema with only that keyword."""
    if len(neg) != 1:
        return None
    s = neg[0].schema
    keys = set().union(*_TYPE_KEYWORDS.values()) | _GENERAL | {"type"}
    if {k for k in s if k in keys} != {key}:
        return None
    return s[key]


def _double_negation(neg: list[Location]) -> Any:
    return _only(neg, "not")


def _negated_any_of(neg: list[Location]) -> list[Any] | None:
    branches = _only(neg, "anyOf")
    return branches if isinstance(branches, list) else None


_CONTAINERS: Final = _TYPE_KEYWORDS["object"] | _TYPE_KEYWORDS["array"] | {"minContains", "maxContains"}
_SKIP: Final = {
    "$ref", "allOf", "if", "then", "else", "dependentRequired", "dependentSchemas", "dependencies"
}
"""Keywords whose meaning already sits in other conjunction members (inlined or rewritten)."""


def _mentions_containers(neg: list[Location]) -> bool:
    return any(k in _CONTAINERS for loc in neg for k in loc.schema)


def _constrains_containers(conv: Converter, neg: list[Location], types: frozenset[str]) -> bool:
    """Whether the negated schemas constrain arrays or objects the conjunction allows
    (through ``enum``/``anyOf``/``oneOf``...): automata cannot subtract those."""
    shared = types & possible_types(conv, neg)
    return any(t in shared and not _says_nothing_about(neg, (t,)) for t in ("array", "object"))


def _keyword_negation(
    conv: Converter, neg: list[Location], types: frozenset[str], keys: KeySpace
) -> tuple[list[Any] | None, str]:
    """``not (m1 and m2 ...)`` as ``anyOf`` branches, one per keyword (group) that can fail.

    Keywords of one schema object are independent constraints, so the negation of their
    conjunction is the disjunction of their negations; each keyword only constrains its own
    type, so its negation also asserts that type, and keywords of types outside ``types``
    (what the rest of the conjunction allows) contribute nothing. ``keys`` is what names the
    positive objects may have (:class:`.negated_keywords.KeySpace`).
    Returns (None, reason) when some keyword has no exact negation here.
    """
    branches: list[Any] = []
    for loc in neg:
        s = loc.schema
        scalar = {t: {k: s[k] for k in _TYPE_KEYWORDS[t] if k in s} for t in ("string", "number")}
        for t, kws in scalar.items():
            if kws and (t in types or (t == "number" and "integer" in types)):  # subtracted on automata
                branches.append({"type": t, "not": kws})
        for key, value in s.items():
            if key in _SKIP or key in _TYPE_KEYWORDS["string"] or key in _TYPE_KEYWORDS["number"]:
                continue
            if key not in _CONTAINERS and key not in _GENERAL and key != "type":
                continue  # annotations and unknown keywords
            kind = _keyword_type(key)
            if kind is not None and kind not in types:
                continue  # "key fails" only holds for values of a type the conjunction excludes
            made = negate_keyword(conv, key, value, loc, keys)
            if made is None:
                return None, f"{key} has no exact negation in a grammar"
            branches += made
    return branches, ""


def _keyword_type(key: str) -> str | None:
    """The one type a container keyword constrains (None for type-general keywords)."""
    if key in _TYPE_KEYWORDS["object"]:
        return "object"
    if key in _TYPE_KEYWORDS["array"] or key in ("minContains", "maxContains"):
        return "array"
    return None


def _says_nothing_about(neg: list[Location], group: tuple[str, ...]) -> bool:
    keywords = _TYPE_KEYWORDS.get(group[-1], set()) | _GENERAL
    return not any(k in loc.schema for loc in neg for k in keywords)


_EXPONENT: Final = Seq(
    (
        Repeat(Bytes(((0, 0xFF),)), 0, None),
        Bytes(((0x45, 0x45), (0x65, 0x65))),
        Repeat(Bytes(((0, 0xFF),)), 0, None),
    )
)
_MAX_PYTHON_STATES: Final = 4000


def _subtract(conv: Converter, pos: Expr, neg: Expr, group: tuple[str, ...], pointer: str) -> Expr:
    """``pos`` minus ``neg`` (JSON texts of one scalar type; numbers lose exponent forms).

    Small automata are subtracted here, which also tells an empty result apart; large ones
    become a :class:`~tokensieve.ir.Difference` that the compiler determinizes natively.
    """
    key = ("subtract", id(pos), id(neg), group)
    if key in conv.memo:
        return conv.memo[key][0]  # type: ignore[no-any-return]
    original = (pos, neg)  # the memo's key names these: kept alive with the entry
    if remembered_dfa(pos) is not None and remembered_dfa(neg) is not None:
        # Both have automata already (a chain of subtractions: each result is remembered
        # with its DFA, and so is a negated string met in an earlier arm), so neither holds
        # a counter or a rule: the walks of the whole expression below would change nothing.
        refs = False
    else:
        pos, neg = _without_counters(conv, pos), _without_counters(conv, neg)
        refs = _has_ref(pos) or _has_ref(neg)  # linear rules: not a Difference operand
    try:
        out = _subtract_here(conv, pos, neg, group, 20000 if refs else _MAX_PYTHON_STATES)
    except (OverflowError, NotRegular):  # too large here, or holding a Difference already
        if refs:
            conv.unsupported("the negated schema is too complex to subtract", "not", pointer)
            return original[0]
        out = Difference(pos, neg)
        if group[-1] == "number":
            out = Difference(out, _EXPONENT)
    conv.memo[key] = (out, *original)  # pos and neg kept alive: their ids are the key
    return out


def _subtract_here(conv: Converter, pos: Expr, neg: Expr, group: tuple[str, ...], limit: int) -> Expr:
    """The subtraction on Python automata of at most ``limit`` states (OverflowError past it)."""
    dfa = dfa_from_expr(pos, limit).minus(dfa_from_expr(neg, limit))
    if group[-1] == "number":
        dfa = dfa.intersect(dfa_from_expr(_NO_EXPONENT))
    return dfa.to_ir(conv.grammar, "not")


def _without_counters(conv: Converter, expr: Expr) -> Expr:
    """``expr`` with each CountedAutomaton replaced by its plain expansion (made once per
    node): a set difference needs automata, and a counter is not one."""
    return _replace_counters(conv, expr, {})


def _replace_counters(conv: Converter, expr: Expr, done: dict[int, Expr]) -> Expr:
    """:func:`_without_counters` with the nodes already rewritten in this walk (by id): the
    IR is a DAG (a multipleOf's automaton met under every arm of a oneOf), and a walk of it
    as a tree would visit shared nodes once per path (Handwritten allone2: 270 nodes per call)."""
    hit = done.get(id(expr))
    if hit is not None:
        return hit
    out = expr
    if isinstance(expr, CountedAutomaton):
        if expr.expanded is not None:
            expand = expr.expanded
            out = conv.remembered(("expanded", id(expr)), lambda: expand(conv.grammar), expr)
    elif isinstance(expr, (Seq, Alt)):
        items = tuple(_replace_counters(conv, it, done) for it in expr.items)
        if not all(a is b for a, b in zip(items, expr.items, strict=True)):
            out = Seq(items) if isinstance(expr, Seq) else Alt(items)
    elif isinstance(expr, Repeat):
        item = _replace_counters(conv, expr.item, done)
        if item is not expr.item:
            out = Repeat(item, expr.min, expr.max)
    done[id(expr)] = out  # expr is alive for the walk (the caller holds the root)
    return out


def _has_ref(expr: Expr) -> bool:
    """Whether ``expr`` refers to a rule (or holds a non-regular node)."""
    seen: set[int] = set()
    todo = [expr]
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, (Ref, Special, Unordered)):
            return True
        if isinstance(e, (Seq, Alt)):
            todo.extend(e.items)
        elif isinstance(e, Repeat):
            todo.append(e.item)
        elif isinstance(e, Difference):
            todo += [e.left, e.right]
    return False
