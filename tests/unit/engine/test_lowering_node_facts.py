"""Facts the lowering derives from an IR node alone and keeps on the node (``lower._facts``)."""

from __future__ import annotations

from array import array

from tokensieve.compiler import lower as lowering
from tokensieve.ir import Alt, Bytes, Ref, Repeat, Seq, Special, Unordered, literal


def test_a_rule_free_program_is_kept_on_the_node_and_reused() -> None:
    node = Alt((literal("ab"), Repeat(literal("c"), 0, 3)))
    first = lowering.regex_program(node)
    kept = lowering._facts(node).program
    assert kept is not None and array("i", kept).tolist() == first  # int32 words
    # A structurally equal but distinct node gets the same program from scratch.
    twin = Alt((literal("ab"), Repeat(literal("c"), 0, 3)))
    assert lowering.regex_program(twin) == first
    assert lowering.regex_program(node) == first  # served from the facts


def test_programs_that_inline_rules_are_not_kept_on_the_node() -> None:
    node = Seq((Ref("r"), Repeat(Bytes.of([(97, 98)]), 0, 3)))
    program = lowering.regex_program(node, {"r": literal("x")})
    assert lowering._facts(node).program is None  # depends on what "r" means in a grammar
    assert lowering.regex_program(node, {"r": literal("yy")}) != program


def test_references_and_closedness() -> None:
    node = Seq((Ref("a"), Alt((Ref("b"), literal("z")))))
    facts = lowering._facts(node)
    assert facts.refs == {"a", "b"} and facts.closed and not facts.rule_free
    assert facts.nfa_size is None  # depends on the rules' bodies
    special = Seq((literal("a"), Special(7)))
    assert not lowering._facts(special).closed
    unordered = Unordered((Ref("m"),), literal(","))
    assert lowering._facts(unordered).refs == {"m"} and not lowering._facts(unordered).closed


def test_nfa_size_of_a_rule_free_node() -> None:
    node = Seq((literal("ab"), Repeat(Bytes.of([(97, 97)]), 0, 5)))
    assert lowering._facts(node).nfa_size == 2 + 1 + 5
