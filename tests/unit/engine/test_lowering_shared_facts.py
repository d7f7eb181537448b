"""Facts the lowering keeps across grammars for large rule-free IR nodes (``lower._SHARED``)."""

from __future__ import annotations

import gc

from tokensieve.compiler import lower as lowering
from tokensieve.ir import Alt, Bytes, Ref, Repeat, Seq, literal


def _big(tag: int) -> Alt:
    """A rule-free expression whose program is longer than the sharing threshold."""
    words = [literal(f"w{tag}-{k}") for k in range(20)]
    return Alt(tuple(words))


def test_a_large_rule_free_program_is_shared_and_equal() -> None:
    node = _big(1)
    first = lowering.regex_program(node)
    assert len(first) >= lowering._LiveNodeFacts.MIN_PROGRAM
    shared = lowering._SHARED.get(node)
    assert shared is not None and shared.program == first
    assert lowering.regex_program(node) == first  # served from the shared entry


def test_programs_that_inline_rules_are_not_shared() -> None:
    body = _big(2)
    node = Seq((Ref("r"), Repeat(Bytes.of([(97, 98)]), 0, 3)))
    program = lowering.regex_program(node, {"r": body})
    assert lowering._SHARED.get(node) is None  # depends on what "r" means in this grammar
    assert lowering._SHARED.get(body) is not None  # the rule's body alone is rule-free
    other = lowering.regex_program(node, {"r": literal("x")})
    assert other != program


def test_entries_leave_with_their_node() -> None:
    node = _big(3)
    lowering.regex_program(node)
    key = id(node)
    assert key in lowering._SHARED._entries
    del node
    gc.collect()
    assert key not in lowering._SHARED._entries
    # A new node at a recycled id is never mistaken for the old one.
    assert all(entry.ref() is not None for entry in lowering._SHARED._entries.values())
