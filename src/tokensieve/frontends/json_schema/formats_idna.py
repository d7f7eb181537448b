"""``idn-hostname``: internationalized host names (IDNA2008, RFC 5890-5893), a sound subset.

The semantic reference is ``jsonschema``'s format checker, which accepts a name when
``idna.encode(name)`` succeeds. Several of its checks are not regular (is ``xn--...``
valid Punycode of a valid U-label?), and the others (contextual rules, the Bidi rule,
NFC, the length of the Punycode form) need automata over the whole Unicode alphabet far
too large to serve as a string format. So this grammar accepts a *subset* of the names
``idna.encode`` accepts, never a name it rejects (but see the total length below):

- labels are separated by any of the four IDNA dots (``.``, ``。``, ``．``, ``｡``), none
  empty, no trailing dot (RFC 1034; ``idna`` accepts one, the JSON Schema Test Suite not);
- an ASCII label is an LDH label as in ``hostname`` (letters in any case, 1..63
  characters, no ``-`` first, last, or in both positions 3 and 4, hence no A-labels);
- a U-label (a label with non-ASCII characters) has at most :func:`max_u_label` code
  points: lowercase ASCII letters, digits, hyphens (same hyphen rules) and the code
  points of :func:`u_label_code_points`: the *simple* code points (valid in any
  context, see :func:`is_simple`) of a few large scripts (:data:`U_LABEL_BLOCKS`). Any
  such label is in NFC, needs no contextual or Bidi rule, and has an A-label (``xn--`` +
  Punycode) of at most 63 octets;
- not enforced: the 253-octet total of the whole name (a counter across labels would
  multiply the automaton by 253), as in ``hostname``.

The tables come from the ``idna`` package that ``jsonschema`` itself uses, and from
``unicodedata``, both as installed. Without ``idna`` the format is unsupported.
"""

from __future__ import annotations

import importlib.util
import unicodedata
from functools import cache

from ...ir import Expr, Repeat, alt, codepoints, literal, seq
from .automata import LabeledGraph

__all__ = [
    "IDNA_AVAILABLE",
    "U_LABEL_BLOCKS",
    "idn_hostname_language",
    "is_simple",
    "max_u_label",
    "punycode_digits_bound",
    "u_label_code_points",
]

IDNA_AVAILABLE = importlib.util.find_spec("idna") is not None
"""Whether the IDNA2008 tables (the ``idna`` package) can be loaded."""

DOTS = (0x2E, 0x3002, 0xFF0E, 0xFF61)
"""The label separators of IDNA (RFC 3490 section 3.1), as ``idna.encode`` splits on them."""

_BASE, _TMIN, _TMAX = 36, 1, 26  # Punycode parameters (RFC 3492 section 5)


def punycode_digits_bound(max_code_point: int, max_label: int) -> int:
    """The most Punycode digits one non-ASCII code point can cost in a label of at most
    ``max_label`` code points, none above ``max_code_point``.

    Each inserted code point is one variable-length integer, its *delta*: at most
    ``(max_code_point - 128) * (max_label + 1) + max_label`` (RFC 3492 section 6.3). The
    number of digits of a delta grows with it for any bias, so the bound is the largest
    digit count of that delta over every bias the adaptation can produce.
    """
    delta = (max_code_point - 128) * (max_label + 1) + max_label

    def digits(q: int, bias: int) -> int:
        n, k = 0, _BASE
        while True:
            t = _TMIN if k <= bias else _TMAX if k >= bias + _TMAX else k - bias
            n += 1
            if q < t:
                return n
            q, k = (q - t) // (_BASE - t), k + _BASE

    # adapt() yields bias = k + 36 * d // (d + 38) with k a multiple of 36 that grows
    # with log35(delta): far below 36 * 10 for any delta here.
    return max(digits(delta, bias) for bias in range(_BASE * 10))


U_LABEL_BLOCKS = (
    (0x00DF, 0x00FF),  # Latin-1 lowercase letters
    (0x03AC, 0x03CE),  # Greek lowercase letters
    (0x0430, 0x045F),  # Cyrillic lowercase letters
    (0x3041, 0x3096),  # Hiragana
    (0x30A1, 0x30FA),  # Katakana
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xAC00, 0xD7A3),  # Hangul syllables
)
"""Where U-label characters are taken from (then filtered by :func:`is_simple`): few,
large, contiguous blocks, so that the automaton stays small."""


@cache
def _composition_seconds() -> frozenset[int]:
    """Code points that can be the second part of a canonical composition: only a string
    containing one of them can differ from its NFC form (given each character is NFC)."""
    seconds = set()
    for cp in range(0x110000):
        decomposition = unicodedata.decomposition(chr(cp))
        if not decomposition or decomposition.startswith("<"):
            continue
        parts = [int(p, 16) for p in decomposition.split()]
        if len(parts) == 2 and unicodedata.normalize("NFC", chr(parts[0]) + chr(parts[1])) == chr(cp):
            seconds.add(parts[1])
    return frozenset(seconds)


def is_simple(cp: int) -> bool:
    """Whether the non-ASCII code point ``cp`` passes every check of ``idna.encode`` in
    any U-label, whatever surrounds it: PVALID (no contextual rule), a known
    bidirectional class other than R, AL and AN (the Bidi rule then never applies), not
    a mark, canonical combining class 0, unchanged by NFC, and neither a possible second
    part of a canonical composition nor decomposing into one first."""
    from idna import idnadata
    from idna.intranges import intranges_contain

    ch = chr(cp)
    seconds = _composition_seconds()
    return (
        cp >= 0x80
        and intranges_contain(cp, idnadata.codepoint_classes["PVALID"])
        and unicodedata.bidirectional(ch) not in ("", "R", "AL", "AN")
        and not unicodedata.category(ch).startswith("M")
        and unicodedata.combining(ch) == 0
        and unicodedata.normalize("NFC", ch) == ch
        and cp not in seconds
        and ord(unicodedata.normalize("NFD", ch)[0]) not in seconds
    )


@cache
def u_label_code_points() -> tuple[tuple[int, int], ...]:
    """The simple code points of :data:`U_LABEL_BLOCKS`, as inclusive ranges."""
    out: list[tuple[int, int]] = []
    for lo, hi in U_LABEL_BLOCKS:
        for cp in range(lo, hi + 1):
            if not is_simple(cp):
                continue
            if out and out[-1][1] == cp - 1:
                out[-1] = (out[-1][0], cp)
            else:
                out.append((cp, cp))
    return tuple(out)


def max_u_label(max_code_point: int) -> int:
    """The most code points a U-label may have so that its A-label is at most 63 octets
    whatever they are: ``xn--``, the ASCII code points, ``-``, then one Punycode integer
    per other code point (:func:`punycode_digits_bound` digits at most)."""
    n = 0
    while 4 + 1 + punycode_digits_bound(max_code_point, n + 1) * (n + 1) <= 63:
        n += 1
    return n


def _u_label(simple: tuple[tuple[int, int], ...], max_length: int) -> Expr:
    """Labels of 1..max_length code points over [a-z0-9-] and ``simple``, with at least one
    simple (non-ASCII) code point, no ``-`` first or last, not ``-`` at both 3 and 4.

    Built as an automaton over code points: state (length, non-ASCII seen, last was
    ``-``, third was ``-``), one edge per character kind.
    """
    kinds: dict[str, Expr] = {
        "ascii": codepoints([(0x30, 0x39), (0x61, 0x7A)]),
        "simple": codepoints(simple),
        "hyphen": literal("-"),
    }
    State = tuple[int, bool, bool, bool]
    index: dict[State, int] = {(0, False, False, False): 0}
    order: list[State] = [(0, False, False, False)]
    edges: list[dict[int, Expr]] = []
    i = 0
    while i < len(order):
        length, wide, hyphen, third = order[i]
        i += 1
        row: dict[int, Expr] = {}
        for kind, label in kinds.items():
            if length == max_length or (kind == "hyphen" and (length == 0 or (length == 3 and third))):
                continue
            is_hyphen = kind == "hyphen"
            nxt = (length + 1, wide or kind == "simple", is_hyphen, is_hyphen and length == 2)
            if nxt not in index:
                index[nxt] = len(order)
                order.append(nxt)
            target = index[nxt]
            row[target] = alt(row[target], label) if target in row else label
        edges.append(row)
    accept = [wide and not hyphen for _, wide, hyphen, _ in order]
    return LabeledGraph(edges, accept).to_automaton()


@cache
def idn_hostname_language(ascii_label: str) -> Expr:
    """The ``idn-hostname`` language; ``ascii_label`` is the regular expression of one
    ASCII label (shared with ``hostname``)."""
    from ..regex import parse_regex

    chars = u_label_code_points()
    label = alt(parse_regex(ascii_label), _u_label(chars, max_u_label(chars[-1][1])))
    dot = codepoints([(d, d) for d in DOTS])
    return seq(label, Repeat(seq(dot, label), 0, None))
