"""IR nodes compare and hash by value (``tokensieve.ir``), and ``alt`` drops duplicates.

The frequent node classes define ``__init__``, ``__eq__`` and ``__hash__`` by hand, so that
the compiled package builds and compares nodes in compiled code; they must mean what the
dataclass methods meant: equal classes and equal fields, and the frozen fields.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokensieve.frontends.whitespace import WhitespacePolicy
from tokensieve.ir import (
    EMPTY,
    Alt,
    Automaton,
    Bytes,
    CountedAutomaton,
    Difference,
    Expr,
    Ref,
    Repeat,
    Seam,
    Seq,
    Special,
    Unordered,
    alt,
    byte_range,
    literal,
    seq,
)

_leaves = st.sampled_from(
    [Bytes(((97, 97),)), Bytes(((97, 98),)), Bytes(((48, 57), (97, 102))), EMPTY, Seam()]
)


def _rebuild(e: Expr) -> Expr:
    """An equal copy of ``e`` that shares no composite node with it."""
    if isinstance(e, Seq):
        return Seq(tuple(_rebuild(i) for i in e.items))
    if isinstance(e, Alt):
        return Alt(tuple(_rebuild(i) for i in e.items))
    if isinstance(e, Repeat):
        return Repeat(_rebuild(e.item), e.min, e.max)
    if isinstance(e, Difference):
        return Difference(_rebuild(e.left), _rebuild(e.right))
    if isinstance(e, Bytes):
        return Bytes(tuple(e.ranges))
    if isinstance(e, Seam):
        return Seam()
    return e


exprs = st.recursive(
    _leaves,
    lambda kids: st.one_of(
        st.lists(kids, min_size=1, max_size=3).map(lambda xs: Seq(tuple(xs))),
        st.lists(kids, min_size=1, max_size=3).map(lambda xs: Alt(tuple(xs))),
        st.builds(Repeat, kids, st.integers(0, 2), st.sampled_from([None, 2, 3])),
        st.builds(Difference, kids, kids),
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


def test_automata_compare_and_hash_by_value() -> None:
    a, b = Bytes(((97, 97),)), Bytes(((98, 98),))
    one = Automaton.of([(False, ((a, 1),)), (True, ())])
    assert one == Automaton.of([(False, ((Bytes(((97, 97),)), 1),)), (True, ())])
    assert hash(one) == hash(Automaton.of([(False, ((Bytes(((97, 97),)), 1),)), (True, ())]))
    assert one != Automaton.of([(False, ((b, 1),)), (True, ())])
    assert one != Automaton.of([(True, ((a, 1),)), (True, ())])
    units = ((True, ((a, 0),)),)
    counted = CountedAutomaton(units, 1, 4)
    assert counted == CountedAutomaton(((True, ((Bytes(((97, 97),)), 0),)),), 1, 4, expanded=lambda g: a)
    assert hash(counted) == hash(CountedAutomaton(((True, ((Bytes(((97, 97),)), 0),)),), 1, 4))
    assert counted != CountedAutomaton(units, 1, 5) and counted != CountedAutomaton(units, 0, 4)
    assert counted != CountedAutomaton(((True, ((b, 0),)),), 1, 4)


def test_nodes_of_different_classes_are_unequal() -> None:
    a = Bytes(((97, 97),))
    assert Seq((a,)) != Alt((a,))
    assert Seq((a,)) != a and a != "a" and Repeat(a, 1, 1) != Seq((a,))
    assert Seam() != EMPTY and Difference(a, a) != Seq((a, a)) and Seam() == Seam()


def test_alt_drops_equal_items_that_are_distinct_objects() -> None:
    one, other = literal("key"), seq(Bytes(((107, 107),)), Bytes(((101, 101),)), Bytes(((121, 121),)))
    assert one is not other and one == other
    assert alt(one, literal("x"), other) == Alt((one, literal("x")))


def _fields(node: object) -> tuple[object, ...]:
    return tuple(getattr(node, f.name) for f in dataclasses.fields(node))  # type: ignore[arg-type]


@given(
    st.sampled_from(["a", "b"]),
    st.sampled_from(["a", "b"]),
    st.integers(0, 2),
    st.integers(0, 2),
    st.sampled_from([None, 3]),
    st.booleans(),
)
def test_hand_written_methods_mean_the_dataclass_ones(
    n1: str, n2: str, t1: int, t2: int, most: int | None, repeatable: bool
) -> None:
    a, b = Bytes(((97, 97),)), Bytes(((98, 98),))
    pairs = [
        (Ref(n1), Ref(n2)),
        (Special(t1), Special(t2)),
        (Difference(Ref(n1), a), Difference(Ref(n2), a)),
        (
            Unordered((a, Ref(n1)), b, frozenset({0}), a if repeatable else None, t1, most),
            Unordered((a, Ref(n2)), b, frozenset({0}), None, t2, most),
        ),
        (WhitespacePolicy(t1, repeatable, 8), WhitespacePolicy(t2, True, 8)),
    ]
    for x, y in pairs:
        assert (x == y) == (_fields(x) == _fields(y))
        assert (x != y) == (_fields(x) != _fields(y))
        if x == y:
            assert hash(x) == hash(y)
        assert x == type(x)(*_fields(x))  # the __init__ takes the fields, in order
        assert x != "a" and x != Seq(())


def test_nodes_stay_frozen() -> None:
    for node in (Bytes(((97, 97),)), Seq(()), Alt(()), Repeat(EMPTY, 0, 1), Ref("a"), Special(1)):
        with pytest.raises((dataclasses.FrozenInstanceError, AttributeError)):
            node.items = ()  # type: ignore[misc, union-attr]


def test_bad_bounds_are_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="repetition bounds"):
        Repeat(EMPTY, 2, 1)
    with pytest.raises(ValueError, match="count bounds"):
        Unordered((literal("a"),), literal(","), frozenset(), None, 3, 1)
    with pytest.raises(ValueError, match="required indices"):
        Unordered((literal("a"),), literal(","), frozenset({1}))


@given(st.integers(0, 255), st.integers(0, 255))
def test_byte_range_nodes_are_shared_per_range(a: int, b: int) -> None:
    lo, hi = min(a, b), max(a, b)
    node = byte_range(lo, hi)
    assert node == Bytes(((lo, hi),)) and byte_range(lo, hi) is node
    if hi < 255:
        assert byte_range(lo, hi + 1) is not node


@pytest.mark.parametrize("lo, hi", [(-1, 3), (5, 4), (0, 256)])
def test_a_bad_byte_range_is_refused(lo: int, hi: int) -> None:
    with pytest.raises(ValueError, match="bad byte range"):
        byte_range(lo, hi)
