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

Anchors (``^``/``\\A`` and ``$``/``\\Z``/``\\z``) are allowed only where they are
trivially at an end: the first (last) item of the pattern, recursively through groups and
alternatives, so ``^a|b$`` and ``^(a|b)$`` are fine, while ``a^b`` or ``(^a)*`` are errors.

In full-match mode (the default) anchors change nothing. With ``search=True`` (JSON
Schema ``pattern``), a side of an alternative that is not anchored may be surrounded by
any text: ``abc`` means "contains abc", ``^abc`` "starts with abc".

Repetition is built as :class:`~tokensieve.ir.Repeat` nodes, never unrolled here, so
``(a{1000}){1000}`` is cheap to parse; the compiler enforces size limits.
"""

from __future__ import annotations

from ..errors import GrammarSyntaxError
from ..ir import EMPTY, Expr, Grammar, Repeat, alt, codepoints, seq
from . import charsets
from .regex_parser import Anchor, Chars, Concat, Node, Quant, Union, parse_regex_ast

__all__ = ["any_text", "parse_regex", "regex_grammar"]

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
    split = _lower(parse_regex_ast(pattern), at_start=True, at_end=True)
    if not search:
        return alt(*split.values())
    anything = any_text()
    return alt(
        *(
            seq(EMPTY if start else anything, expr, EMPTY if end else anything)
            for (start, end), expr in split.items()
        )
    )


def regex_grammar(pattern: str, *, search: bool = False) -> Grammar:
    """A one-rule grammar (start rule ``root``) for :func:`parse_regex`."""
    return Grammar({"root": parse_regex(pattern, search=search)}, start="root")


def any_text() -> Expr:
    """Any sequence of Unicode characters (surrogates excluded), newlines included."""
    return Repeat(codepoints(charsets.ANY), 0, None)


def _lower(node: Node, *, at_start: bool, at_end: bool) -> _Split:
    """Lower ``node``; ``at_start``/``at_end`` say whether an anchor may appear at its edge."""
    if isinstance(node, Chars):
        return {(False, False): codepoints(node.ranges)}
    if isinstance(node, Anchor):
        if node.start and not at_start:
            raise _anchor_error("'^' (or \\A) is only supported at the start of the pattern", node)
        if not node.start and not at_end:
            raise _anchor_error("'$' (or \\Z) is only supported at the end of the pattern", node)
        return {(node.start, not node.start): EMPTY}
    if isinstance(node, Union):
        out: _Split = {}
        for branch in node.items:
            _merge(out, _lower(branch, at_start=at_start, at_end=at_end))
        return out
    if isinstance(node, Concat):
        result: _Split = {(False, False): EMPTY}
        last = len(node.items) - 1
        for k, item in enumerate(node.items):
            part = _lower(item, at_start=at_start and k == 0, at_end=at_end and k == last)
            combined: _Split = {}
            for (s1, e1), left in result.items():
                for (s2, e2), right in part.items():
                    _merge(combined, {(s1 or s2, e1 or e2): seq(left, right)})
            result = combined
        return result
    if isinstance(node, Quant):
        (inner,) = _lower(node.item, at_start=False, at_end=False).values()
        if node.min == 1 and node.max == 1:
            return {(False, False): inner}
        return {(False, False): Repeat(inner, node.min, node.max)}
    raise TypeError(f"unknown regex node {node!r}")


def _merge(into: _Split, part: _Split) -> None:
    for key, expr in part.items():
        into[key] = alt(into[key], expr) if key in into else expr


def _anchor_error(message: str, node: Anchor) -> GrammarSyntaxError:
    return GrammarSyntaxError(message, line=1, column=node.pos + 1, source="regex")
