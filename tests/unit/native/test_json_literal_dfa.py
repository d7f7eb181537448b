"""The native shortcut for JSON string literals (cpp/src/json_literal.cpp).

``build_dfa`` recognizes the program of one JSON-quoted string literal (a property name, an
enum or const string), or of an alternation of them (an enum of strings, the names "any other
key" must not be), and writes its automaton down directly. Two things must hold: the
shortcut is *taken* for the programs the compiler really writes, and its automaton is the one
the general pipeline builds, state for state.

Telling the two paths apart: the general pipeline counts NFA states first and refuses a program
past ``max_nfa_states``, which the shortcut has no use for; with a limit of one state only the
shortcut can succeed. The general pipeline's automaton of the same language comes from the
program wrapped in a one-armed alternation, which the shortcut does not recognize.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokensieve as ts
from tokensieve import _core
from tokensieve.compiler.compiled import TerminalCache
from tokensieve.compiler.lower import lower
from tokensieve.frontends.json_schema import json_schema_to_grammar
from tokensieve.frontends.json_schema.automata import _program
from tokensieve.frontends.json_schema.strings import json_literal_string
from tokensieve.frontends.json_value import PLAIN_ASCII, json_string_char
from tokensieve.program import OP_ALT, OP_BYTES, OP_DIFFERENCE, OP_SEQ, words

BIG = 1_000_000
VOCAB = ts.Vocabulary([b'"', b"a", b"<eos>"], eos_token_ids=[2], special_token_ids=[2])


def _words(program: bytes) -> np.ndarray:
    return np.frombuffer(program, dtype=np.int32)


def _general(program: bytes) -> object:
    """The general pipeline's DFA of ``program``'s language (a one-armed alternation of it)."""
    return _core.build_dfa(_words(words(OP_ALT, 1) + program), BIG, BIG)


def _shortcut(program: bytes) -> object:
    """The DFA, which only the shortcut can build with an NFA limit of one state."""
    return _core.build_dfa(_words(program), 1, BIG)


def _same(a: object, b: object) -> bool:
    return a.num_classes == b.num_classes and a.to_ranges() == b.to_ranges()  # type: ignore[attr-defined]


# Characters from every spelling class: plain ASCII, the short escapes, control characters
# with and without a short escape, hex letters in their \u escape, 2-, 3- and 4-byte UTF-8.
_CHARS = st.one_of(
    st.sampled_from(list('abzAZ09_-./~"\\\b\f\n\r\t\x00\x01\x1f\x7f é€\u07ff\u0800\uffff😀\U0010ffff')),
    st.characters(blacklist_categories=("Cs",)),
)


def _terminal_programs(grammar: Any) -> list[bytes]:
    """The programs of the terminals that lowering ``grammar`` asks the terminal cache for."""
    limits = ts.Limits()
    cache = TerminalCache(VOCAB, limits)
    programs: list[bytes] = []

    def build(program: bytes, max_states: int, subset_cap: int) -> Any:
        programs.append(program)
        return cache.get(program, max_states, subset_cap)

    lower(grammar, build, limits, cache.get_counted, cache.get_counted_units)
    return programs


@settings(max_examples=300, deadline=None)
@given(st.text(_CHARS, max_size=12))
def test_shortcut_is_the_general_automaton(value: str) -> None:
    program = _program(json_literal_string(value))
    fast = _shortcut(program)
    assert _same(fast, _general(program))
    spelled = ('"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"').encode()
    if not any(ord(c) < 0x20 for c in value):
        assert fast.matches(spelled)
    assert fast.matches(json.dumps(value).encode())  # ensure_ascii: \uXXXX beyond ASCII
    assert fast.matches(json.dumps(value, ensure_ascii=False).encode())
    assert not fast.matches(spelled + b" ")
    plain = [i for i, c in enumerate(value) if 0x20 <= ord(c) <= 0x7E and c not in "&<>"]
    if plain:  # printable ASCII has one spelling (Go's HTML-safe &<> apart): never a \u escape
        i = plain[0]
        escaped = json.dumps(value[:i])[:-1] + f"\\u{ord(value[i]):04x}" + json.dumps(value[i + 1 :])[1:]
        assert not fast.matches(escaped.encode())


def test_any_json_string_escapes_every_value_but_plain_ascii() -> None:
    """json_string_char's hand-written \\u digits are the complement of PLAIN_ASCII."""
    char = _general(_program(json_string_char()))
    for cp in range(0x10000):
        plain = any(lo <= cp <= hi for lo, hi in PLAIN_ASCII)
        for text in (f"\\u{cp:04x}", f"\\u{cp:04X}"):
            assert char.matches(text.encode()) is not plain, text


def test_the_compilers_key_programs_take_the_shortcut() -> None:
    names = ["name", "first_publish_date", "é", "a/b", 'q"uote', "tab\there", "😀x"]
    grammar = json_schema_to_grammar(
        {
            "type": "object",
            "properties": {n: {"type": "integer"} for n in names},
            "additionalProperties": False,
        },
        property_order="any",
    )
    programs = _terminal_programs(grammar)
    keys = [p for p in programs if _words(p)[:6].tolist() == [OP_SEQ, _words(p)[1], OP_BYTES, 1, 34, 34]]
    assert len(keys) == len(names)
    for program in keys:
        _shortcut(program)  # raises LimitExceeded if it took the general pipeline


def test_near_misses_go_to_the_general_pipeline() -> None:
    program = _program(json_literal_string("key"))
    w = _words(program).copy()
    w[-1] = ord("'")  # a different closing byte: not a JSON literal
    with pytest.raises(ts.LimitExceeded):
        _core.build_dfa(w, 1, BIG)
    assert _core.build_dfa(w, BIG, BIG).matches(b"\"key'")
    with pytest.raises(ValueError, match="trailing words"):  # not taken: the parser reports them
        _core.build_dfa(_words(program + words(OP_ALT, 0)), 1, BIG)
    # A sequence claiming 2^31 - 1 items in a few words: no allocation by the claim, a parse error.
    claimed = words(OP_SEQ, 2**31 - 1, OP_BYTES, 1, 34, 34, OP_BYTES, 1, 97, 97, OP_BYTES, 1, 34, 34)
    with pytest.raises(ValueError, match="truncated"):
        _core.build_dfa(_words(claimed), BIG, BIG)


def _literal_set(values: list[str]) -> bytes:
    return words(OP_ALT, len(values)) + b"".join(_program(json_literal_string(v)) for v in values)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(_CHARS, max_size=6), min_size=1, max_size=6))
def test_set_shortcut_is_the_general_automaton(values: list[str]) -> None:
    program = _literal_set(values)  # duplicates too: the trie takes a literal met before again
    fast = _shortcut(program)
    assert _same(fast, _general(program))
    for value in values:
        spelled = ('"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"').encode()
        if not any(ord(c) < 0x20 for c in value):
            assert fast.matches(spelled)
    assert not fast.matches(b'"' + "".join(values).encode() + b'x"')  # longer than every value


def test_sets_that_end_alike_share_their_last_states() -> None:
    """Literals with a common ending meet before it: the minimal automaton, not the trie. After
    "é" or "ç" the rest is the same ("b" and the closing quote), so the two branches are one,
    and the set needs no more states than "éb" alone (its trie would have more: the node after
    "ç" and the states inside the spellings that leave it)."""
    both = _literal_set(["éb", "çb"])
    fast = _shortcut(both)
    assert fast.num_states == _shortcut(_literal_set(["éb"])).num_states
    assert _same(fast, _general(both))
    assert fast.matches(b'"\\u00e7b"') and fast.matches('"çb"'.encode()) and not fast.matches(b'"bb"')
    ascii_only = _literal_set(["ab", "cb"])
    assert _shortcut(ascii_only).num_states == _shortcut(_literal_set(["ab"])).num_states
    assert _same(_shortcut(ascii_only), _general(ascii_only))
    assert not _shortcut(ascii_only).matches(b'"\\u0063b"')  # printable ASCII: one spelling
    html = _literal_set(["a<b", "a&b"])  # Go's HTML-safe escapes: & < > keep their \u spellings
    assert _same(_shortcut(html), _general(html))
    assert _shortcut(html).matches(b'"a\\u003cb"') and _shortcut(html).matches(b'"a\\u0026b"')


def test_the_other_keys_of_an_object_take_the_set_shortcut() -> None:
    """The names that "any other key" excludes are built by the set shortcut."""
    grammar = json_schema_to_grammar(
        {"type": "object", "properties": {n: {"type": "integer"} for n in ["id", "name", "é", "a/b"]}},
        property_order="any",
    )
    programs = _terminal_programs(grammar)
    differences = [p for p in programs if _words(p)[0] == OP_DIFFERENCE]
    assert differences
    for program in differences:
        right = program[4 * _core.program_node_end(_words(program), 1) :]
        assert _words(right)[0] == OP_ALT
        assert _same(_shortcut(right), _general(right))


def test_sets_of_other_things_go_to_the_general_pipeline() -> None:
    # "a" or a digit
    mixed = words(OP_ALT, 2) + _program(json_literal_string("a")) + words(OP_BYTES, 1, 48, 57)
    with pytest.raises(ts.LimitExceeded):
        _core.build_dfa(_words(mixed), 1, BIG)
    assert _core.build_dfa(_words(mixed), BIG, BIG).matches(b"7")
    with pytest.raises(ts.LimitExceeded):  # an empty alternation is no set of literals
        _core.build_dfa(_words(words(OP_ALT, 0)), 1, BIG)
    with pytest.raises(ValueError, match="trailing words"):
        _core.build_dfa(_words(_literal_set(["a", "b"]) + words(OP_ALT, 0)), 1, BIG)
