"""Reading a byte automaton one character at a time (``strings.char_graph``): the character
graph must accept exactly the strings whose UTF-8 encoding the byte automaton accepts, with
one target per character."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from tokensieve.frontends.json_schema.automata import DFA, dfa_from_expr, utf8_strings
from tokensieve.frontends.json_schema.strings import CharGraph, char_graph
from tokensieve.frontends.regex import parse_regex

# Patterns whose classes split lead bytes between their sides: \s and \S share C2, E1, E2 and
# E3 (U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+3000...), and the ranges below end
# inside 2-, 3- and 4-byte blocks, next to the surrogates and at U+10FFFF.
PATTERNS = [
    r"^(?:\S+\s+){0,3}\S+$",
    r"^\s*[^\s]\S?$",
    r"^[\u00a0-\u07ff\ud7ff\ue000-\uffff]+x?$",
    r"^(?:[\u0800-\u0fff]|[\U00010000-\U0001ffff]\d)*$",
    r"^.{2,3}$",
    r"^[^\u2000-\u200a\u3000]{1,2}[\u2028\u2029]?$",
    r"^[\U0010fff0-\U0010ffff]|[a-c]\u00ff$",
]

# Code points at the edges of every class above and of the UTF-8 lengths.
ALPHABET = sorted(
    {0x09, 0x20, 0x41, 0x61, 0x62, 0x78, 0x7F, 0x80, 0x85, 0x9F, 0xA0, 0xA1, 0xFF, 0x7FF, 0x800,
     0xFFF, 0x1000, 0x167F, 0x1680, 0x1681, 0x1FFF, 0x2000, 0x200A, 0x200B, 0x2027, 0x2028, 0x2029,
     0x202F, 0x205F, 0x2FFF, 0x3000, 0x3001, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x1FFFF, 0x20000,
     0x10FFEF, 0x10FFF0, 0x10FFFF}
)


def _content(pattern: str) -> DFA:
    return utf8_strings().intersect(dfa_from_expr(parse_regex(pattern, search=True)))


def _byte_accepts(dfa: DFA, text: str) -> bool:
    return dfa.accepts(text.encode())


def _char_accepts(graph: CharGraph, text: str) -> bool:
    s = 0
    for c in text:
        cp = ord(c)
        targets = [t for t, ranges in graph.edges[s].items() if any(lo <= cp <= hi for lo, hi in ranges)]
        assert len(targets) <= 1, f"state {s} has {len(targets)} targets for U+{cp:04X}"
        if not targets:
            return False
        s = targets[0]
    return graph.accept[s]


GRAPHS = [(p, _content(p)) for p in PATTERNS]
GRAPHS = [(p, dfa, char_graph(dfa)) for p, dfa in GRAPHS]


def test_char_graph_agrees_on_every_short_string() -> None:
    for _, dfa, graph in GRAPHS:
        for n in range(3):
            for text in itertools.product(ALPHABET, repeat=n):
                word = "".join(map(chr, text))
                assert _char_accepts(graph, word) == _byte_accepts(dfa, word), [hex(c) for c in text]


@settings(max_examples=300, deadline=None)
@given(index=st.integers(0, len(PATTERNS) - 1), text=st.lists(st.sampled_from(ALPHABET), max_size=6))
def test_char_graph_accepts_what_the_byte_automaton_accepts(index: int, text: list[int]) -> None:
    _, dfa, graph = GRAPHS[index]
    word = "".join(map(chr, text))
    assert _char_accepts(graph, word) == _byte_accepts(dfa, word)


def test_char_graph_edges_are_whole_characters_only() -> None:
    """No edge spells a surrogate or leaves the Unicode range, and each state's edges are
    disjoint (checked code point by code point over every range's ends)."""
    for pattern, _, graph in GRAPHS:
        for s, row in enumerate(graph.edges):
            seen: list[tuple[int, int]] = []
            for ranges in row.values():
                for lo, hi in ranges:
                    assert 0 <= lo <= hi <= 0x10FFFF, pattern
                    assert hi < 0xD800 or lo > 0xDFFF, (pattern, s, hex(lo), hex(hi))
                    assert all(hi < a or lo > b for a, b in seen), (pattern, s)
                    seen.append((lo, hi))


def test_word_count_pattern_reads_as_two_states_per_word() -> None:
    # ^(\S+\s+){0,3}\S+$ : per word, "in the word" and "in the spaces after it".
    graph = char_graph(_content(r"^(?:\S+\s+){0,3}\S+$"))
    assert len(graph.accept) == 8
    assert sum(graph.accept) == 4
