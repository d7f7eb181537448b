"""Regex front-end: a regular expression becomes one IR expression over UTF-8 bytes.

Dialect: the common subset of Python ``re`` and ECMAScript (see :mod:`.regex_parser`
for the exact list and what is rejected). Semantics chosen where the two differ:

- ``\\d`` and ``\\w`` are ASCII (``[0-9]``, ``[A-Za-z0-9_]``); ``\\s`` is ECMAScript's
  Unicode white space set. ``.`` is any character except ``\\n`` (``(?s)`` adds it).
- ``(?i)`` folds the case of written characters and ranges over all of Unicode (simple
  one-character mappings, so K, k and KELVIN SIGN match each other); class escapes
  (``\\w``, ``\\W``, ``\\p{..}``...) are not folded, so ``(?i)\\W`` never matches ``k``.
- ``[\\w-.]`` (a class escape at one end of a range) is ECMAScript's union with a literal
  ``-``; Python rejects it, so the two never disagree.
- Lazy quantifiers are treated as greedy: a recognizer's language does not depend on it.
  Possessive quantifiers and atomic groups change the language and are rejected.
- ``{,n}`` is rejected as ambiguous (Python: ``{0,n}``; ECMAScript: literal text), and so
  are ``[]`` / ``[^]``. ``\\uD83D\\uDE00`` (an ECMAScript surrogate pair) is one character.
- ``$`` matches only at the very end (ECMAScript), never before a final newline.

Anchors (``^``/``\\A`` and ``$``/``\\Z``/``\\z``) may appear anywhere and mean what they
mean in a search: ``^`` holds where everything before it is empty, ``$`` where everything
after it is, so ``a^b`` matches nothing and ``^(a|b$)(c)?`` needs no ``c`` after ``b``. The
one rejected placement is a repeated group holding both ``^`` and ``$`` iterations.

In full-match mode (the default) the whole text must match, so anchors at the ends are
redundant. With ``search=True`` (JSON Schema ``pattern``), a match that passed no ``^``
may be preceded by any text, and one that passed no ``$`` followed by any text: ``abc``
means "contains abc", ``^abc`` "starts with abc".

Lookaheads cannot be expressed in the IR (it has no intersection). :func:`parse_regex`
rejects them; :func:`parse_regex_constraints` accepts them at the start of the text
(``^(?!pattern$).*$``, ``^(?=.*\\d).{8,}$``) and returns the languages to intersect.

Repetition is built as :class:`~tokensieve.ir.Repeat` nodes, never unrolled here, so
``(a{1000}){1000}`` is cheap to parse; the compiler enforces size limits.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import GrammarSyntaxError
from ..ir import EMPTY, Alt, Expr, Grammar, Repeat, Seq, alt, seq
from . import charsets
from .regex_parser import Anchor, Chars, Concat, Look, Node, Quant, Union, parse_regex_ast

__all__ = ["RegexConstraints", "any_text", "parse_regex", "parse_regex_constraints", "regex_grammar"]

# A lowered node, split by how it is anchored: (anchored at start, anchored at end) -> expr.
_Split = dict[tuple[bool, bool], Expr]


def parse_regex(pattern: str, *, search: bool = False) -> Expr:
    """The IR expression for ``pattern``.

    ``search=False``: the expression matches exactly the strings ``pattern`` fully matches
    (as ``re.fullmatch``). ``search=True``: the strings in which ``pattern`` matches
    somewhere (as ``re.search``, JSON Schema ``pattern``), honouring ``^``/``$``.

    Raises :class:`GrammarSyntaxError` (``source="regex"``, ``line=1``, ``column`` = the
    1-based character offset) for malformed or unsupported syntax.
    """
    if not isinstance(pattern, str):
        raise TypeError(f"regex pattern must be a str, not {type(pattern).__name__}")
    return _finish(_lower(parse_regex_ast(pattern)), search)


@dataclass(frozen=True)
class RegexConstraints:
    """A pattern with lookaheads, as regular languages to intersect.

    A text matches the pattern iff it is in ``language``, in every language of
    ``required`` and in none of ``forbidden``. The IR has no intersection, so the caller
    combines them (the JSON Schema front-end does, with byte automata).
    """

    language: Expr
    required: tuple[Expr, ...] = ()
    forbidden: tuple[Expr, ...] = ()


def parse_regex_constraints(pattern: str, *, search: bool = False) -> RegexConstraints:
    """Like :func:`parse_regex`, but also accepts lookaheads at the start of the pattern.

    ``^(?=A)(?!B)C`` (and, in full-match mode, ``(?=A)C`` without ``^``) becomes
    ``language`` = ``^C``, ``required`` = [texts starting with a match of ``A``],
    ``forbidden`` = [texts starting with a match of ``B``] (a ``$`` inside a lookahead
    pins its match to the end of the text). A lookahead anywhere else is an error.
    """
    if not isinstance(pattern, str):
        raise TypeError(f"regex pattern must be a str, not {type(pattern).__name__}")
    node = parse_regex_ast(pattern)
    items = node.items if isinstance(node, Concat) else (node,)
    head: tuple[Node, ...] = ()
    if items and isinstance(items[0], Anchor) and items[0].start:
        head, items = items[:1], items[1:]
    looks: list[Look] = []
    if head or not search:  # the lookaheads are at the start of the text
        while items and isinstance(items[0], Look):
            looks.append(items[0])
            items = items[1:]
    language = _finish(_lower(Concat(head + items, node.pos)), search)
    return RegexConstraints(
        language,
        required=tuple(_texts_starting_with(look) for look in looks if not look.negative),
        forbidden=tuple(_texts_starting_with(look) for look in looks if look.negative),
    )


def _texts_starting_with(look: Look) -> Expr:
    """The texts a lookahead at position 0 accepts: a match of its body, then anything."""
    return _finish(_lower(Concat((Anchor(True, look.pos), look.item), look.pos)), search=True)


def regex_grammar(pattern: str, *, search: bool = False) -> Grammar:
    """A one-rule grammar (start rule ``root``) for :func:`parse_regex`."""
    return Grammar({"root": parse_regex(pattern, search=search)}, start="root")


def any_text() -> Expr:
    """Any sequence of Unicode characters (surrogates excluded), newlines included."""
    return Repeat(charsets.utf8(tuple(charsets.ANY)), 0, None)


def _finish(split: _Split, search: bool) -> Expr:
    """One expression from the anchor split: search mode pads the unanchored sides."""
    if not search:
        return alt(*split.values())
    anything = any_text()
    padded = []
    for (start, end), expr in split.items():
        if not start:
            expr = _absorb_edge_repeats(expr, at_start=True)
        if not end:
            expr = _absorb_edge_repeats(expr, at_start=False)
        padded.append(seq(EMPTY if start else anything, expr, EMPTY if end else anything))
    return alt(*padded)


def _absorb_edge_repeats(expr: Expr, *, at_start: bool) -> Expr:
    """``expr`` with the repetitions at its padded edge cut to their minimum count.

    Any text beside a repetition absorbs the iterations past the minimum: ``.*x{m,n}r`` and
    ``.*x{m}r`` match the same texts, and ``x{m,n}`` costs as many NFA positions as its
    bound. So the pattern ``[a-z]{1,255}`` means "contains a letter" and costs one position,
    not 255 (the subset construction of the padded form tracked up to 255 of them at once).
    Likewise an edge item that may be empty is absorbed whole (``.*(a|b*)r`` is ``.*r``),
    and the next item becomes the edge; an alternation at the edge is cut branch by branch.
    The iterations are whole characters, so what the padding takes is still text.
    """
    if isinstance(expr, Alt):
        return alt(*(_absorb_edge_repeats(branch, at_start=at_start) for branch in expr.items))
    items: list[Expr] = list(expr.items) if isinstance(expr, Seq) else [expr]
    edge = 0 if at_start else -1
    while items:
        item = items[edge]
        if isinstance(item, Alt):
            item = _absorb_edge_repeats(item, at_start=at_start)
        elif isinstance(item, Repeat) and item.min >= 1 and item.max != item.min:
            item = item.item if item.min == 1 else Repeat(item.item, item.min, item.min)
        if not _nullable(item):
            items[edge] = item
            break
        items.pop(edge)
    return seq(*items)


def _lower(node: Node) -> _Split:
    """Lower ``node``, split by the anchors its matches pass through.

    Key ``(s, e)``: the match passed a ``^`` (``s``) / a ``$`` (``e``). A ``^`` holds only
    if everything before it matched the empty string, a ``$`` only if everything after
    it does; :func:`_concat` and :func:`_repeat` enforce exactly that.
    """
    if isinstance(node, Chars):
        return {(False, False): charsets.utf8(node.ranges)}
    if isinstance(node, Anchor):
        return {(node.start, not node.start): EMPTY}
    if isinstance(node, Union):
        out: _Split = {}
        for branch in node.items:
            _merge(out, _lower(branch))
        return out
    if isinstance(node, Concat):
        result: _Split = {(False, False): EMPTY}
        for item in node.items:
            result = _concat(result, _lower(item))
        return result
    if isinstance(node, Quant):
        return _repeat(_lower(node.item), node)
    if isinstance(node, Look):
        what = "negative lookahead '(?!...)'" if node.negative else "lookahead '(?=...)'"
        raise GrammarSyntaxError(
            f"{what} is not supported in this position",
            line=1, column=node.pos + 1, source="regex",
        )  # fmt: skip
    raise TypeError(f"unknown regex node {node!r}")


def _concat(left: _Split, right: _Split) -> _Split:
    out: _Split = {}
    for (s1, e1), a in left.items():
        for (s2, e2), b in right.items():
            # A '^' on the right needs the left part empty; a '$' on the left, the right part.
            if (s2 and not _nullable(a)) or (e1 and not _nullable(b)):
                continue
            _merge(out, {(s1 or s2, e1 or e2): seq(EMPTY if s2 else a, EMPTY if e1 else b)})
    return out


def _repeat(parts: _Split, node: Quant) -> _Split:
    """``parts`` repeated ``node.min`` to ``node.max`` times.

    Plain iterations repeat freely. One anchored iteration may appear: with a ``^``,
    every iteration before it must be empty (so it is in effect the first), with a ``$``
    every iteration after it (so it is in effect the last). Iterations with ``^`` and
    iterations with ``$`` in one repeated group are rejected: that needs more care than
    any real pattern deserves.
    """
    lo, hi = node.min, node.max
    plain = parts.get((False, False))
    out: _Split = {}
    if plain is not None:
        out[(False, False)] = plain if lo == hi == 1 else Repeat(plain, lo, hi)
    elif lo == 0:  # no plain iteration at all: only the empty repetition
        out[(False, False)] = EMPTY
    anchored = {key: expr for key, expr in parts.items() if key != (False, False)}
    if not anchored or hi == 0:
        return out
    kinds = {key for key in anchored if key != (True, True)}
    if len(kinds) > 1:
        raise GrammarSyntaxError(
            "a repeated group with both '^' and '$' inside is not supported",
            line=1, column=node.pos + 1, source="regex",
        )  # fmt: skip
    # Can the other iterations be empty (without adding the other anchor)? Then the count
    # bounds are met with empty iterations wherever needed.
    empty_ok = any(_nullable(expr) for key, expr in parts.items() if key != (True, True))
    others_hi = None if hi is None else hi - 1  # iterations besides the anchored one
    others_lo = 0 if empty_ok else max(lo - 1, 0)
    for (start, end), expr in anchored.items():
        if start and end:  # the only non-empty iteration
            if lo <= 1 or any(_nullable(e) for e in parts.values()):
                _merge(out, {(True, True): expr})
            continue
        if plain is None:
            if others_lo == 0:
                _merge(out, {(start, end): expr})
            continue
        rest = Repeat(plain, others_lo, others_hi)
        _merge(out, {(start, end): seq(expr, rest) if start else seq(rest, expr)})
    return out


def _nullable(expr: Expr) -> bool:
    """The (regular, Ref-free) expression matches the empty string."""
    if isinstance(expr, Seq):
        return all(_nullable(item) for item in expr.items)
    if isinstance(expr, Alt):
        return any(_nullable(item) for item in expr.items)
    if isinstance(expr, Repeat):
        return expr.min == 0 or _nullable(expr.item)
    return False


def _merge(into: _Split, part: _Split) -> None:
    for key, expr in part.items():
        into[key] = alt(into[key], expr) if key in into else expr
