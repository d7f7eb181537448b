"""The terminal cache's differences: a left operand met before is recognized by its words.

``TerminalCache._dfa`` splits "left minus right" programs into their operands, builds each
through the cache, and takes the product. The split point of a left operand it has seen is
found by comparing words instead of parsing the program again; the automaton must be the
one the parsed split gives.
"""

from __future__ import annotations

import tokensieve as ts
from tokensieve.compiler.lower import _program
from tokensieve.compiler.terminal_cache import TerminalCache
from tokensieve.ir import Bytes, Difference, Repeat, alt, literal, seq

VOCAB = ts.Vocabulary([b"a", b"b", b"ab", b"ba", b"<eos>"], eos_token_ids=[4], special_token_ids=[4])
LEFT = seq(literal('"'), Repeat(Bytes(((0x61, 0x62),)), 0, None), literal('"'))  # "[ab]*"


def _difference(*names: str) -> bytes:
    return _program(Difference(LEFT, alt(*(literal(f'"{n}"') for n in names))), {}, {})


def _language(dfa: object, longest: int = 6) -> set[bytes]:
    words = [b""]
    for _ in range(longest):
        words += [w + c for w in words if len(w) == len(words[-1]) for c in (b'"', b"a", b"b")]
    return {w for w in set(words) if dfa.matches(w)}  # type: ignore[attr-defined]


def test_a_left_operand_met_before_splits_as_parsing_splits_it() -> None:
    limits = ts.Limits()
    warm = TerminalCache(VOCAB, limits)
    warm._dfa(_difference("ab"), 1000)  # warm now knows LEFT's words
    assert warm._lefts
    later = _difference("ba", "abab")
    from_words = warm._dfa(later, 1000)
    parsed = TerminalCache(VOCAB, limits)._dfa(later, 1000)
    assert _language(from_words) == _language(parsed)
    assert b'"ab"' in _language(from_words) and b'"ba"' not in _language(from_words)
    assert from_words.num_states == parsed.num_states
