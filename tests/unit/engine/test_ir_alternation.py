"""``ir.alt`` of two items takes a shortcut past its sets: the result must be what the general
loop makes of the same items (which an empty alternation among them sends through)."""

from __future__ import annotations

import itertools

from tokensieve.ir import EMPTY, NOTHING, SEAM, Alt, Bytes, Repeat, Seq, alt, byte_range, literal


def test_two_items_make_what_the_general_loop_makes() -> None:
    a, b = byte_range(97, 97), byte_range(98, 98)
    pool = [
        a,
        Bytes(((97, 97),)),  # equal to a, another object
        b,
        literal("ab"),
        Seq((a, b)),  # equal to literal("ab")
        Repeat(a, 0, None),
        Repeat(Bytes(((97, 97),)), 0, None),
        EMPTY,
        Seq(()),
        SEAM,
    ]
    for x, y in itertools.product(pool, repeat=2):
        short, general = alt(x, y), alt(x, y, NOTHING)
        assert short == general and type(short) is type(general)
        if isinstance(short, Alt):
            assert all(s is g for s, g in zip(short.items, general.items, strict=True))
        else:
            assert short is general is x  # duplicates keep the first


def test_one_item_is_itself_unless_an_alternation() -> None:
    for x in (byte_range(97, 97), literal("ab"), Repeat(byte_range(97, 97), 0, None), EMPTY, SEAM):
        assert alt(x) is x
    a, b = byte_range(97, 97), byte_range(98, 98)
    # An alternation alone is still taken apart and its duplicates dropped, as with more items.
    assert alt(Alt((a, b, Bytes(((97, 97),))))) == Alt((a, b))
    assert alt(NOTHING) == NOTHING
