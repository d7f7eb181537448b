"""Sets of Unicode code points for the regex and EBNF front-ends.

A set is a sorted list of disjoint inclusive ranges ``(lo, hi)``. The tables behind
Unicode properties and case folding are built lazily from :mod:`unicodedata` the first
time a pattern needs them (a fraction of a second), then cached.
"""

from __future__ import annotations

import bisect
import unicodedata
from functools import lru_cache
from typing import Final

from ..ir import Expr, codepoints

__all__ = [
    "ANY",
    "utf8",
    "DIGIT",
    "SPACE",
    "WORD",
    "CharSet",
    "case_closure",
    "complement",
    "normalize",
    "unicode_property",
]

CharSet = list[tuple[int, int]]

MAX_CODEPOINT: Final = 0x10FFFF

ANY: Final[CharSet] = [(0, MAX_CODEPOINT)]
# ASCII semantics for \d and \w (as ECMAScript without the u+i flags, and Python's re.ASCII).
DIGIT: Final[CharSet] = [(0x30, 0x39)]
WORD: Final[CharSet] = [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]
# ECMAScript's \s: WhiteSpace and LineTerminator code points.
SPACE: Final[CharSet] = [
    (0x09, 0x0D),
    (0x20, 0x20),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
]


@lru_cache(maxsize=4096)
def utf8(ranges: tuple[tuple[int, int], ...]) -> Expr:
    """:func:`tokensieve.ir.codepoints` of ``ranges``, memoized.

    Big sets (``\\S``, ``[^"]``, ``.``) take milliseconds to split into UTF-8 byte
    ranges and recur in nearly every pattern; IR nodes are immutable, so sharing is safe.
    """
    return codepoints(ranges)


def normalize(ranges: list[tuple[int, int]]) -> CharSet:
    """Sort and merge overlapping or adjacent ranges."""
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return [(lo, hi) for lo, hi in out]


def complement(ranges: CharSet) -> CharSet:
    """All code points not in ``ranges`` (which must be normalized)."""
    out: CharSet = []
    nxt = 0
    for lo, hi in ranges:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CODEPOINT:
        out.append((nxt, MAX_CODEPOINT))
    return out


def _contains(ranges: CharSet, cp: int) -> bool:
    i = bisect.bisect_right(ranges, (cp, MAX_CODEPOINT + 1)) - 1
    return i >= 0 and ranges[i][0] <= cp <= ranges[i][1]


# Every cased code point lies below U+20000 (the last, Adlam, ends near U+1E943).
_CASED_LIMIT: Final = 0x20000


@lru_cache(maxsize=1)
def _case_classes() -> dict[int, tuple[int, ...]]:
    """Map each cased code point to its case-equivalence class.

    Two code points are equivalent when one is the single-character ``lower()`` or
    ``upper()`` of the other (transitively), so K, k and KELVIN SIGN form one class, as
    in Python's ``re.IGNORECASE``.
    """
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    for cp in range(_CASED_LIMIT):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        for other in (ch.lower(), ch.upper()):
            if len(other) == 1 and other != ch:
                a, b = find(cp), find(ord(other))
                if a != b:
                    parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for cp in parent:
        groups.setdefault(find(cp), []).append(cp)
    for root, members in groups.items():
        if root not in members:
            members.append(root)
    return {cp: tuple(sorted(members)) for members in groups.values() for cp in members}


def case_closure(ranges: CharSet) -> CharSet:
    """``ranges`` plus every case variant of its members (for case-insensitive matching)."""
    classes = _case_classes()
    extra: list[tuple[int, int]] = []
    if sum(hi - lo + 1 for lo, hi in ranges) <= 256:  # small set (a literal): look its members up
        for lo, hi in ranges:
            for cp in range(lo, hi + 1):
                extra.extend((m, m) for m in classes.get(cp, ()))
    else:  # large set: test every cased code point
        for cp, members in classes.items():
            if _contains(ranges, cp):
                extra.extend((m, m) for m in members)
    return normalize(ranges + extra) if extra else ranges


@lru_cache(maxsize=1)
def _categories() -> dict[str, CharSet]:
    """Code point ranges of each two-letter Unicode general category (e.g. ``Lu``)."""
    table: dict[str, CharSet] = {}
    start, current = 0, unicodedata.category(chr(0))
    for cp in range(1, MAX_CODEPOINT + 2):
        cat = unicodedata.category(chr(cp)) if cp <= MAX_CODEPOINT else ""
        if cat != current:
            table.setdefault(current, []).append((start, cp - 1))
            start, current = cp, cat
    return table


_LONG_NAMES: Final = {
    "Letter": "L", "Cased_Letter": "LC", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll",
    "Titlecase_Letter": "Lt", "Modifier_Letter": "Lm", "Other_Letter": "Lo",
    "Mark": "M", "Nonspacing_Mark": "Mn", "Spacing_Mark": "Mc", "Enclosing_Mark": "Me",
    "Number": "N", "Decimal_Number": "Nd", "Letter_Number": "Nl", "Other_Number": "No",
    "Punctuation": "P", "Connector_Punctuation": "Pc", "Dash_Punctuation": "Pd",
    "Open_Punctuation": "Ps", "Close_Punctuation": "Pe", "Initial_Punctuation": "Pi",
    "Final_Punctuation": "Pf", "Other_Punctuation": "Po",
    "Symbol": "S", "Math_Symbol": "Sm", "Currency_Symbol": "Sc", "Modifier_Symbol": "Sk",
    "Other_Symbol": "So",
    "Separator": "Z", "Space_Separator": "Zs", "Line_Separator": "Zl", "Paragraph_Separator": "Zp",
    "Other": "C", "Control": "Cc", "Format": "Cf", "Surrogate": "Cs", "Private_Use": "Co",
    "Unassigned": "Cn",
}  # fmt: skip


def unicode_property(name: str) -> CharSet | None:
    """The code points of a Unicode property name, or None if it is not supported.

    Supported: general categories by short or long name (``L``, ``Lu``, ``Letter``,
    ``Uppercase_Letter``, also as ``gc=...`` / ``General_Category=...``), ``LC``,
    ``Any``, ``ASCII`` and ``Assigned``. Scripts and binary properties are not (Python's
    :mod:`unicodedata` has no script data), so the caller reports them as errors.
    """
    if "=" in name:
        key, _, value = name.partition("=")
        if key not in ("gc", "General_Category"):
            return None
        name = value
    if name == "Any":
        return list(ANY)
    if name == "ASCII":
        return [(0, 0x7F)]
    name = _LONG_NAMES.get(name, name)
    table = _categories()
    if name == "Assigned":
        return complement(normalize(table.get("Cn", [])))
    if name == "LC":
        members = ["Lu", "Ll", "Lt"]
    elif len(name) == 1:
        members = [cat for cat in table if cat.startswith(name)]
    else:
        members = [name] if name in table else []
    if not members:
        return None
    return normalize([r for cat in members for r in table.get(cat, [])])
