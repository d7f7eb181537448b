"""IR nodes compare and hash by value (``tokensieve.ir``), and ``alt`` drops duplicates.

The node classes define ``__eq__`` (and ``Bytes`` its ``__hash__``) by hand, so that the
compiled package compares nodes in compiled code; they must mean what the dataclass
methods meant: equal classes and equal fields.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tokensieve.ir import EMPTY, Alt, Bytes, Expr, Repeat, Seq, alt, literal, seq

_leaves = st.sampled_from([Bytes(((97, 97),)), Bytes(((97, 98),)), Bytes(((48, 57), (97, 102))), EMPTY])


def _rebuild(e: Expr) -> Expr:
    """An equal copy of ``e`` that shares no composite node with it."""
    if isinstance(e, Seq):
        return Seq(tuple(_rebuild(i) for i in e.items))
    if isinstance(e, Alt):
        return Alt(tuple(_rebuild(i) for i in e.items))
    if isinstance(e, Repeat):
        return Repeat(_rebuild(e.item), e.min, e.max)
    if isinstance(e, Bytes):
        return Bytes(tuple(e.ranges))
    return e


exprs = st.recursive(
    _leaves,
    lambda kids: st.one_of(
        st.lists(kids, min_size=1, max_size=3).map(lambda xs: Seq(tuple(xs))),
        st.lists(kids, min_size=1, max_size=3).map(lambda xs: Alt(tuple(xs))),
        st.builds(Repeat, kids, st.integers(0, 2), st.sampled_from([None, 2, 3])),
    ),
    max_leaves=8,
)


@given(a=exprs, b=exprs)
def test_equality_and_hash_are_by_value(a: Expr, b: Expr) -> None:
    copy = _rebuild(a)
    assert copy == a and hash(copy) == hash(a)
    assert (a == b) == (repr(a) == repr(b))  # the fields, class by class
    if a == b:
        assert hash(a) == hash(b)


def test_nodes_of_different_classes_are_unequal() -> None:
    a = Bytes(((97, 97),))
    assert Seq((a,)) != Alt((a,))
    assert Seq((a,)) != a and a != "a" and Repeat(a, 1, 1) != Seq((a,))


def test_alt_drops_equal_items_that_are_distinct_objects() -> None:
    one, other = literal("key"), seq(Bytes(((107, 107),)), Bytes(((101, 101),)), Bytes(((121, 121),)))
    assert one is not other and one == other
    assert alt(one, literal("x"), other) == Alt((one, literal("x")))
