"""Arrays: ``prefixItems``/``items`` (and the draft-04..07 array form with
``additionalItems``), ``minItems``/``maxItems``, ``contains`` with ``minContains``/
``maxContains``, and ``uniqueItems`` over small finite item domains.

Positions before the longest prefix get their own item expression; every later position
shares the "rest" expression, repeated with the remaining length bounds. ``contains``
splits each item into "matches" (item and C) and "does not match" (item and not C) and
counts the matches; ``uniqueItems`` enumerates the item domain (``enum``, ``const``,
booleans, null): without ``prefixItems`` the items are an :class:`~tokensieve.ir.Unordered`
set of values (each at most once, tracked by the matcher, any number of values); with
position-dependent domains the grammar tracks, per state, which values were already used
(2^k states for k values). Unique items from an infinite domain (any string...) are not
context-free beyond two items and stay unsupported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from ...ir import EMPTY, NOTHING, Expr, Ref, Repeat, Unordered, alt, literal, seq
from . import composition
from .keywords import count_keyword
from .location import Location, child_pointer
from .negation import NO_ANNOTATIONS
from .refs import Resolver

if TYPE_CHECKING:
    from .converter import Converter

__all__ = ["MAX_UNIQUE_VALUES", "any_array", "array_value"]

MAX_UNIQUE_VALUES: Final = 8
"""Largest item domain for ``uniqueItems`` with ``prefixItems`` (the grammar tracks subsets:
2^k states); without a prefix the domain may hold up to :data:`MAX_UNORDERED_VALUES`."""

MAX_UNORDERED_VALUES: Final = 4096
"""Largest item domain for ``uniqueItems`` without ``prefixItems`` (one Unordered item each)."""

_MAX_COUNT_STATES: Final = 4096
_MAX_CONTAINS: Final = 3  # contains keywords on one array: 2^k item kinds


def any_array(conv: Converter) -> Expr:
    """Any JSON array."""
    return _sequence(conv, [], conv.any_value(), 0, None)


def _sub(loc: Location, key: str, *path: str | int) -> Location:
    node: Any = loc.schema[key]
    for p in path:
        node = node[p]
    return Resolver.enter(node, child_pointer(loc.pointer, key, *path), loc.base)


def _items_of(loc: Location) -> tuple[list[Location], Location | None]:
    """(prefix item schemas, schema of the items after them or None if unconstrained)."""
    s = loc.schema
    items = s.get("items")
    if isinstance(items, list):  # draft-04..07 tuple form
        prefix = [_sub(loc, "items", i) for i in range(len(items))]
        rest = _sub(loc, "additionalItems") if "additionalItems" in s else None
        return prefix, rest
    prefix = [_sub(loc, "prefixItems", i) for i in range(len(s.get("prefixItems") or []))]
    return prefix, (_sub(loc, "items") if "items" in s else None)


def _unevaluated_items(conj: list[Location]) -> list[tuple[list[Location], Location | None]]:
    """``unevaluatedItems`` as extra (prefix, rest) shapes: positions past every prefix seen
    in scope must satisfy it, unless they match a ``contains`` seen in scope."""
    out: list[tuple[list[Location], Location | None]] = []
    for u in conj:
        if "unevaluatedItems" not in u.schema:
            continue
        scope = [
            m
            for m in conj
            if (m is u or u.key in m.scope) and m.annotates and not m.schema.get(NO_ANNOTATIONS)
        ]
        if any(
            isinstance(m.schema.get("items"), (dict, bool))
            or (isinstance(m.schema.get("items"), list) and "additionalItems" in m.schema)
            or (m is not u and "unevaluatedItems" in m.schema)
            for m in scope
        ):
            continue  # every item is evaluated in that scope
        width = max(len(_items_of(m)[0]) for m in scope)
        rest = _sub(u, "unevaluatedItems")
        contains = [m.schema["contains"] for m in scope if "contains" in m.schema]
        if contains:
            rest = rest.with_schema({"anyOf": [*contains, rest.schema]})
        anything = Location(True, u.pointer, u.base)
        out.append(([anything] * width, rest))
    return out


def _conj_value(conv: Converter, parts: list[Location]) -> tuple[Expr, list[Location]]:
    conj = [loc for part in parts for loc in composition.flatten(conv, part)]
    return conv.all_of(parts), conj


def array_value(conv: Converter, conj: list[Location]) -> Expr:
    """The arrays that satisfy every schema of ``conj``."""
    lo, hi = 0, None
    unique = False
    contains: list[Location] = []
    shapes = [_items_of(loc) for loc in conj] + _unevaluated_items(conj)
    for loc in conj:
        s = loc.schema
        n = count_keyword(s, "minItems")
        if n is not None:
            lo = max(lo, n)
        n = count_keyword(s, "maxItems")
        if n is not None:
            hi = n if hi is None else min(hi, n)
        unique = unique or s.get("uniqueItems") is True
        if "contains" in s:
            contains.append(loc)
    width = max((len(p) for p, _ in shapes), default=0)
    prefix: list[Expr] = []
    prefix_conjs: list[list[Location]] = []
    for i in range(width):
        item, item_conj = _conj_value(conv, _position_parts(shapes, i))
        prefix_conjs.append(item_conj)
        if item == NOTHING:  # no array reaches this length
            hi = i if hi is None else min(hi, i)
            break
        prefix.append(item)
    rest_parts = [r for _, r in shapes if r is not None]
    rest, rest_conj = _conj_value(conv, rest_parts)
    if rest == NOTHING:
        hi = len(prefix) if hi is None else min(hi, len(prefix))
    if hi is not None and lo > hi:
        return NOTHING
    pointer = conj[0].pointer if conj else ""
    if unique and (hi is None or hi > 1):
        if contains:
            conv.unsupported("uniqueItems together with contains", "uniqueItems", pointer)
        else:
            rest_domain_conj = rest_conj if rest != NOTHING else None
            return _unique(conv, prefix_conjs[: len(prefix)], rest_domain_conj, lo, hi, pointer)
    if contains:
        positions = [_position_parts(shapes, i) for i in range(len(prefix))]
        return _contains(conv, positions, rest_parts, contains, lo, hi, pointer)
    return _sequence(conv, prefix, rest, lo, hi)


def _position_parts(shapes: list[tuple[list[Location], Location | None]], i: int) -> list[Location]:
    """The schemas item ``i`` must satisfy: each shape's prefix entry, or its rest schema."""
    out: list[Location] = []
    for prefix, rest in shapes:
        if i < len(prefix):
            out.append(prefix[i])
        elif rest is not None:
            out.append(rest)
    return out


def _sequence(conv: Converter, prefix: list[Expr], rest: Expr, lo: int, hi: int | None) -> Expr:
    """``[`` items ``]``: position i < len(prefix) is ``prefix[i]``, later ones ``rest``."""
    sep = seq(conv.ws, literal(","), conv.ws)
    options = []
    if lo == 0:
        options.append(seq(literal("["), conv.ws, literal("]")))
    first = prefix[0] if prefix else rest
    if first != NOTHING and (hi is None or hi >= 1):
        body = seq(first, _items_after(sep, prefix, rest, lo, hi, 1))
        if body != NOTHING:
            options.append(seq(literal("["), conv.ws, body, conv.ws, literal("]")))
    return alt(*options) if options else NOTHING


def _items_after(sep: Expr, prefix: list[Expr], rest: Expr, lo: int, hi: int | None, start: int) -> Expr:
    """Items from position ``start`` on, each after a comma: built from the last position
    that differs (past the prefix or at ``hi``) back to ``start``."""
    n = len(prefix)
    i = max(start, n if hi is None else min(n, hi))
    if (hi is not None and i >= hi) or rest == NOTHING:
        tail = EMPTY if i >= lo else NOTHING
    else:  # past the prefix: the rest, as many as the bounds still allow
        tail = Repeat(seq(sep, rest), max(lo - i, 0), None if hi is None else hi - i)
    for j in range(i - 1, start - 1, -1):
        more = seq(sep, prefix[j], tail)
        tail = more if j < lo else alt(EMPTY, more)
    return tail


def _contains(
    conv: Converter,
    position_parts: list[list[Location]],
    rest_parts: list[Location],
    contains: list[Location],
    lo: int,
    hi: int | None,
    pointer: str,
) -> Expr:
    """Arrays counting, for each ``contains`` schema, the items that match it.

    Each item is split by which of the k ``contains`` schemas it matches (2^k item kinds:
    the item schema with C for the matched ones and ``not C`` for the others); the grammar
    state is the position (exact below the ``prefixItems`` and count bounds, capped
    after) and one capped counter per ``contains``.
    """
    width = len(position_parts)
    bounds: list[tuple[int, int | None]] = []
    conds: list[Location] = []
    for loc in contains:
        c_lo = count_keyword(loc.schema, "minContains")
        c_hi = count_keyword(loc.schema, "maxContains")
        c_lo = 1 if c_lo is None else c_lo
        if c_hi is not None and c_lo > c_hi:
            return NOTHING
        cond = _sub(loc, "contains")
        slots = [*position_parts, rest_parts]
        if all(_conj_value(conv, [*p, _negated(conv, cond)])[0] == NOTHING for p in slots):
            # Every item matches: the count is the array's length.
            lo = max(lo, c_lo)
            hi = c_hi if hi is None else hi if c_hi is None else min(hi, c_hi)
            continue
        if all(_conj_value(conv, [*p, cond])[0] == NOTHING for p in slots):
            if c_lo > 0:  # no item can match
                return NOTHING
            continue
        bounds.append((c_lo, c_hi))
        conds.append(cond)
    if hi is not None and lo > hi:
        return NOTHING
    if not conds:
        prefix = [_conj_value(conv, p)[0] for p in position_parts]
        return _sequence(conv, prefix, _conj_value(conv, rest_parts)[0], lo, hi)
    if len(conds) > _MAX_CONTAINS:
        conv.unsupported(f"more than {_MAX_CONTAINS} contains keywords on one array", "contains", pointer)
    caps = [c_hi + 1 if c_hi is not None else c_lo for c_lo, c_hi in bounds]
    cap_l = hi if hi is not None else max(lo, width)
    states = cap_l + 1
    for cap in caps:
        states *= cap + 1
    if states > _MAX_COUNT_STATES:
        conv.unsupported("contains counts need too many grammar states", "contains", pointer)
    counts = _ContainsCounts(conv, position_parts, rest_parts, conds, bounds, caps, lo, hi, cap_l)
    zero = tuple(0 for _ in conds)
    firsts = counts.steps(0, zero, EMPTY)
    options = []
    if counts.done(0, zero):
        options.append(seq(literal("["), conv.ws, literal("]")))
    if firsts:
        options.append(seq(literal("["), conv.ws, alt(*firsts), conv.ws, literal("]")))
    return alt(*options) if options else NOTHING


class _ContainsCounts:
    """The grammar states of :func:`_contains`: a rule per (items written, capped; counts of
    them matching each ``contains``), made on first use.

    A class rather than closures inside :func:`_contains`: mutually recursive closures are a
    reference cycle, which would keep the whole conversion alive until the garbage collector
    runs."""

    def __init__(
        self,
        conv: Converter,
        position_parts: list[list[Location]],
        rest_parts: list[Location],
        conds: list[Location],
        bounds: list[tuple[int, int | None]],
        caps: list[int],
        lo: int,
        hi: int | None,
        cap_l: int,
    ) -> None:
        self.conv = conv
        self.position_parts = position_parts
        self.rest_parts = rest_parts
        self.conds = conds
        self.bounds = bounds
        self.caps = caps
        self.lo = lo
        self.hi = hi
        self.cap_l = cap_l
        self.sep = seq(conv.ws, literal(","), conv.ws)
        self.kinds: dict[tuple[int, int], Expr] = {}
        self.names: dict[tuple[int, tuple[int, ...]], Ref] = {}

    def kind(self, position: int, matched: int) -> Expr:
        """Items at ``position`` (capped at the prefix width) matching exactly ``matched``."""
        width = len(self.position_parts)
        key = (min(position, width), matched)
        if key not in self.kinds:
            parts = list(self.position_parts[position] if position < width else self.rest_parts)
            for i, cond in enumerate(self.conds):
                parts.append(cond if matched >> i & 1 else _negated(self.conv, cond))
            self.kinds[key] = _conj_value(self.conv, parts)[0]
        return self.kinds[key]

    def done(self, n: int, counts: tuple[int, ...]) -> bool:
        return n >= self.lo and all(c >= b[0] for c, b in zip(counts, self.bounds, strict=True))

    def steps(self, n: int, counts: tuple[int, ...], lead: Expr) -> list[Expr]:
        """``lead`` then one more item at position n, for every kind that keeps counts legal."""
        if self.hi is not None and n >= self.hi:
            return []
        nn = n + 1 if self.hi is not None else min(n + 1, self.cap_l)
        out = []
        for matched in range(1 << len(self.conds)):
            bumped = tuple(min(c + (matched >> i & 1), self.caps[i]) for i, c in enumerate(counts))
            if any(b[1] is not None and c > b[1] for c, b in zip(bumped, self.bounds, strict=True)):
                continue
            item = self.kind(n, matched)
            if item != NOTHING:
                out.append(seq(lead, item, self.state(nn, bumped)))
        return out

    def state(self, n: int, counts: tuple[int, ...]) -> Ref:
        """n items written (capped), ``counts`` of them matching each contains: what may follow."""
        key = (n, counts)
        if key not in self.names:
            grammar = self.conv.grammar
            name = self.conv.fresh_name("contains")
            grammar.rules[name] = NOTHING
            self.names[key] = Ref(name)
            opts = ([EMPTY] if self.done(n, counts) else []) + self.steps(n, counts, self.sep)
            grammar.rules[name] = alt(*opts) if opts else NOTHING
        return self.names[key]


def _negated(conv: Converter, loc: Location) -> Location:
    """``not`` the schema at ``loc``, one object per schema and place: conversions of
    conjunctions are remembered by the ids of their schemas (``Converter.all_of``), so a
    fresh ``{"not": ...}`` for every item kind would convert the item schema again each time
    (Github_medium o3626: 8 s, most of it the same conversions)."""
    return conv.remembered(
        ("negated", id(loc.schema), loc.pointer, loc.base),
        lambda: Location({"not": loc.schema}, loc.pointer, loc.base),
        loc.schema,
    )


def _unique(
    conv: Converter,
    position_conjs: list[list[Location]],
    rest_conj: list[Location] | None,
    lo: int,
    hi: int | None,
    pointer: str,
) -> Expr:
    """Arrays of pairwise distinct items, each position drawing from a small finite domain.

    The grammar state is (position, set of values used): 2^k states for k distinct values.
    """
    from .composition import json_equal
    from .literals import finite_domain, literal_value

    domains = [finite_domain(conv, c) for c in position_conjs]
    rest_domain = finite_domain(conv, rest_conj) if rest_conj is not None else []
    values: list[object] = []
    for d in [*domains, rest_domain]:
        for v in d or []:
            if not any(json_equal(v, w) for w in values):
                values.append(v)
    if any(d is None for d in domains) or rest_domain is None:
        conv.unsupported(
            "uniqueItems needs a finite item domain (enum, const, boolean, null)", "uniqueItems", pointer
        )
        return NOTHING
    if not domains and len(values) <= MAX_UNORDERED_VALUES:
        return _unique_set(conv, [literal_value(conv, v) for v in values], lo, hi)
    if len(values) > MAX_UNIQUE_VALUES:
        conv.unsupported(
            f"uniqueItems with prefixItems needs item domains of at most {MAX_UNIQUE_VALUES} values in all",
            "uniqueItems",
            pointer,
        )
        return NOTHING

    def indices(domain: list[object]) -> list[int]:
        return [next(i for i, w in enumerate(values) if json_equal(v, w)) for v in domain]

    allowed = [indices(d or []) for d in domains] + [indices(rest_domain)]
    items = [literal_value(conv, v) for v in values]
    width = len(domains)
    sep = seq(conv.ws, literal(","), conv.ws)
    names: dict[tuple[int, int], Ref] = {}

    def choices(position: int, mask: int) -> list[tuple[int, Expr]]:
        if hi is not None and position >= hi:
            return []
        return [(i, items[i]) for i in allowed[min(position, width)] if not mask >> i & 1]

    def state(position: int, mask: int) -> Ref:
        """``position`` items written, using the values in ``mask``."""
        key = (position, mask)
        if key not in names:
            name = conv.fresh_name("unique")
            conv.grammar.rules[name] = NOTHING
            names[key] = Ref(name)
            opts: list[Expr] = [EMPTY] if position >= lo else []
            opts += [
                seq(sep, item, state(position + 1, mask | 1 << i)) for i, item in choices(position, mask)
            ]
            conv.grammar.rules[name] = alt(*opts) if opts else NOTHING
        return names[key]

    options = []
    if lo == 0:
        options.append(seq(literal("["), conv.ws, literal("]")))
    firsts = [seq(item, state(1, 1 << i)) for i, item in choices(0, 0)]
    if firsts:
        options.append(seq(literal("["), conv.ws, alt(*firsts), conv.ws, literal("]")))
    return alt(*options) if options else NOTHING


def _unique_set(conv: Converter, items: list[Expr], lo: int, hi: int | None) -> Expr:
    """``[`` distinct values from ``items`` in any order ``]``, between lo and hi of them."""
    hi = len(items) if hi is None else min(hi, len(items))
    if lo > hi:
        return NOTHING
    options = [seq(literal("["), conv.ws, literal("]"))] if lo == 0 else []
    if hi >= 1 and items:
        sep = seq(conv.ws, literal(","), conv.ws)
        body = Unordered(tuple(items), sep, min_count=max(lo, 1), max_count=hi)
        options.append(seq(literal("["), conv.ws, body, conv.ws, literal("]")))
    return alt(*options) if options else NOTHING
