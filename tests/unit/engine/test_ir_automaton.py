"""The IR ``Automaton`` node: flat edges, the rows view, validation, and what it leaves to
Python's cyclic collector."""

from __future__ import annotations

import gc

import pytest

from tokensieve.compiler import lower as lowering
from tokensieve.ir import Automaton, Bytes, Seq, byte_range, literal

A, B = byte_range(97, 97), byte_range(98, 98)
# "a" then any number of "b": state 0 -a-> 1, 1 -b-> 1, 1 accepts.
ROWS = ((False, ((A, 1),)), (True, ((B, 1),)))


def test_rows_round_trip_and_value_semantics() -> None:
    automaton = Automaton.of(ROWS)
    assert automaton.states == ROWS
    assert automaton.accepting == (False, True)
    assert automaton.edge_begin == (0, 1, 2) and automaton.targets == (1, 1)
    assert automaton == Automaton.of(list(ROWS)) and hash(automaton) == hash(Automaton.of(ROWS))
    assert automaton != Automaton.of(((False, ((A, 1),)), (True, ())))


def test_a_state_without_edges_and_a_state_with_several() -> None:
    rows = ((False, ((A, 1), (B, 2))), (True, ()), (True, ((A, 2),)))
    automaton = Automaton.of(rows)
    assert automaton.states == rows and automaton.edge_begin == (0, 2, 2, 3)


@pytest.mark.parametrize(
    "fields, message",
    [
        (((), (0,), (), ()), "at least one state"),
        (((True,), (0, 1), (A,), (3,)), "pairs"),
        (((True,), (0, 1), (A,), ()), "one target per label"),
        (((True, True), (0, 1), (A,), (0,)), "bound each state"),
        (((True, True), (1, 1, 1), (A,), (0,)), "bound each state"),
        (((True, True, True), (0, 2, 1, 2), (A, B), (0, 0)), "not decrease"),
    ],
)
def test_malformed_automata_are_refused(fields: tuple[tuple[object, ...], ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Automaton(*fields)  # type: ignore[arg-type]


def test_a_label_that_is_not_a_byte_set_is_refused() -> None:
    # (The compiled package's typed attributes refuse it with a TypeError, before the check.)
    with pytest.raises((ValueError, TypeError)):
        Automaton((True,), (0, 1), (literal("ab"),), (0,))  # type: ignore[arg-type]


def test_the_program_is_the_rows_program() -> None:
    """The header lists, per state, acceptance, edge count and targets; labels follow in order."""
    program = lowering.regex_program(Automaton.of(ROWS))
    label_a, label_b = lowering.regex_program(A), lowering.regex_program(B)
    assert program == [4, 2, 0, 1, 1, 1, 1, 1, *label_a, *label_b]
    inside = lowering.regex_program(Seq((literal("x"), Automaton.of(ROWS))))
    assert inside[-len(program) :] == program


def test_edges_leave_nothing_for_the_collector_to_walk() -> None:
    """Caches keep large automata alive: after one collection the node's numbers are untracked
    tuples, and the labels are one tuple of shared nodes, however many edges there are."""
    rows = tuple((s % 3 == 0, ((Bytes.of([(s % 200, s % 200 + 5)]), (s + 1) % 500),)) for s in range(500))
    automaton = Automaton.of(rows)
    gc.collect()
    assert not gc.is_tracked(automaton.accepting)
    assert not gc.is_tracked(automaton.edge_begin)
    assert not gc.is_tracked(automaton.targets)
    tracked = [o for o in gc.get_referents(automaton) if gc.is_tracked(o) and not isinstance(o, type)]
    assert tracked == [automaton.labels]
