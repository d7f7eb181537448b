"""The entry point: :func:`json_schema_to_grammar`, and the :class:`Converter` that walks a schema.

Reading order: :func:`json_schema_to_grammar` loads the schema (:func:`load_schema`),
then :meth:`Converter.value` turns one subschema into an IR expression:

1. a schema that is only a ``$ref`` becomes a :class:`~tokensieve.ir.Ref` to a rule of its
   own (so recursion of any depth is plain grammar recursion, never unrolled);
2. otherwise the schema is *flattened* into a conjunction of plain schema objects
   (``allOf`` and ``$ref`` with siblings inlined, :mod:`.composition`);
3. ``anyOf``/``oneOf``/``if``/``not`` are distributed over that conjunction;
4. what remains is split by JSON type; each type's keywords from every conjunct are
   combined by :mod:`.strings`, :mod:`.numbers`, :mod:`.arrays` and :mod:`.objects`.

A keyword that cannot be enforced exactly raises :class:`UnsupportedSchemaError` unless
it was relaxed, in which case it is dropped with a warning (the grammar then accepts a
superset, and :func:`tokensieve.validate` must check the output).
"""

from __future__ import annotations

import json
import re
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Literal, TypeVar

from ...errors import LimitExceeded, UnsatisfiableSchemaError, UnsupportedSchemaError
from ...ir import NOTHING, SEAM, Expr, Grammar, Ref, Seq, alt, literal, seq
from ..json_value import json_number, json_string
from ..whitespace import WhitespacePolicy, whitespace_expr
from . import arrays, composition, objects, strings
from .drafts import declared_draft, without_later_keywords
from .keywords import TYPES, check_keywords, is_trivial
from .location import BaseURI, Location, child_pointer
from .numbers import NumberSpec, number_expr
from .refs import Resolver, names_no_resources

__all__ = ["Converter", "json_schema_to_grammar", "load_schema"]

PropertyOrder = Literal["declared", "any"]

_MAX_REF_DEPTH: Final = 40  # nested $ref targets built eagerly; deeper ones wait in a work list


def load_schema(schema: Any) -> dict[str, Any] | bool:
    """A schema as a JSON value: dicts and booleans pass, strings are parsed as JSON,
    Pydantic models and Python type hints are converted with pydantic."""
    if isinstance(schema, (dict, bool)):
        return schema
    if isinstance(schema, (str, bytes)):
        try:
            loaded = json.loads(schema)
        except json.JSONDecodeError as exc:
            raise UnsupportedSchemaError(f"the schema is not valid JSON: {exc}") from exc
        if not isinstance(loaded, (dict, bool)):
            raise UnsupportedSchemaError("a schema must be a JSON object or a boolean")
        return loaded
    model_schema = getattr(schema, "model_json_schema", None)
    if callable(model_schema) and isinstance(schema, type):
        return model_schema()  # type: ignore[no-any-return]
    try:
        from pydantic import TypeAdapter
    except ImportError as exc:  # pragma: no cover - pydantic is an optional dependency
        raise UnsupportedSchemaError(
            f"cannot read a schema from {schema!r}: install pydantic (pip install tokensieve[pydantic])"
        ) from exc
    try:
        return TypeAdapter(schema).json_schema()  # type: ignore[no-any-return]
    except Exception as exc:  # pydantic raises many kinds for types it cannot describe
        raise UnsupportedSchemaError(f"cannot derive a JSON Schema from {schema!r}: {exc}") from exc


# Keywords that never make a value invalid (annotations).
_ANNOTATIONS: Final = frozenset(
    {"title", "description", "$comment", "default", "examples", "deprecated", "readOnly", "writeOnly"}
)
# The JSON type names a Python value has, whatever the draft: only an integral float is
# left out (an "integer" from draft 6 on, not in drafts 3 and 4), so jsonschema decides it.
_JSON_TYPES: Final[dict[type, frozenset[str]]] = {
    type(None): frozenset({"null"}),
    bool: frozenset({"boolean"}),
    int: frozenset({"integer", "number"}),
    str: frozenset({"string"}),
    list: frozenset({"array"}),
    dict: frozenset({"object"}),
}


# Keywords that never make a value invalid: annotations, and those that name a schema or hold
# definitions without applying them to the value. A key starting with "x-" is an extension
# (the front-end's own marks among them), unknown to every draft, so no validator applies it.
_INERT: Final = _ANNOTATIONS | {"$schema", "$id", "id", "$anchor", "$defs", "definitions"}
_MAX_VERDICT_DEPTH: Final = 16  # nested "not" and "$ref" followed by the quick verdict
# Keywords that constrain one kind of value only, and hold for every other kind in every draft
# (``format`` is not among them: a format checker decides what it applies to). Kinds are
# named by :func:`_value_kind`.
_ONLY_FOR: Final[dict[str, type]] = {
    **dict.fromkeys(
        ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "divisibleBy"), float
    ),
    "pattern": str,
    **dict.fromkeys(
        ("items", "prefixItems", "additionalItems", "contains", "minContains", "maxContains", "uniqueItems"),
        list,
    ),
    "unevaluatedItems": list,
    **dict.fromkeys(
        ("properties", "patternProperties", "additionalProperties", "required", "propertyNames"), dict
    ),
    **dict.fromkeys(
        ("dependencies", "dependentRequired", "dependentSchemas", "unevaluatedProperties"), dict
    ),
}


_COMBINATORS: Final = frozenset({"allOf", "anyOf", "oneOf"})


def _combined_verdict(key: str, arms: list[bool | None]) -> bool | None:
    """The verdict of ``allOf``/``anyOf``/``oneOf`` from its arms' verdicts; None when one is
    unknown (jsonschema may find that arm in error before it finds the others' answer)."""
    if None in arms:
        return None
    if key == "allOf":
        return all(arms)
    return any(arms) if key == "anyOf" else arms.count(True) == 1


def _value_kind(value: Any) -> type:
    """The kind of JSON value ``value`` is, as :data:`_ONLY_FOR` names kinds: ``float`` for a
    number, ``str``, ``list``, ``dict``; ``object`` for null, booleans and anything else."""
    if isinstance(value, bool):
        return object
    if isinstance(value, (int, float)):
        return float
    for kind in (str, list, dict):
        if isinstance(value, kind):
            return kind
    return object


# Size bounds: the kind of value each applies to (others pass it), and whether it is an upper one.
_SIZE_BOUNDS: Final[dict[str, tuple[type, bool]]] = {
    "minLength": (str, False),
    "maxLength": (str, True),
    "minItems": (list, False),
    "maxItems": (list, True),
    "minProperties": (dict, False),  # from draft 4 on
    "maxProperties": (dict, True),
}


def _type_verdict(value: Any, declared: Any) -> bool | None:
    """Whether ``value`` has one of the ``type`` keyword's types; None where the drafts differ
    or the keyword is not a plain list of type names (jsonschema then decides)."""
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list) or not all(n in TYPES for n in names):
        return None  # "any" (draft 3), a schema inside "type", a misspelling: jsonschema's call
    if type(value) is float:
        return None if "integer" in names and value.is_integer() else "number" in names
    have = _JSON_TYPES.get(type(value))
    return None if have is None else any(n in have for n in names)


def json_schema_to_grammar(
    schema: dict[str, Any] | bool | str | type,
    *,
    whitespace: WhitespacePolicy | str | int | None = None,
    strict: bool = False,
    property_order: PropertyOrder = "declared",
    relax: bool | Iterable[str] = False,
    documents: Mapping[str, Any] | None = None,
    deadline: float | None = None,
) -> Grammar:
    """The grammar whose language is the JSON serializations of the schema's valid instances.

    - ``whitespace``: what may appear between JSON tokens (bounded runs only; None, "default",
      "compact", an int or a :class:`WhitespacePolicy`);
    - ``strict``: structured-output semantics: no additional properties unless a schema
      allows them explicitly, every declared property required;
    - ``property_order``: ``"declared"`` (properties in declaration order, optional ones
      skippable, additional ones after them) or ``"any"`` (any order, each at most once);
    - ``relax``: True or a set of keyword names that may be dropped (with a warning)
      when they cannot be enforced; the output must then be checked with ``validate``;
    - ``documents``: extra schema documents by URI, for ``$ref`` to other documents;
    - ``deadline``: a ``time.monotonic()`` instant past which the conversion stops with
      :class:`LimitExceeded` (``limit="max_compile_seconds"``); the :class:`Compiler` sets it
      from ``Limits.max_compile_seconds`` for the whole compile.

    Raises :class:`UnsupportedSchemaError` naming the keyword and its JSON pointer, or
    :class:`UnsatisfiableSchemaError` when no value is valid.
    """
    if property_order not in ("declared", "any"):
        raise ValueError(f"property_order must be 'declared' or 'any', not {property_order!r}")
    root = load_schema(schema)
    conv = Converter(
        root,
        WhitespacePolicy.coerce(whitespace),
        strict=strict,
        property_order=property_order,
        relax=relax,
        documents=documents,
        deadline=deadline,
        source=schema if isinstance(schema, (str, bytes)) else None,
    )
    return conv.build()


T = TypeVar("T")

# What a rule name's hint replaces with "_": \W is every character but str.isalnum()'s and "_".
_NOT_ALNUM: Final = re.compile(r"\W")

# The body of the "any_value" rule, by whitespace expression. Most schemas allow values of any
# kind somewhere (every object without additionalProperties: false), and one shared body lets
# the compiler keep what it derives from the nodes across grammars instead of redoing it.
_ANY_VALUE_BODIES: Final[dict[Expr, Expr]] = {}



def _lone_reference(schema: dict[str, Any]) -> tuple[str, str] | None:
    """(keyword, reference) when the schema is a ``$ref`` or ``$dynamicRef`` alone (its other
    keywords annotations), else None."""
    for keyword in ("$ref", "$dynamicRef"):
        ref = schema.get(keyword)
        if isinstance(ref, str) and is_trivial({k: v for k, v in schema.items() if k != keyword}):
            return keyword, ref
    return None

class Converter:
    """Turns the subschemas of one root schema into rules of one grammar."""

    def __init__(
        self,
        root: Any,
        whitespace: WhitespacePolicy,
        *,
        strict: bool,
        property_order: PropertyOrder,
        relax: bool | Iterable[str],
        documents: Mapping[str, Any] | None,
        deadline: float | None = None,
        source: str | bytes | None = None,
    ) -> None:
        """``source``: the JSON text ``root`` was read from, if any (it tells the resolver
        whether any subschema can define an ``$id`` or an anchor)."""
        self.draft = declared_draft(root)
        root = without_later_keywords(root, self.draft)  # unknown to that draft: annotations
        self.root = root
        self.grammar = Grammar(start="root")
        self.ws = whitespace_expr(whitespace)
        glue = seq(SEAM, self.ws, literal(":"), self.ws, SEAM)
        self.member_glue: tuple[Expr, ...] = glue.items if isinstance(glue, Seq) else (glue,)
        """What separates an object member's key from its value: the items of
        ``seq(SEAM, ws, ":", ws, SEAM)`` (see :func:`.objects.member_rule`)."""
        self.strict = strict
        self.property_order = property_order
        self.relax: bool | frozenset[str] = relax if isinstance(relax, bool) else frozenset(relax)
        ids_below = source is None or not names_no_resources(source)
        self.resolver = Resolver(root, documents, subschema_ids=ids_below)
        self._ref_rules: dict[tuple[int, BaseURI], Expr] = {}
        self._keep_alive: list[object] = []  # schemas whose ids key the memos
        self._all_of_rules: dict[tuple[tuple[int, BaseURI], ...], tuple[Expr, list[Location]]] = {}
        self._inlining: list[int] = []
        self._validator: Any = None
        self._validated_keywords: frozenset[str] | None = None  # what that validator knows
        self.checked_schemas: set[int] = set()
        """Ids of the schema objects :func:`.keywords.check_keywords` has passed (kept alive)."""
        self._names = 0
        self._shared_rules: dict[Expr, Ref] = {}
        self._depth = 0  # $ref rules being built, nested
        self._deferred: list[tuple[str, Location]] = []
        self.memo: dict[Any, Any] = {}
        """Results of costly steps by a key of their inputs (strings, subtractions)."""
        self.zero_fraction_integers = self.draft >= 6
        self.deadline = deadline
        """Drafts 3 and 4 (by the root's ``$schema``) do not count ``1.0`` as an integer."""

    def build(self) -> Grammar:
        try:
            body = self.value(self.resolver.root_location())
            while self._deferred:  # $ref targets met too deep in the recursion, built now
                name, target = self._deferred.pop()
                self._depth = 0
                self.grammar.rules[name] = self.value(target)
        except RecursionError as exc:
            raise UnsupportedSchemaError("the schema nests too deeply to convert") from exc
        except OverflowError as exc:  # an automaton past its state limit, wherever it was built
            raise UnsupportedSchemaError(f"the schema needs too large an automaton: {exc}") from exc
        if body == NOTHING:
            raise UnsatisfiableSchemaError("the schema admits no JSON value", pointer="")
        self.grammar.rules["root"] = seq(self.ws, body, self.ws)
        return self.grammar

    def remembered(self, key: Any, make: Callable[[], T], *alive: object) -> T:
        """The value kept under ``key`` for this conversion, made by ``make`` on first use.

        Memo keys name schemas and expressions by ``id``; ``alive`` are those objects, kept
        with the entry so that no id is reused while the key stands."""
        hit = self.memo.get(key)
        if hit is None:
            hit = (make(), alive)
            self.memo[key] = hit
        return hit[0]  # type: ignore[no-any-return]

    def check_deadline(self) -> None:
        """Stop with :class:`LimitExceeded` once past the compile's deadline. Called once per
        subschema and per conjunction: cheap (a clock read), and frequent enough that no
        single step between two calls can run long on its own."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise LimitExceeded(
                "converting the schema took longer than max_compile_seconds", limit="max_compile_seconds"
            )

    def fresh_name(self, hint: str) -> str:
        """A new rule name (a counter: ``Grammar.fresh_name`` scans, which is quadratic here)."""
        while True:
            self._names += 1
            name = f"{hint}_{self._names}"
            if name not in self.grammar.rules:
                return name

    def shared_rule(self, hint: str, body: Expr) -> Ref:
        """A rule for ``body``, one per distinct body in this conversion: the same member
        (key and value) met again, as where ``allOf`` merges a base object's properties into
        each object that extends it, is the same rule, lowered once. (WashingtonPost's
        schemas made 2,069 member rules with 847 distinct bodies.)"""
        ref = self._shared_rules.get(body)
        if ref is None:
            ref = self.grammar.add(self.fresh_name(hint), body)
            self._shared_rules[body] = ref
        return ref

    # -- errors and relaxation --------------------------------------------------------

    def unsupported(self, message: str, keyword: str, pointer: str) -> None:
        """Raise for a keyword that cannot be enforced, or warn and go on if it is relaxed."""
        if self.relax is True or (isinstance(self.relax, frozenset) and keyword in self.relax):
            warnings.warn(
                f"tokensieve: keyword {keyword!r} at {pointer or '/'!r} is not enforced by the grammar: "
                f"{message}",
                stacklevel=4,
            )
            return
        raise UnsupportedSchemaError(message, keyword=keyword, pointer=pointer)

    # -- values -------------------------------------------------------------------------

    def value(self, loc: Location) -> Expr:
        """The serializations of the instances valid under the schema at ``loc``."""
        schema = loc.schema
        if schema is True:
            return self.any_value()
        if schema is False:
            return NOTHING
        if not isinstance(schema, dict):
            raise UnsupportedSchemaError("a schema must be an object or a boolean", pointer=loc.pointer)
        self.check_deadline()
        check_keywords(self, loc)
        if is_trivial(schema):
            return self.any_value()
        lone = _lone_reference(schema)
        if lone is not None:
            return self.ref_rule(self._resolve(loc, *lone))
        return composition.conjunction_value(self, composition.flatten(self, loc))

    def _resolve(self, loc: Location, keyword: str, ref: str) -> Location:
        """The target of the ``$ref`` or ``$dynamicRef`` ``ref`` of the schema at ``loc``."""
        if keyword == "$ref":
            return self.resolver.resolve(ref, loc)
        return self.resolver.resolve_dynamic(ref, loc)

    def keep_alive(self, schema: object) -> None:
        """Keep ``schema`` alive for the conversion: its ``id`` names it in a memo or mark."""
        self._keep_alive.append(schema)

    def ref_rule(self, target: Location) -> Expr:
        """A rule for a subschema (a ``$ref`` target...), made once; recursion refers back to it."""
        key = (id(target.schema), target.base)
        made = self._ref_rules.get(key)
        if made is not None:
            return made
        if target.schema is True or (isinstance(target.schema, dict) and is_trivial(target.schema)):
            return self.any_value()
        referred = self._through_references(target)
        if referred is not target:  # a reference alone is the rule of what it refers to
            made = self.ref_rule(referred)
            self._ref_rules[key] = made
            self._keep_alive.append(target.schema)
            return made
        tail = target.pointer.rpartition("/")[2][:40]
        # (A definition's name is usually a word already: no regex substitution then.)
        hint = "ref_" + (tail if tail.replace("_", "a").isalnum() else _NOT_ALNUM.sub("_", tail))
        name = self.fresh_name(hint or "ref")
        self.grammar.rules[name] = NOTHING  # reserved: recursion sees the name
        self._ref_rules[key] = Ref(name)
        self._keep_alive.append(target.schema)
        if self._depth >= _MAX_REF_DEPTH:
            # Deep chains of definitions would exhaust the Python stack: build this one
            # later from build()'s work list (its emptiness is then left to the grammar).
            self._deferred.append((name, target))
            return Ref(name)
        self._depth += 1
        try:
            body = self.value(target)
        finally:
            self._depth -= 1
        self.grammar.rules[name] = body
        if body == NOTHING:
            self._ref_rules[key] = NOTHING
        return self._ref_rules[key]

    def _through_references(self, target: Location) -> Location:
        """Where a chain of schemas that are a ``$ref`` or ``$dynamicRef`` alone (other
        keywords annotations) leads from ``target``: the first schema that is more, or has a
        rule already; ``target`` itself when it is no such reference, or when the chain comes
        back to a schema of it (a cycle of references).

        A property's schema is most often such a reference (``{"$ref": "#/definitions/x"}``),
        a new dict in each object that declares the property. Its own rule would only name
        the definition's: WashingtonPost wp_17 had 348 of these among 1,358 rules, and the
        members that hold them differed by that name alone, so they were not shared either.
        Each schema in the chain is checked as :meth:`value` checks it."""
        seen = {(id(target.schema), target.base)}
        loc = target
        while isinstance(loc.schema, dict):
            lone = _lone_reference(loc.schema)
            if lone is None:
                break
            self.check_deadline()
            check_keywords(self, loc)
            nxt = self._resolve(loc, *lone)
            key = (id(nxt.schema), nxt.base)
            if key in seen:
                # A cycle of references: ``target`` gets a rule the usual way, whose body
                # refers on (value() follows the reference) until the rule is met again.
                return target
            seen.add(key)
            loc = nxt
            if key in self._ref_rules:
                break
        return loc

    def all_of(self, parts: list[Location]) -> Expr:
        """The instances valid under every schema of ``parts`` (one instance location).

        Several schemas meeting at one location (a property's own schema plus a matching
        ``patternProperties`` one...) get one rule per distinct combination, made once, so
        that recursion through such combinations stays finite.
        """
        if not parts:
            return self.any_value()
        if len(parts) == 1:  # the usual property: its own schema alone (see below)
            return self._one_rule(parts[0])
        # A schema met twice at one location (a base object reached through two of the
        # conjuncts that extend it) adds nothing the second time: X and X is X, and the rule
        # for X alone is shared by every other use. (WashingtonPost wp_0: 420 of 642 merges
        # held a part twice, 345 nothing else.)
        by_key: dict[tuple[int, BaseURI], Location] = {}
        for part in parts:
            by_key.setdefault((id(part.schema), part.base), part)
        parts = list(by_key.values())
        if len(parts) == 1:
            return self._one_rule(parts[0])
        key = tuple(by_key)
        if key in self._all_of_rules:
            return self._all_of_rules[key][0]
        name = self.fresh_name("all_of")
        self.grammar.rules[name] = NOTHING  # reserved: recursion sees the name
        # The parts are kept alive with the memo: ids of collected dicts could be reused.
        self._all_of_rules[key] = (Ref(name), parts)
        conj = [loc for part in parts for loc in composition.flatten(self, part)]
        try:
            body = composition.conjunction_value(self, conj) if conj else self.any_value()
        except UnsatisfiableSchemaError:
            body = NOTHING
        if body == NOTHING:
            self.grammar.rules[name] = body
            self._all_of_rules[key] = (NOTHING, parts)
            return NOTHING
        # Other combinations of schemas often come to the same body (a base object merged
        # into each object that extends it): those share one rule. This name then stands
        # for that rule, for the references made to it while its body was built.
        ref = self._shared_rules.setdefault(body, Ref(name))
        self.grammar.rules[name] = body if ref.name == name else ref
        self._all_of_rules[key] = (ref, parts)
        return ref

    def _one_rule(self, part: Location) -> Expr:
        """:meth:`all_of` of one schema. One rule per subschema met at a value position: an
        inline schema reached again through inlined references (anyOf [{$ref: A}] inside A)
        then ends in recursion."""
        try:
            return self.ref_rule(part)
        except UnsatisfiableSchemaError:
            return NOTHING

    def any_value(self) -> Expr:
        """Any JSON value (the schema ``true``), as a recursive rule of this grammar.

        The rule's body depends on the whitespace alone, and is one shared object per
        whitespace expression (see :data:`_ANY_VALUE_BODIES`)."""
        if "any_value" not in self.grammar.rules:
            self.grammar.rules["any_value"] = NOTHING
            body = _ANY_VALUE_BODIES.get(self.ws)
            if body is None:
                body = alt(
                    literal("null"),
                    literal("true"),
                    literal("false"),
                    json_number(),
                    json_string(),
                    arrays.any_array(self),  # through Ref("any_value"): no rule of this grammar
                    objects.any_object(self),
                )
                if len(_ANY_VALUE_BODIES) < 64:  # whitespace expressions are few (one per policy)
                    body = _ANY_VALUE_BODIES.setdefault(self.ws, body)
            self.grammar.rules["any_value"] = body
        return Ref("any_value")

    def typed_value(self, conj: list[Location], types: frozenset[str]) -> Expr:
        """The instances of the given JSON types that satisfy every schema of ``conj``."""
        options: list[Expr] = []
        if "null" in types:
            options.append(literal("null"))
        if "boolean" in types:
            options.append(alt(literal("true"), literal("false")))
        if "number" in types or "integer" in types:
            options.append(self.number(conj, integer="number" not in types))
        if "string" in types:
            options.append(self.string(conj))
        if "array" in types:
            options.append(arrays.array_value(self, conj))
        if "object" in types:
            options.append(objects.object_value(self, conj))
        return alt(*options) if options else NOTHING

    def number(self, conj: list[Location], *, integer: bool) -> Expr:
        spec = NumberSpec(
            pointer=conj[0].pointer if conj else "",
            integer=integer,
            zero_fraction_integers=self.zero_fraction_integers,
        )
        for loc in conj:
            composition.tighten_number(self, spec, loc)
        # One expression per distinct combination of constraints, as for strings below: a
        # multipleOf builds a residue automaton and its product with the range, and negations
        # and oneOf/contains arms meet the same number many times (Handwritten
        # oneofitemscontains1 built 71 of them for two distinct numbers). Bounds and step are
        # keyed by their spelling: "1.0000" and "1" are equal values but not equal steps
        # (the first needs 10,000 residues and is refused).
        key = (
            "number",
            spec.integer,
            None if spec.lower is None else str(spec.lower),
            spec.lower_strict,
            None if spec.upper is None else str(spec.upper),
            spec.upper_strict,
            None if spec.multiple_of is None else str(spec.multiple_of),
            spec.zero_fraction_integers,
        )

        def make() -> Expr:
            try:
                return number_expr(spec, self.grammar, "number")
            except UnsatisfiableSchemaError:
                return NOTHING

        return self.remembered(key, make)  # the key holds values only: nothing to keep alive

    def string(self, conj: list[Location]) -> Expr:
        spec = strings.StringSpec(pointer=conj[0].pointer if conj else "")
        for loc in conj:
            composition.tighten_string(self, spec, loc)
        # One expression per distinct combination of constraints: negations and oneOf arms
        # meet the same string many times, and automata built from it are remembered per
        # expression object (:func:`.automata.dfa_from_expr`). Languages are shared objects
        # (formats and patterns are parsed once), so their ids identify them.
        key = (
            "string",
            spec.min_length,
            spec.max_length,
            tuple((k, id(e)) for k, e in spec.languages),
            tuple((k, id(e)) for k, e in spec.excluded),
        )

        def make() -> Expr:
            try:
                return strings.string_expr(spec, self.grammar, "string")
            except UnsatisfiableSchemaError:
                return NOTHING

        return self.remembered(key, make, spec)  # the spec holds the languages named by id

    # -- validation of concrete values (enum/const filtering) ----------------------------

    def is_valid(self, value: Any, loc: Location) -> bool:
        """Whether ``value`` is valid under the schema at ``loc`` (jsonschema, formats checked)."""
        quick = self.quick_verdict(value, loc)
        if quick is not None:  # the usual enum: its other keywords are a type and annotations
            return quick
        if self._validator is None:
            # Imported here, once per conversion: a function-level import runs the import
            # machinery at each call (1.5% of a WashingtonPost compile when it opened this
            # method), and jsonschema stays unloaded until a value needs it.
            from .validate import make_validator

            self._validator = make_validator(self.root, self.resolver)
        try:
            return bool(self._validator.evolve(schema=loc.schema).is_valid(value))
        except Exception as exc:  # a reference jsonschema cannot follow, a bad regex...
            raise UnsupportedSchemaError(
                f"cannot check enum/const values against this schema: {exc}",
                keyword="enum",
                pointer=loc.pointer,
            ) from exc

    def validated_keywords(self) -> frozenset[str]:
        """The keywords the validator of :meth:`is_valid` knows (its draft's); it ignores others."""
        if self._validated_keywords is None:
            import jsonschema

            cls = jsonschema.validators.validator_for(self.root, default=jsonschema.Draft202012Validator)
            self._validated_keywords = frozenset(cls.VALIDATORS)
        return self._validated_keywords

    def quick_verdict(self, value: Any, loc: Location, depth: int = 0) -> bool | None:
        """:meth:`is_valid` without a validator, when the schema at ``loc`` holds no keywords
        but ``type``, ``enum``, ``const``, size bounds, ``not`` and ``$ref`` (of such schemas),
        keywords for other kinds of values than ``value`` (:data:`_ONLY_FOR`), keywords the
        validator does not know (it ignores them) and inert ones (annotations, ids,
        definitions, extensions); None otherwise, or when one of them leaves the answer to
        jsonschema (which may also find the schema in error).

        Filtering the values of one enum by the schemas around it asks this hundreds of
        times per schema; jsonschema took a tenth of some front-ends' time."""
        schema = loc.schema
        if isinstance(schema, bool):
            return schema
        if not isinstance(schema, dict) or depth > _MAX_VERDICT_DEPTH:
            return None
        ref = schema.get("$ref")
        if self.draft <= 7 and isinstance(ref, str):
            schema = {"$ref": ref}  # up to draft-07 the siblings of $ref are ignored
        verdict = True
        value_kind = _value_kind(value)
        for key, arg in schema.items():
            if key in _INERT or key.startswith("x-"):
                continue
            if key in _ONLY_FOR and _ONLY_FOR[key] is not value_kind:
                continue  # a keyword for another kind of value (items, to a string)
            if key == "type":
                holds = _type_verdict(value, arg)
            elif key == "enum" and isinstance(arg, list):
                holds = any(composition.json_equal(value, listed) for listed in arg)
            elif key == "const" and self.draft >= 6:
                holds = composition.json_equal(value, arg)
            elif key == "not" and self.draft >= 4:
                inner = Resolver.enter(arg, child_pointer(loc.pointer, "not"), loc.base)
                negated = self.quick_verdict(value, inner, depth + 1)
                holds = None if negated is None else not negated
            elif key in _COMBINATORS and self.draft >= 4 and isinstance(arg, list) and arg:
                arms = []
                for i, sub in enumerate(arg):
                    place = Resolver.enter(sub, child_pointer(loc.pointer, key, i), loc.base)
                    arms.append(self.quick_verdict(value, place, depth + 1))
                holds = _combined_verdict(key, arms)
            elif key in _SIZE_BOUNDS and type(arg) in (int, float) and (self.draft >= 4 or "Prop" not in key):
                kind, upper = _SIZE_BOUNDS[key]
                if not isinstance(value, (str, list, dict)) or not isinstance(value, kind):
                    holds = True  # a bound on other kinds of values
                else:
                    holds = len(value) <= arg if upper else len(value) >= arg
            elif key == "$ref" and isinstance(arg, str):
                try:
                    target = self.resolver.resolve(arg, loc)
                except UnsupportedSchemaError:
                    return None  # jsonschema's error, or its reading, decides
                holds = self.quick_verdict(value, target, depth + 1)
            elif key not in self.validated_keywords():
                continue  # unknown to the validator, which ignores it (a vendor's annotation)
            else:
                return None
            if holds is None:
                return None  # jsonschema decides (it may also find the schema in error)
            verdict = verdict and holds
        return verdict
