"""Regex programs: the input of the native automaton builder (``cpp/include/tokensieve/dfa.hpp``).

A program is a prefix encoding of a regular expression in native-endian int32 words. The
compiler writes one per terminal (``compiler.lower``) and the JSON Schema front-end one per
expression whose DFA it needs (``frontends.json_schema.automata``); both write their words and
their repetition counts through this module, so the two agree on what a count means.
"""

from __future__ import annotations

import struct
from array import array
from typing import Final

from .errors import LimitExceeded
from .ir import MAX_COUNT, Automaton

__all__ = [
    "OP_ALT",
    "OP_AUTOMATON",
    "OP_BYTES",
    "OP_DIFFERENCE",
    "OP_REPEAT",
    "OP_SEQ",
    "automaton_header",
    "native_max_count",
    "repeat_words",
    "words",
]

OP_BYTES, OP_SEQ, OP_ALT, OP_REPEAT, OP_AUTOMATON, OP_DIFFERENCE = 0, 1, 2, 3, 4, 5

if array("i").itemsize != 4:  # programs are int32 words for the native builder
    raise ImportError("tokensieve needs a platform whose C int has 32 bits")

# Packers for short runs of native int32 words (a node's header, a byte set's ranges): a
# prepared struct packs three words in half the time a new array takes.
_PACKERS: Final = [struct.Struct(f"={n}i") for n in range(17)]


def words(*values: int) -> bytes:
    """``values`` as native int32 words (OverflowError for a value past 32 bits)."""
    if len(values) < len(_PACKERS):
        try:
            packed: bytes = _PACKERS[len(values)].pack(*values)
            return packed
        except struct.error:
            pass  # a value past int32: the array below raises its OverflowError, as ever
    return array("i", values).tobytes()


def native_max_count(max_count: int | None) -> int:
    """An upper count bound as the native parser and counters take it: -1 for none, which a
    bound past :data:`~tokensieve.ir.MAX_COUNT` is too."""
    return -1 if max_count is None or max_count > MAX_COUNT else max_count


def repeat_words(min_count: int, max_count: int | None) -> bytes:
    """The header of a repetition, counts as :data:`~tokensieve.ir.MAX_COUNT` says: an upper
    bound past it is no bound, and a lower one is refused (the builder would unroll it)."""
    if min_count > MAX_COUNT:
        raise LimitExceeded(
            f"a repetition of at least {min_count} copies needs more than max_nfa_states automaton states",
            limit="max_nfa_states",
        )
    return words(OP_REPEAT, min_count, native_max_count(max_count))


def automaton_header(automaton: Automaton) -> list[int]:
    """The header words of an automaton: ``OP_AUTOMATON``, its state count, then per state
    whether it accepts, its edge count and its edges' targets (the labels' programs follow)."""
    header = [OP_AUTOMATON, len(automaton.accepting)]
    targets, begin = automaton.targets, automaton.edge_begin
    for s, accepting in enumerate(automaton.accepting):
        header.append(1 if accepting else 0)
        header.append(begin[s + 1] - begin[s])
        header.extend(targets[begin[s] : begin[s + 1]])
    return header
