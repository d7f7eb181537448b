"""Build the native ``CompiledGrammar`` from the IR: lowering, automata, parser tables."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from .. import _core
from ..errors import EmptyLanguageError
from ..ir import Grammar
from ..limits import Limits
from ..vocabulary import Vocabulary
from .lower import LoweredGrammar
from .native_lower import lower_grammar
from .terminal_cache import TerminalCache, native_matcher_limits

__all__ = ["CompiledGrammar", "GrammarStats", "TerminalCache", "compile_grammar"]


@dataclass(frozen=True)
class GrammarStats:
    """What compiling one grammar produced and cost."""

    terminals: int
    dfa_states: int
    productions: int
    nonterminals: int
    memory_bytes: int
    compile_seconds: float
    counted_terminals: int = 0  # terminals run with a counter (long repetitions)


class CompiledGrammar:
    """An immutable compiled grammar for one vocabulary; share it freely across threads.

    Make a :class:`tokensieve.Matcher` per sequence from it.
    """

    def __init__(
        self, native: Any, vocab: Vocabulary, stats: GrammarStats, limits: Limits, source: str
    ) -> None:
        self._native = native
        self.vocab = vocab
        self.stats = stats
        self.limits = limits
        self.source = source

    @property
    def memory_bytes(self) -> int:
        """Bytes the grammar holds now: its compile-time size (``stats.memory_bytes``) plus
        what its lazily built parts have grown to since: its mask cache and head indexes,
        shared by its matchers (and the near entries of its counted terminals, which it
        shares with other grammars that use them)."""
        return int(self._native.memory_bytes())

    def __repr__(self) -> str:
        s = self.stats
        return (
            f"<CompiledGrammar {self.source}: {s.terminals} terminals, {s.dfa_states} DFA states, "
            f"{s.productions} productions, {s.memory_bytes} bytes>"
        )


def native_grammar(
    lowered: LoweredGrammar, cache: TerminalCache, limits: Limits, meter: _core.MemoryMeter | None = None
) -> Any:
    """The native ``CompiledGrammar`` (parser tables over the terminals) of a lowering made
    with ``cache``'s terminals: the last step of :func:`compile_grammar`, its own function so
    that ``bench/compile_stages.py`` can time it alone."""
    # The cache's own copy when the limits are its (the compiler's case): the native grammar
    # copies them, and setting six attributes anew is Python that runs from cold caches.
    same = limits is cache.limits or limits == cache.limits
    native_limits = cache.native_limits if same else native_matcher_limits(limits)
    return _core.CompiledGrammar(
        cache.native_vocab,
        lowered.terminals,
        lowered.num_nonterminals,
        lowered.productions,
        lowered.start,
        native_limits,
        lowered.unordered,
        meter,
    )


def compile_grammar(
    grammar: Grammar,
    vocab: Vocabulary,
    limits: Limits,
    source: str = "grammar",
    terminals: TerminalCache | None = None,
    deadline: float | None = None,
    meter: _core.MemoryMeter | None = None,
) -> CompiledGrammar:
    """Lower ``grammar`` and build its automata and parser tables for ``vocab``; past
    ``deadline`` (``time.monotonic()``; default: ``limits.max_compile_seconds`` from now) it
    stops with :class:`LimitExceeded`. ``meter`` (a native ``MemoryMeter``) is told how the
    grammar's mask cache and head indexes grow."""
    started = time.perf_counter()
    cache = terminals if terminals is not None else TerminalCache.shared(vocab, limits)

    lowered = lower_grammar(
        grammar,
        cache.get,
        limits,
        cache.get_counted,
        cache.get_counted_units,
        deadline,
        cache.fragment,
        cache.native_terminals,
    )
    try:
        native = native_grammar(lowered, cache, limits, meter)
    except EmptyLanguageError as e:
        raise EmptyLanguageError(f"{source}: {e}") from None
    elapsed = time.perf_counter() - started
    counted = 0
    for t in lowered.terminals:  # a loop, not sum() over a generator: less code to run cold
        if type(t) is _core.CountedTerminal:
            counted += 1
    stats = GrammarStats(
        len(lowered.terminals),
        native.num_dfa_states,
        native.num_productions,
        lowered.num_nonterminals,
        native.memory_bytes(),
        elapsed,
        counted,
    )
    return CompiledGrammar(native, vocab, stats, limits, source)
