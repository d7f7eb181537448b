"""Patterns and formats with a length bound run as counted automata (``ir.CountedAutomaton``):
the length product would need a state per (pattern state, length)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import tokensieve as ts
from tokensieve.frontends.json_schema import json_schema_to_grammar
from tokensieve.ir import Automaton, CountedAutomaton, Repeat

from .helpers import check

VOCAB = ts.Vocabulary(
    [bytes([b]) for b in range(32, 127)] + [b"<eos>"], eos_token_ids=[95], special_token_ids=[95]
)


def _counted(grammar: ts.ir.Grammar) -> list[CountedAutomaton]:
    found: list[CountedAutomaton] = []
    todo: list[ts.ir.Expr] = list(grammar.rules.values())
    while todo:
        e = todo.pop()
        if isinstance(e, CountedAutomaton):
            found.append(e)
        elif isinstance(e, (ts.ir.Seq, ts.ir.Alt)):
            todo.extend(e.items)
    return found


def _accepts(grammar: ts.CompiledGrammar, value: str) -> bool:
    m = ts.Matcher(grammar)
    return m.accept_bytes(json.dumps(value).encode()) and m.is_accepting()


@pytest.mark.parametrize("lo, hi", [(5, 255), (0, 64), (300, None)])
def test_a_pattern_with_a_length_is_counted(lo: int, hi: int | None) -> None:
    schema: dict[str, object] = {"type": "string", "pattern": r"^\S+@\S+$", "minLength": lo}
    if hi is not None:
        schema["maxLength"] = hi
    assert len(_counted(json_schema_to_grammar(schema))) == 1
    grammar = ts.Compiler(VOCAB).json_schema(schema)
    ends = [lo - 1, lo, lo + 1] + ([hi - 1, hi, hi + 1] if hi is not None else [lo + 50])
    for n in ends:
        if n < 3:
            continue
        value = "a" * (n - 2) + "@b"
        assert _accepts(grammar, value) == (lo <= n and (hi is None or n <= hi)), n
    assert not _accepts(grammar, "ab cd@e" + "f" * lo)  # a space is not \S
    assert not _accepts(grammar, "abcdef" + "g" * lo)  # no @


def test_an_email_with_a_max_length_compiles() -> None:
    # The email format's automaton has states whose lengths stop (after "]"): the counter
    # keeps the exact set of lengths below the point where they settle.
    grammar = ts.Compiler(VOCAB).json_schema({"type": "string", "format": "email", "maxLength": 40})
    assert _accepts(grammar, "john.doe@example.com")
    assert _accepts(grammar, "a" * 30 + "@b.example")  # 40 characters
    assert not _accepts(grammar, "a" * 31 + "@b.example")  # 41
    assert _accepts(grammar, "x@[1.2.3.4]")
    assert not _accepts(grammar, "not an email")


def test_lengths_count_characters_not_bytes_or_escapes() -> None:
    grammar = ts.Compiler(VOCAB).json_schema({"type": "string", "pattern": r"^\S+@\S+$", "maxLength": 40})
    m = ts.Matcher(grammar)
    text = '"' + "\\u00e9" * 38 + '@b"'  # 40 characters, each "é" written as an escape
    assert m.accept_bytes(text.encode()) and m.is_accepting()
    m = ts.Matcher(grammar)
    assert not m.accept_bytes(('"' + "\\u00e9" * 39 + '@b"').encode())


def test_a_counted_string_under_not_is_expanded_for_the_difference() -> None:
    # `not` subtracts automata; a counter is not one, so the front-end expands the string
    # with its lengths for the subtraction (Handwritten allany20 has this shape).
    schema = {
        "type": "string",
        "pattern": "[aA][12].*[zZ]",
        "minLength": 10,
        "maxLength": 90,
        "not": {"pattern": "^a1"},
    }
    grammar = ts.Compiler(VOCAB).json_schema(schema)
    assert _accepts(grammar, "A1" + "x" * 10 + "z")
    assert not _accepts(grammar, "a1" + "x" * 10 + "z")  # the `not`
    assert not _accepts(grammar, "A1xz")  # too short
    assert not _accepts(grammar, "A1" + "x" * 90 + "z")  # too long


def test_a_string_built_position_by_position_is_shared_by_later_conversions() -> None:
    # A version pattern with a maximum length: no counter runs it (its units are not
    # prefix-free), so the automaton has a state per position; it is built once per process.
    version = {"type": "string", "pattern": "^(\\d+\\.\\d+\\.\\d+.*)$", "maxLength": 32}
    first = json_schema_to_grammar({"type": "object", "properties": {"v": version}})
    second = json_schema_to_grammar({"type": "array", "items": version})

    def automata(grammar: Any) -> list[Any]:
        found, todo, seen = [], list(grammar.rules.values()), set()
        while todo:
            expr = todo.pop()
            if id(expr) in seen:
                continue
            seen.add(id(expr))
            if isinstance(expr, Automaton) and len(expr.accepting) > 32:
                found.append(expr)
            todo.extend(getattr(expr, "items", ()))
            if isinstance(expr, Repeat):
                todo.append(expr.item)
        return found

    built = automata(first)
    assert built and any(a is b for a in built for b in automata(second))
    check(version, ["1.2.3", "1.2.3-rc.1", "10.20.30" + "x" * 24], ["1.2", "v1.2.3", "1.2.3" + "x" * 28])
