"""The native lowering: the grammar IR flattened into words and lowered in C++.

:func:`lower.lower` is the reference: the native lowering (``cpp/src/lowering.cpp``) runs
the same algorithm and makes the same terminals, productions and nonterminals, symbol for
symbol (``tests/differential/test_native_lowering.py`` holds them to that). It exists for
speed: lowering a schema of a thousand rules (Kubernetes, WashingtonPost) visits its few
thousand IR nodes many times over, and in Python those visits were up to half of the
schema's compile.

The IR crosses into C++ once: the binding (``cpp/bindings/lowering.cpp``) reads the rules'
node objects into int64 words (the layouts are in ``cpp/include/tokensieve/lowering.hpp``),
every node reachable from a rule, each shared node once, numbered children first, so that the
native side derives every node's facts in one pass. (Written in Python, that walk cost more
than the native lowering itself: a boxed int per word and a dictionary probe by ``id()`` per
node.) What the words cannot say stays with the reference (:func:`lower_grammar` falls back
to it): a reference to an undefined rule (the reference raises only if the lowering reaches
it), a node of a class the binding does not know (a subclass, too), and IR nested deeper than
:data:`MAX_NATIVE_DEPTH` (the reader and the native walks recurse).
"""

from __future__ import annotations

import time
from typing import Final

from .. import _core
from ..errors import GrammarSyntaxError
from ..ir import (
    Alt,
    Automaton,
    Bytes,
    CountedAutomaton,
    Difference,
    Grammar,
    Ref,
    Repeat,
    Seam,
    Seq,
    Special,
    Unordered,
)
from ..limits import Limits
from .lower import CountedBuilder, FragmentStore, LoweredGrammar, TerminalBuilder, UnitsBuilder, lower

__all__ = ["MAX_NATIVE_DEPTH", "NATIVE_MIN_RULES", "lower_grammar", "lower_natively"]

# Deeper IR goes to the reference lowering: the binding's reader and the native lowering walk
# the IR recursively, within a C stack's reach at this depth (the default
# ``Limits.max_grammar_depth`` is 2,000, and a grammar nesting deeper is refused anyway).
MAX_NATIVE_DEPTH: Final = 5_000

# Grammars of fewer rules go to the reference lowering, which is faster on them: it keeps what
# it derives on the IR nodes themselves and lowers the rule sets that recur across grammars
# once (lower.Fragment), and a small grammar is mostly such shared parts (whitespace, strings,
# numbers, "any value"); the native lowering starts from nothing each time. Measured on the
# MaskBench dev split (each lowering after a collection and malloc_trim, as bench/compare.py
# compiles), the median lowering of a grammar of 10-20 rules took 0.36 ms in the reference and
# 0.51 ms natively, of 60-80 rules 1.22 ms and 1.16 ms, of 400 and more 7.4 ms and 5.8 ms.
NATIVE_MIN_RULES: Final = 64

# The node classes in the order of the native kinds (IrKind in cpp/include/tokensieve/lowering.hpp).
_CLASSES: Final = (
    Bytes, Seq, Alt, Repeat, Ref, Special, Automaton, Difference, Unordered, Seam, CountedAutomaton
)


def lower_natively(
    grammar: Grammar,
    build: TerminalBuilder,
    limits: Limits,
    build_counted: CountedBuilder | None = None,
    build_units: UnitsBuilder | None = None,
    deadline: float | None = None,
    memo: _core.TerminalMemo | None = None,
) -> LoweredGrammar | None:
    """:func:`lower.lower` in C++ (the same result), or None when the grammar needs the
    reference (see the module docstring). ``memo`` (``TerminalCache.native_terminals``, kept
    with ``build``'s cache and used with no other) finds the DFA terminals ``build`` made for
    earlier grammars without a call into Python."""
    if grammar.start not in grammar.rules:
        raise GrammarSyntaxError(f"start rule {grammar.start!r} is not defined", source="grammar")
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
    result = _core.lower_grammar(
        grammar.rules,
        grammar.start,
        _CLASSES,
        native_limits,
        min(MAX_NATIVE_DEPTH, limits.max_grammar_depth + 1),
        build,
        build_counted,
        build_units,
        memo,
    )
    if result is None:
        return None
    terminals, productions, num_nonterminals, start_nt, names, unordered = result
    return LoweredGrammar(terminals, productions, num_nonterminals, start_nt, names, unordered)


def lower_grammar(
    grammar: Grammar,
    build: TerminalBuilder,
    limits: Limits,
    build_counted: CountedBuilder | None = None,
    build_units: UnitsBuilder | None = None,
    deadline: float | None = None,
    fragments: FragmentStore | None = None,
    memo: _core.TerminalMemo | None = None,
) -> LoweredGrammar:
    """Lower ``grammar`` natively (with ``memo``: see :func:`lower_natively`) when it has at
    least :data:`NATIVE_MIN_RULES` rules, or with the reference :func:`lower.lower` (and its
    ``fragments``) when it has fewer or the native lowering does not take it."""
    if len(grammar.rules) >= NATIVE_MIN_RULES:
        lowered = lower_natively(grammar, build, limits, build_counted, build_units, deadline, memo)
        if lowered is not None:
            return lowered
    return lower(grammar, build, limits, build_counted, build_units, deadline, fragments)
