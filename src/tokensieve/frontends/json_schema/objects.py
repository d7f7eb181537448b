"""Objects: ``properties``, ``required``, ``additionalProperties``, ``patternProperties``,
``propertyNames``, ``minProperties``/``maxProperties``, in either property order.

**Keys.** A member's key is any JSON spelling of its name that :mod:`.strings` accepts
(``"é"`` or ``"\\u00e9"``; printable ASCII only as itself): JSON Schema sees decoded keys.
Keys of additional properties are every string *except* the declared names (a complement
computed on automata, so no spelling of a declared name can sneak in as an "additional"
key), further split by which ``patternProperties`` match.

**Order** (``property_order``):

- ``"declared"``: declared properties appear in declaration order, optional ones may be
  skipped, and additional properties (when allowed) come after all declared ones. This
  is a deliberate restriction of JSON's unordered objects: generation writes fields in
  the order the schema author chose.
- ``"any"``: members in any order, each declared property at most once, the required
  ones present before ``}``, the member count within ``minProperties``/``maxProperties``.
  This is an :class:`~tokensieve.ir.Unordered` node: the matcher tracks the set of
  declared properties already written in its parse state (no 2^n rules), so objects may
  declare any number of properties. Additional keys are not tracked, so a grammar cannot
  forbid a *repeated additional* key (JSON objects with duplicate keys are not instances
  anyway).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from ...errors import UnsatisfiableSchemaError, UnsupportedSchemaError
from ...ir import EMPTY, NOTHING, Alt, Difference, Expr, Repeat, Seq, Unordered, alt, literal, seq
from ..json_value import json_string
from . import composition
from .keywords import count_keyword
from .location import Location, child_pointer
from .negation import NO_ANNOTATIONS
from .refs import Resolver
from .strings import _QUOTE, StringSpec, _escape_expr, json_literal_string, string_expr

if TYPE_CHECKING:
    from .converter import Converter

__all__ = ["Member", "any_object", "member_rule", "object_expr", "object_value"]

_MAX_PATTERN_REGIONS: Final = 4  # patternProperties regions = subsets of patterns: 2^k


@dataclass
class Member:
    """One kind of object member: a key language and the value it carries."""

    key: Expr
    value: Expr
    required: bool = False

    def __init__(self, key: Expr, value: Expr, required: bool = False) -> None:
        # Written out: a dataclass-generated __init__ stays plain Python under mypyc.
        self.key = key
        self.value = value
        self.required = required


@dataclass
class _Shape:
    """Every object keyword of a conjunction, gathered."""

    names: dict[str, list[Location]] = field(default_factory=dict)
    required: list[str] = field(default_factory=list)
    min_props: int = 0
    max_props: int | None = None

    def __init__(self) -> None:  # written out, as Member's
        self.names = {}
        self.required = []
        self.min_props = 0
        self.max_props = None


class _Applicator:
    """What one schema of a conjunction says about the value of a key, read once: each of
    the conjunction's declared names asks every schema of it (WashingtonPost wp_0: 1,343
    declared values over 143 objects, each reading its schemas' keywords again)."""

    def __init__(self, conv: Converter, loc: Location) -> None:
        self.loc = loc
        props = loc.schema.get("properties")
        self.properties: dict[str, Any] = props if isinstance(props, dict) else {}
        self.patterns = _patterns(loc)
        self.additional = _additional(conv, loc)


def any_object(conv: Converter) -> Expr:
    """Any JSON object (keys any strings, values any JSON)."""
    member = seq(json_string(), conv.ws, literal(":"), conv.ws, conv.any_value())
    return object_expr(conv, [], [member], 0, None, order="declared")


def object_value(conv: Converter, conj: list[Location]) -> Expr:
    """The objects that satisfy every schema of ``conj``."""
    shape = _Shape()
    for loc in conj:
        s = loc.schema
        for name in s.get("properties") or {}:
            shape.names.setdefault(name, [])
        req = s.get("required")
        if isinstance(req, list):
            for name in req:
                if name not in shape.required:
                    shape.required.append(name)
                shape.names.setdefault(name, [])
        n = count_keyword(s, "minProperties")
        if n is not None:
            shape.min_props = max(shape.min_props, n)
        n = count_keyword(s, "maxProperties")
        if n is not None:
            shape.max_props = n if shape.max_props is None else min(shape.max_props, n)
    if conv.strict:
        shape.required = list(shape.names)
    if shape.max_props is not None and (
        shape.min_props > shape.max_props or len(shape.required) > shape.max_props
    ):
        return NOTHING
    name_filters = _property_name_filters(conv, conj)
    unevaluated = _unevaluated(conj)
    applicators = [_Applicator(conv, loc) for loc in conj]
    members: list[Member] = []
    for name in shape.names:
        required = name in shape.required
        allowed = _name_allowed(conv, name_filters, name)
        value = _declared_value(conv, applicators, name, unevaluated) if allowed else NOTHING
        if value == NOTHING:
            if required:
                return NOTHING
            continue
        members.append(Member(member_rule(conv, json_literal_string(name), value), value, required))
    extras = _extra_members(conv, applicators, list(shape.names), name_filters, unevaluated)
    return object_expr(conv, members, extras, shape.min_props, shape.max_props)


def member_rule(conv: Converter, key: Expr, value: Expr) -> Expr:
    """``key : value`` as a rule of its own: member lists mention each member in many places
    (every optional tail, every any-order state), and a reference is cheap to repeat.

    A seam after the key keeps the key's automaton apart from ``ws : ws``, and one before the
    value keeps the value's apart from it too: ``ws : ws`` recurs in every member of every
    schema and so is built once per process, while joined to a value particular to one schema
    (an enum, a pattern, an array of these) it would be built again with each, at two indented
    whitespaces' worth of states more than the value alone (and an enum alone is a literal set,
    which the native builder makes directly). The matcher walks a token across the seam.

    The key stays one node, not flattened into the member's sequence as ``seq`` would: a
    quoted name is a sequence of a node per character, and flattened, every member would hand
    the lowering a run of them to classify and join into a program anew, where one node keeps
    its program and is lowered once per grammar however many members share the name (the
    same automaton either way)."""
    # The key, the glue ``ws : ws`` (flattened once per conversion), then the value flattened
    # one level as ``seq`` would; the empty language anywhere empties the member.
    items = (key, *conv.member_glue, *(value.items if isinstance(value, Seq) else (value,)))
    empty = any(isinstance(item, Alt) and not item.items for item in items)
    return conv.shared_rule("member", NOTHING if empty else Seq(items))


def _subschema(loc: Location, key: str, *path: str) -> Location:
    node: Any = loc.schema[key]
    for p in path:
        node = node[p]
    return Resolver.enter(node, child_pointer(loc.pointer, key, *path), loc.base)


def _patterns(loc: Location) -> list[tuple[str, Location]]:
    pp = loc.schema.get("patternProperties")
    return [(p, _subschema(loc, "patternProperties", p)) for p in pp] if isinstance(pp, dict) else []


def _additional(conv: Converter, loc: Location) -> Location | None:
    """The additionalProperties schema of one schema object (None: unconstrained)."""
    if "additionalProperties" in loc.schema:
        return _subschema(loc, "additionalProperties")
    if conv.strict:
        return Location(False, child_pointer(loc.pointer, "additionalProperties"), loc.base)
    return None


def _py_search(conv: Converter, pattern: str, name: str, pointer: str) -> bool:
    try:
        return re.search(pattern, name) is not None
    except re.error as exc:
        raise UnsupportedSchemaError(
            f"pattern {pattern!r} is not a valid regex: {exc}", keyword="patternProperties", pointer=pointer
        ) from exc


def _unevaluated(conj: list[Location]) -> list[tuple[Location, list[int]]]:
    """Each ``unevaluatedProperties`` that can still apply: (its subschema, the indices of the
    conjunction members whose annotations it sees: itself and what it reached in place)."""
    out = []
    for u in conj:
        if "unevaluatedProperties" not in u.schema:
            continue
        scope = [
            i
            for i, m in enumerate(conj)
            if (m is u or u.key in m.scope) and m.annotates and not m.schema.get(NO_ANNOTATIONS)
        ]
        if any(
            "additionalProperties" in conj[i].schema
            or (conj[i] is not u and "unevaluatedProperties" in conj[i].schema)
            for i in scope
        ):
            continue  # every property is evaluated in that scope
        out.append((_subschema(u, "unevaluatedProperties"), scope))
    return out


def _declared_value(
    conv: Converter, conj: list[_Applicator], name: str, unevaluated: list[tuple[Location, list[int]]]
) -> Expr:
    """The value of a declared property: every schema that applies to that key, together."""
    parts: list[Location] = []
    evaluated: set[int] = set()
    for index, schema in enumerate(conj):
        loc = schema.loc
        matched = False
        if name in schema.properties:
            parts.append(_subschema(loc, "properties", name))
            matched = True
        for pattern, sub in schema.patterns:
            if _py_search(conv, pattern, name, loc.pointer):
                parts.append(sub)
                matched = True
        if matched:
            evaluated.add(index)
        elif schema.additional is not None:
            parts.append(schema.additional)
    parts += [schema for schema, scope in unevaluated if not evaluated.intersection(scope)]
    return _value_of(conv, parts)


def _value_of(conv: Converter, parts: list[Location]) -> Expr:
    return conv.all_of(parts)


def _property_name_filters(conv: Converter, conj: list[Location]) -> list[Location]:
    return [_subschema(loc, "propertyNames") for loc in conj if "propertyNames" in loc.schema]


def _name_allowed(conv: Converter, filters: list[Location], name: str) -> bool:
    return all(conv.is_valid(name, f) for f in filters)


def _key_spec(conv: Converter, filters: list[Location], pointer: str) -> StringSpec | None:
    """The string constraints all keys obey (``propertyNames``); None if no key is allowed."""
    spec = StringSpec(pointer=pointer)
    for f in filters:
        for loc in composition.flatten(conv, f):
            if loc.schema is False:
                return None
            s = loc.schema
            if "string" not in composition.types_of([loc]):
                return None
            for key in ("anyOf", "oneOf", "not", "if", "$ref", "allOf"):
                if key in s and key not in ("$ref", "allOf"):
                    conv.unsupported("propertyNames with composition keywords", "propertyNames", loc.pointer)
            composition.tighten_string(conv, spec, loc)
            values = s.get("enum", [s["const"]] if "const" in s else None)
            if isinstance(values, list):
                strs = [v for v in values if isinstance(v, str)]
                spec.languages.append(("propertyNames", alt(*(literal(v) for v in strs))))
    return spec


def _unconstrained(spec: StringSpec) -> bool:
    return spec.min_length == 0 and spec.max_length is None and not spec.languages and not spec.excluded


def _extra_members(
    conv: Converter,
    conj: list[_Applicator],
    names: list[str],
    filters: list[Location],
    unevaluated: list[tuple[Location, list[int]]],
) -> list[Expr]:
    """Members whose keys are not declared, one per region of matching patterns."""
    pointer = conj[0].loc.pointer if conj else ""
    base = _key_spec(conv, filters, pointer)
    if base is None:
        return []
    patterns = [(p, sub, i) for i, schema in enumerate(conj) for p, sub in schema.patterns]
    if len(patterns) > _MAX_PATTERN_REGIONS:
        conv.unsupported(
            f"more than {_MAX_PATTERN_REGIONS} patternProperties patterns in one object",
            "patternProperties",
            pointer,
        )
        patterns = patterns[:_MAX_PATTERN_REGIONS]
    from ..regex import parse_regex  # the regex front-end gives content languages

    langs: list[Expr] = []
    for p, sub, _ in patterns:
        try:
            langs.append(parse_regex(p, search=True))
        except Exception as exc:  # GrammarSyntaxError and friends
            raise UnsupportedSchemaError(
                f"pattern {p!r}: {exc}", keyword="patternProperties", pointer=sub.pointer
            ) from exc
    # Keys as set operations on their JSON spellings, done natively (OP_DIFFERENCE), when
    # nothing but patterns and names constrains them: far cheaper than automata built here.
    spelled = [_escape_expr(lang, {}) for lang in langs]
    native = _unconstrained(base) and all(s is not None for s in spelled)
    out: list[Expr] = []
    for subset in range(1 << len(patterns)):
        inside = [k for k in range(len(patterns)) if subset >> k & 1]
        parts: list[Location] = [patterns[k][1] for k in inside]
        owners = {patterns[k][2] for k in inside}
        for i, schema in enumerate(conj):
            if i not in owners and schema.additional is not None:
                parts.append(schema.additional)
        parts += [schema for schema, scope in unevaluated if not owners.intersection(scope)]
        value = _value_of(conv, parts)
        if value == NOTHING:
            continue
        if native:
            quoted = [seq(_QUOTE, s, _QUOTE) for s in spelled if s is not None]
            # Every quoted spelling is a JSON string, so the first pattern's keys are its
            # spellings themselves; each further one intersects: A and B = A minus (A minus B).
            key = quoted[inside[0]] if inside else json_string()
            for k in inside[1:]:
                key = Difference(key, Difference(key, quoted[k]))
            excluded = [quoted[k] for k in range(len(patterns)) if k not in inside]
            excluded += [json_literal_string(n) for n in names]
            if excluded:
                key = Difference(key, alt(*excluded))
            out.append(member_rule(conv, key, value))
            continue
        spec = StringSpec(
            pointer=pointer,
            min_length=base.min_length,
            max_length=base.max_length,
            languages=list(base.languages),
            excluded=list(base.excluded),
        )
        spec.languages += [("patternProperties", langs[k]) for k in inside]
        spec.excluded += [("patternProperties", langs[k]) for k in range(len(patterns)) if k not in inside]
        if names:
            spec.excluded.append(("properties", alt(*(literal(n) for n in names))))
        try:
            key = string_expr(spec, conv.grammar, "key")
        except UnsatisfiableSchemaError:
            continue
        if key == NOTHING:
            continue
        out.append(member_rule(conv, key, value))
    return out


# ----------------------------------------------------------------------------- member sequences


def object_expr(
    conv: Converter,
    members: list[Member],
    extras: list[Expr],
    min_props: int,
    max_props: int | None,
    *,
    order: str | None = None,
) -> Expr:
    """``{`` members ``}`` with whitespace between tokens; see the module docstring for order."""
    order = order or conv.property_order
    if max_props is not None and (min_props > max_props or sum(m.required for m in members) > max_props):
        return NOTHING
    if order == "any" and (len(members) > 1 or (members and extras)):
        return _any_order(conv, members, extras, min_props, max_props)
    return _declared_order(conv, members, extras, min_props, max_props)


def _declared_order(
    conv: Converter, members: list[Member], extras: list[Expr], min_props: int, max_props: int | None
) -> Expr:
    options = []
    if min_props == 0 and not any(m.required for m in members):
        options.append(seq(literal("{"), conv.ws, literal("}")))
    body = _DeclaredMemberLists(conv, members, extras, min_props, max_props).fresh(0)
    if body != NOTHING:
        options.append(seq(literal("{"), conv.ws, body, conv.ws, literal("}")))
    return alt(*options) if options else NOTHING


class _DeclaredMemberLists:
    """The member lists of an object whose members come in declared order, additional
    members after them: one expression per (declared index, members written so far).

    A class rather than closures inside :func:`_declared_order`: mutually recursive closures
    are a reference cycle, which would keep the whole conversion alive until the garbage
    collector runs."""

    def __init__(
        self,
        conv: Converter,
        members: list[Member],
        extras: list[Expr],
        min_props: int,
        max_props: int | None,
    ) -> None:
        self.conv = conv
        self.members = members
        self.sep = seq(conv.ws, literal(","), conv.ws)
        self.extra = alt(*extras) if extras else None
        self.min_props = min_props
        self.max_props = max_props
        self.cap = max_props if max_props is not None else min_props  # counts above this do not matter
        self.memo: dict[tuple[str, int, int], Expr] = {}

    def bounds(self, c: int) -> tuple[int, int | None]:
        """How many additional members may follow when c members were written."""
        return max(0, self.min_props - c), None if self.max_props is None else self.max_props - c

    def step(self, c: int) -> int:
        return c + 1 if self.max_props is not None else min(c + 1, self.cap)

    def share(self, key: tuple[str, int, int], body: Expr) -> Expr:
        """Memoize a member-list tail as a rule: tails are shared by both branches of every
        optional member, and as plain trees their size would double per optional member."""
        if body in (NOTHING, EMPTY) or not isinstance(body, (Seq, Alt)):
            self.memo[key] = body
        else:
            self.memo[key] = self.conv.grammar.add(self.conv.fresh_name(f"members_{key[0]}"), body)
        return self.memo[key]

    def later(self, i: int, c: int) -> Expr:
        """Members from declared index i on, after at least one member was written."""
        key = ("later", i, c)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        if i == len(self.members):
            lo, hi = self.bounds(c)
            if hi is not None and hi < lo:
                self.memo[key] = NOTHING
            elif self.extra is None:
                self.memo[key] = EMPTY if lo == 0 else NOTHING
            else:
                self.memo[key] = Repeat(seq(self.sep, self.extra), lo, hi)
            return self.memo[key]
        m = self.members[i]
        full = self.max_props is not None and c >= self.max_props
        emit = NOTHING if full else seq(self.sep, m.key, self.later(i + 1, self.step(c)))
        return self.share(key, emit if m.required else alt(emit, self.later(i + 1, c)))

    def fresh(self, i: int) -> Expr:
        """Non-empty member lists from declared index i on, nothing written yet."""
        key = ("fresh", i, 0)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        if i == len(self.members):
            lo, hi = self.bounds(1)
            if self.extra is None or (hi is not None and hi < lo):
                self.memo[key] = NOTHING
            else:
                self.memo[key] = seq(self.extra, Repeat(seq(self.sep, self.extra), lo, hi))
            return self.memo[key]
        m = self.members[i]
        emit = NOTHING if self.max_props == 0 else seq(m.key, self.later(i + 1, self.step(0)))
        return self.share(key, emit if m.required else alt(emit, self.fresh(i + 1)))


def _any_order(
    conv: Converter, members: list[Member], extras: list[Expr], min_props: int, max_props: int | None
) -> Expr:
    """Members in any order: an :class:`~tokensieve.ir.Unordered` set whose items are the
    declared members and whose repeatable item is any additional member."""
    options = []
    if min_props == 0 and not any(m.required for m in members):
        options.append(seq(literal("{"), conv.ws, literal("}")))
    if max_props != 0:
        body = Unordered(
            items=tuple(m.key for m in members),
            separator=seq(conv.ws, literal(","), conv.ws),
            required=frozenset(i for i, m in enumerate(members) if m.required),
            repeatable=alt(*extras) if extras else None,
            min_count=max(min_props, 1),  # the empty object is the option above
            max_count=max_props,
        )
        options.append(seq(literal("{"), conv.ws, body, conv.ws, literal("}")))
    return alt(*options) if options else NOTHING
