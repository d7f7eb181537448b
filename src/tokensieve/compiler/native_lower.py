"""The native lowering: the grammar IR flattened into words and lowered in C++.

:func:`lower.lower` is the reference: the native lowering (``cpp/src/lowering.cpp``) runs
the same algorithm and makes the same terminals, productions and nonterminals, symbol for
symbol (``tests/differential/test_native_lowering.py`` holds them to that). It exists for
speed: lowering a schema of a thousand rules (Kubernetes, WashingtonPost) visits its few
thousand IR nodes many times over, and in Python those visits were up to half of the
schema's compile.

The IR crosses into C++ once, as int64 words (the layouts are in
``cpp/include/tokensieve/lowering.hpp``): every node reachable from a rule, each shared node
once, numbered children first, so that the native side derives every node's facts in one
pass. What the words cannot say, or what the reference handles specially, stays with the
reference (:func:`lower_grammar` falls back to it): a reference to an undefined rule (the
reference raises only if the lowering reaches it), a node class it does not know, and IR
nested deeper than :data:`MAX_NATIVE_DEPTH` (the encoder and the native walks recurse).
"""

from __future__ import annotations

import sys
import time
from array import array

from .. import _core
from ..errors import GrammarSyntaxError
from ..ir import (
    Alt,
    Automaton,
    Bytes,
    CountedAutomaton,
    Difference,
    Expr,
    Grammar,
    Ref,
    Repeat,
    Seam,
    Seq,
    Special,
    Unordered,
)
from ..limits import Limits
from ..program import automaton_header
from .lower import CountedBuilder, FragmentStore, LoweredGrammar, TerminalBuilder, UnitsBuilder, lower

__all__ = ["MAX_NATIVE_DEPTH", "encode_grammar", "lower_grammar", "lower_natively"]

# Deeper IR goes to the reference lowering: the encoder below and the native lowering walk
# the IR recursively, within a C stack's reach at this depth (the default
# ``Limits.max_grammar_depth`` is 2,000, and a grammar nesting deeper is refused anyway).
MAX_NATIVE_DEPTH = 5_000

# Counts past int64 compare alike: far past every limit they are checked against.
_CLAMP = 1 << 62

_BYTES, _SEQ, _ALT, _REPEAT, _REF, _SPECIAL, _AUTOMATON, _DIFFERENCE, _UNORDERED, _SEAM, _COUNTED = range(11)


class _Unsuitable(Exception):
    """The grammar needs the reference lowering (see the module docstring)."""


class _Encoder:
    """Flattens the IR: ``words`` in node order, ``index`` maps ``id(node)`` to its number."""

    def __init__(self, position: dict[str, int], max_depth: int) -> None:
        self.position = position
        self.max_depth = max_depth
        self.words: list[int] = []
        self.index: dict[int, int] = {}
        self.count = 0

    def node(self, e: Expr, depth: int) -> int:
        """The number of ``e``, its sub-expressions and itself written first if new."""
        hit = self.index.get(id(e))
        if hit is not None:
            return hit
        if depth > self.max_depth:
            raise _Unsuitable
        w = self.words
        below = depth + 1
        # isinstance, most frequent first: as the reference lowering tells node classes apart
        # (and in the compiled module, a narrowed node's fields are read without a lookup).
        if isinstance(e, Seq):
            kids = [self.node(it, below) for it in e.items]
            w.append(_SEQ)
            w.append(len(kids))
            w.extend(kids)
        elif isinstance(e, Bytes):
            ranges = e.ranges
            w.append(_BYTES)
            w.append(len(ranges))
            for lo, hi in ranges:
                w.append(lo)
                w.append(hi)
        elif isinstance(e, Ref):
            rule = self.position.get(e.name)
            if rule is None:
                raise _Unsuitable
            w.append(_REF)
            w.append(rule)
        elif isinstance(e, Alt):
            kids = [self.node(it, below) for it in e.items]
            w.append(_ALT)
            w.append(len(kids))
            w.extend(kids)
        elif isinstance(e, Repeat):
            item = self.node(e.item, below)
            high = e.max
            w.append(_REPEAT)
            w.append(item)
            w.append(_clamped(e.min))
            w.append(-1 if high is None else _clamped(high))
        elif isinstance(e, Seam):
            w.append(_SEAM)
        elif isinstance(e, Special):
            w.append(_SPECIAL)
            w.append(e.token_id)
        elif isinstance(e, Difference):
            left = self.node(e.left, below)
            right = self.node(e.right, below)
            w.append(_DIFFERENCE)
            w.append(left)
            w.append(right)
        elif isinstance(e, Automaton):
            labels = [self.node(label, below) for label in e.labels]
            header = automaton_header(e)
            w.append(_AUTOMATON)
            w.append(len(header))
            w.extend(header)
            w.append(len(labels))
            w.extend(labels)
        elif isinstance(e, Unordered):
            self.unordered(e, below)
        elif isinstance(e, CountedAutomaton):
            self.counted(e, below)
        else:
            raise _Unsuitable  # a class the native lowering does not know
        number = self.count
        self.count = number + 1
        self.index[id(e)] = number
        return number

    def unordered(self, e: Unordered, below: int) -> None:
        items = [self.node(it, below) for it in e.items]
        separator = self.node(e.separator, below)
        repeatable = -1 if e.repeatable is None else self.node(e.repeatable, below)
        w = self.words
        w.append(_UNORDERED)
        w.append(len(items))
        w.extend(items)
        w.append(separator)
        w.append(repeatable)
        w.append(_clamped(e.min_count))
        w.append(-1 if e.max_count is None else _clamped(e.max_count))
        w.append(len(e.required))
        w.extend(e.required)

    def counted(self, e: CountedAutomaton, below: int) -> None:
        units: list[int] = []
        for accepting, edges in e.units:
            units.append(1 if accepting else 0)
            units.append(len(edges))
            for label, target in edges:
                units.append(self.node(label, below))
                units.append(target)
        w = self.words
        w.append(_COUNTED)
        w.append(len(e.units))
        w.extend(units)
        w.append(_clamped(e.min))
        w.append(-1 if e.max is None else _clamped(e.max))


def _clamped(count: int) -> int:
    return count if count < _CLAMP else _CLAMP


def encode_grammar(
    grammar: Grammar, max_depth: int = MAX_NATIVE_DEPTH
) -> tuple[list[int], bytes, bytes, int] | None:
    """``grammar`` as the native lowering reads it: (node words, each rule's body node, each
    rule's rank among the sorted rule names, the start rule), or None when it needs the
    reference lowering (see the module docstring)."""
    rules = grammar.rules
    names = list(rules)
    position = {name: i for i, name in enumerate(names)}
    start = position.get(grammar.start)
    if start is None:
        return None
    rank = [0] * len(names)
    for r, i in enumerate(sorted(range(len(names)), key=names.__getitem__)):
        rank[i] = r
    encoder = _Encoder(position, max_depth)
    try:
        bodies = [encoder.node(body, 1) for body in rules.values()]
    except _Unsuitable:
        return None
    return encoder.words, array("i", bodies).tobytes(), array("i", rank).tobytes(), start


def lower_natively(
    grammar: Grammar,
    build: TerminalBuilder,
    limits: Limits,
    build_counted: CountedBuilder | None = None,
    build_units: UnitsBuilder | None = None,
    deadline: float | None = None,
) -> LoweredGrammar | None:
    """:func:`lower.lower` in C++ (the same result), or None when the grammar needs the
    reference (see the module docstring)."""
    if grammar.start not in grammar.rules:
        raise GrammarSyntaxError(f"start rule {grammar.start!r} is not defined", source="grammar")
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 2 * MAX_NATIVE_DEPTH + 100))  # (the encoder's, run as plain Python)
    try:
        encoded = encode_grammar(grammar, min(MAX_NATIVE_DEPTH, limits.max_grammar_depth + 1))
    finally:
        sys.setrecursionlimit(old)
    if encoded is None:
        return None
    words, bodies, ranks, start = encoded
    if deadline is None:
        deadline = time.monotonic() + limits.max_compile_seconds
    native_limits = (
        limits.max_terminal_states,
        limits.max_dfa_states,
        limits.max_productions,
        limits.max_total_dfa_states,
        limits.max_grammar_depth,
        limits.min_counted_repeat,
        deadline,
        str(limits.max_compile_seconds),
    )
    terminals, productions, num_nonterminals, start_nt, names, unordered = _core.lower_grammar(
        words, bodies, ranks, start, list(grammar.rules), native_limits, build, build_counted, build_units
    )
    return LoweredGrammar(terminals, productions, num_nonterminals, start_nt, names, unordered)


def lower_grammar(
    grammar: Grammar,
    build: TerminalBuilder,
    limits: Limits,
    build_counted: CountedBuilder | None = None,
    build_units: UnitsBuilder | None = None,
    deadline: float | None = None,
    fragments: FragmentStore | None = None,
) -> LoweredGrammar:
    """Lower ``grammar`` natively, or with the reference :func:`lower.lower` (and its
    ``fragments``) when the native lowering does not take it."""
    lowered = lower_natively(grammar, build, limits, build_counted, build_units, deadline)
    if lowered is not None:
        return lowered
    return lower(grammar, build, limits, build_counted, build_units, deadline, fragments)
