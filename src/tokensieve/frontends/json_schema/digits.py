"""Digit-range decomposition: the numbers of a range as sequences of digit ranges.

``fixed_width(lo, hi, width, base)`` splits the integers ``lo..hi``, written with exactly
``width`` digits (leading zeros included), into sequences of per-digit ranges such that
their union is exactly the range. This is the classic construction behind regexes such
as ``1[3-9]|[2-9]\\d|1\\d\\d`` and is used both for decimal numbers (bounds of any
magnitude) and for the four hex digits of ``\\uXXXX`` escapes.
"""

from __future__ import annotations

__all__ = ["fixed_width"]

DigitSeq = tuple[tuple[int, int], ...]


def fixed_width(lo: int, hi: int, width: int, base: int = 10) -> list[DigitSeq]:
    """Digit-range sequences of length ``width`` covering exactly ``lo..hi``."""
    if lo > hi:
        return []
    if width == 0:
        return [()]
    unit = base ** (width - 1)
    lo_head, lo_rest = divmod(lo, unit)
    hi_head, hi_rest = divmod(hi, unit)
    full_rest = ((0, base - 1),) * (width - 1)
    if lo_head == hi_head:
        return [((lo_head, lo_head), *rest) for rest in fixed_width(lo_rest, hi_rest, width - 1, base)]
    out: list[DigitSeq] = []
    first = lo_head
    if lo_rest != 0:  # a partial first block
        out.extend(((lo_head, lo_head), *rest) for rest in fixed_width(lo_rest, unit - 1, width - 1, base))
        first += 1
    last = hi_head
    tail: list[DigitSeq] = []
    if hi_rest != unit - 1:  # a partial last block
        tail = [((hi_head, hi_head), *rest) for rest in fixed_width(0, hi_rest, width - 1, base)]
        last -= 1
    if first <= last:
        out.append(((first, last), *full_rest))
    return out + tail
