"""Any-JSON front-end and the JSON lexical building blocks (RFC 8259), as IR.

:func:`json_string`, :func:`json_number` and :func:`json_integer` are regular
expressions (no :class:`~tokensieve.ir.Ref` inside), so the compiler can turn each into a
single terminal; the JSON Schema front-end reuses them. :func:`json_grammar` is the
recursive grammar of any JSON value. The building blocks are computed once and shared
(IR nodes are immutable).
"""

from __future__ import annotations

from functools import cache

from ..ir import Bytes, Expr, Grammar, Ref, Repeat, alt, codepoints, literal, optional, seq
from .whitespace import WhitespacePolicy, whitespace_expr

__all__ = [
    "json_grammar",
    "json_integer",
    "json_number",
    "json_string",
    "json_string_char",
]

_DIGIT = Bytes(((0x30, 0x39),))
_NONZERO = Bytes(((0x31, 0x39),))
_HEX = Bytes(((0x30, 0x39), (0x41, 0x46), (0x61, 0x66)))
_HEX_NONZERO = Bytes(((0x31, 0x39), (0x41, 0x46), (0x61, 0x66)))

PLAIN_ASCII: tuple[tuple[int, int], ...] = ((0x20, 0x25), (0x27, 0x3B), (0x3D, 0x3D), (0x3F, 0x7E))
"""Printable ASCII but ``&``, ``<`` and ``>``: the code points never spelled ``\\uXXXX``, in
any JSON string (see ``tokensieve.frontends.json_schema.strings`` for why)."""


@cache
def json_string_char() -> Expr:
    """One character of a JSON string body: an unescaped character or one escape.

    Unescaped: U+0020..U+10FFFF except ``"`` and ``\\`` (UTF-8 exact, no surrogates).
    Escapes: ``\\" \\\\ \\/ \\b \\f \\n \\r \\t`` and ``\\uXXXX`` (four hex digits, in
    either case) for any 16-bit value but printable ASCII (U+0020..U+007E) other than
    ``&<>``: printable ASCII has one spelling, itself, as every serializer writes it (Go's
    HTML-safe ``\\u0026``, ``\\u003c``, ``\\u003e`` apart: see
    ``tokensieve.frontends.json_schema.strings``).
    """
    unescaped = codepoints([(0x20, 0x21), (0x23, 0x5B), (0x5D, 0x10FFFF)])
    simple = Bytes.of([(ord(c), ord(c)) for c in '"\\/bfnrt'])
    return alt(unescaped, seq(literal("\\"), alt(simple, seq(literal("u"), _u_escape_digits()))))


def _u_escape_digits() -> Expr:
    """The four hex digits of a ``\\u`` escape of any 16-bit value outside :data:`PLAIN_ASCII`
    (written out by hand: this layer has no range-to-digits builder; a test checks the two
    agree on all 65,536 values)."""
    zero = literal("0")
    return alt(
        seq(_HEX_NONZERO, _HEX, _HEX, _HEX),  # U+1000..U+FFFF
        seq(zero, _HEX_NONZERO, _HEX, _HEX),  # U+0100..U+0FFF
        seq(zero, zero, Bytes(((0x30, 0x31),)), _HEX),  # U+0000..U+001F
        seq(zero, zero, literal("26")),  # U+0026 &
        seq(zero, zero, literal("3"), Bytes.of([(c, c) for c in b"CEce"])),  # U+003C <, U+003E >
        seq(zero, zero, literal("7"), Bytes(((0x46, 0x46), (0x66, 0x66)))),  # U+007F
        seq(zero, zero, Bytes(((0x38, 0x39), (0x41, 0x46), (0x61, 0x66))), _HEX),  # U+0080..U+00FF
    )


@cache
def json_string() -> Expr:
    """A JSON string, quotes included."""
    return seq(literal('"'), Repeat(json_string_char(), 0, None), literal('"'))


@cache
def json_integer() -> Expr:
    """A JSON number without fraction or exponent: ``-?(0|[1-9][0-9]*)`` (``-0`` included)."""
    return seq(optional(literal("-")), alt(literal("0"), seq(_NONZERO, Repeat(_DIGIT, 0, None))))


@cache
def json_number() -> Expr:
    """Any JSON number: ``-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?``."""
    fraction = seq(literal("."), Repeat(_DIGIT, 1, None))
    sign = Bytes.of([(0x2B, 0x2B), (0x2D, 0x2D)])
    exponent = seq(Bytes.of([(0x45, 0x45), (0x65, 0x65)]), optional(sign), Repeat(_DIGIT, 1, None))
    return seq(json_integer(), optional(fraction), optional(exponent))


def json_grammar(whitespace: WhitespacePolicy | str | int | None = None) -> Grammar:
    """The grammar of any JSON value, start rule ``root``.

    Whitespace (as allowed by ``whitespace``, see :class:`WhitespacePolicy`; default
    policy when None) may appear between any two tokens and before and after the top
    value, so both ``json.dumps(x)`` and ``json.dumps(x, indent=2)`` are accepted by the
    default policy. Objects and arrays are recursive through ``Ref("value")``.
    """
    ws = whitespace_expr(WhitespacePolicy.coerce(whitespace))
    g = Grammar(start="root")
    value = Ref("value")
    string = g.add("string", json_string())
    member = g.add("member", seq(string, ws, literal(":"), ws, value))
    g.add("object", _container("{", member, "}", ws))
    g.add("array", _container("[", value, "]", ws))
    number = g.add("number", json_number())
    g.add(
        "value",
        alt(Ref("object"), Ref("array"), string, number, literal("true"), literal("false"), literal("null")),
    )
    g.add("root", seq(ws, value, ws))
    return g


def _container(open_: str, item: Expr, close: str, ws: Expr) -> Expr:
    """``open ws (item (ws , ws item)* ws)? close``: whitespace between every two tokens, never doubled."""
    items = seq(item, Repeat(seq(ws, literal(","), ws, item), 0, None), ws)
    return seq(literal(open_), ws, optional(items), literal(close))
