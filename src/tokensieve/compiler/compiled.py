"""Build the native ``CompiledGrammar`` from the IR: lowering, automata, parser tables."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _core
from ..errors import EmptyLanguageError, LimitExceeded
from ..ir import Grammar
from ..limits import Limits
from ..vocabulary import Vocabulary
from .lower import OP_DIFFERENCE, Fragment, lower
from .native_vocab import native_vocabulary, string_slice

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
        return self.stats.memory_bytes

    def __repr__(self) -> str:
        s = self.stats
        return (
            f"<CompiledGrammar {self.source}: {s.terminals} terminals, {s.dfa_states} DFA states, "
            f"{s.productions} productions, {s.memory_bytes} bytes>"
        )


def _native_limits(limits: Limits) -> Any:
    native = _core.MatcherLimits()
    native.max_mask_work = limits.max_mask_work
    native.max_accept_work = limits.max_accept_work
    native.max_jump_forward_bytes = limits.max_jump_forward_bytes
    native.mask_cache_bytes = limits.mask_cache_bytes
    return native


class TerminalCache:
    """Terminal automata and their per-state token indexes, shared by every grammar compiled
    for one vocabulary and limits (see :meth:`shared`): the whitespace, number and string
    terminals of every schema are built and indexed once per process.

    Keyed by (regex program, state budget), or by the pieces of a counted terminal; ``None``
    records "too large for that budget" (or "no counter for these pieces").
    Least recently used entries go first past ``max_entries``.
    """

    _shared: OrderedDict[tuple[str, Limits], TerminalCache] = OrderedDict()
    _shared_lock = threading.Lock()

    @classmethod
    def shared(cls, vocab: Vocabulary, limits: Limits) -> TerminalCache:
        """The process-wide cache for (vocabulary, limits); a few are kept, LRU."""
        key = (vocab.fingerprint, limits)
        with cls._shared_lock:
            hit = cls._shared.get(key)
            if hit is not None:
                cls._shared.move_to_end(key)
                return hit
        cache = cls(vocab, limits)
        with cls._shared_lock:
            cache = cls._shared.setdefault(key, cache)
            while len(cls._shared) > 4:
                cls._shared.popitem(last=False)
        return cache

    def __init__(self, vocab: Vocabulary, limits: Limits, max_entries: int = 4096) -> None:
        self.native_vocab = native_vocabulary(vocab)
        self.slice = string_slice(vocab)
        self.limits = limits
        self.max_entries = max_entries
        # Keys: (program, state budget, subset cap) for DFAs; ("fragment", rule, rules) for
        # lowered rule sets; ("counted", prefix, item, min, max, suffix) and ("units", ...) for
        # counted terminals; ("dfa", program, budget) for the DFAs of their pieces.
        self._entries: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, program: bytes, max_states: int, subset_cap: int) -> Any:
        """The DfaTokenIndex for ``program``, or None when its minimized DFA exceeds
        ``max_states`` or its subset construction ``subset_cap`` (at least ``max_states``:
        the lowering decides the slack, see ``_Lowering.try_terminal``)."""

        def build() -> Any:
            try:
                dfa = self._dfa(program, subset_cap)
            except LimitExceeded as e:
                if e.limit == "max_nfa_states" and max_states >= self.limits.max_dfa_states:
                    raise
                return None
            if dfa.num_states > max_states:
                return None
            return _core.DfaTokenIndex(dfa, self.native_vocab, self.slice, self.limits.max_boundary_nodes)

        return self._remembered((program, max_states, subset_cap), build)

    def get_counted(
        self,
        prefix: bytes | None,
        item: bytes,
        min_count: int,
        max_count: int | None,
        suffix: bytes | None,
    ) -> Any:
        """A native ``CountedTerminal`` for ``prefix item{min_count,max_count} suffix`` (regex
        programs; None: the empty string), or None when the pieces do not suit a counter (too
        large, or not deterministic as a loop: see ``cpp/include/tokensieve/counted.hpp``)."""
        budget = self.limits.max_terminal_states

        def dfa(program: bytes | None) -> Any:
            return None if program is None else self._piece(program, budget)

        def build() -> Any:
            try:
                return _core.CountedTerminal(
                    dfa(prefix),
                    dfa(item),
                    min_count,
                    -1 if max_count is None else max_count,
                    dfa(suffix),
                    self.native_vocab,
                    self.slice,
                    self.limits.max_boundary_nodes,
                )
            except LimitExceeded:
                return None
            except ValueError:  # the pieces do not make a deterministic loop: the parser repeats the item
                return None

        key = ("counted", prefix, item, min_count, max_count, suffix)
        return self._remembered(key, build)

    def get_counted_units(
        self,
        prefix: bytes | None,
        units: tuple[tuple[bool, ...], tuple[tuple[int, int, bytes], ...]],
        min_count: int,
        max_count: int | None,
        suffix: bytes | None,
    ) -> Any:
        """A native ``CountedTerminal`` for ``prefix`` + a path of min_count..max_count edges
        through a unit automaton (``units``: accepting flags, and edges ``(from, to, label
        program)``) + ``suffix``, or None when the automaton does not suit a counter (see
        ``CountedTerminal.from_units``)."""
        accepting, edges = units
        budget = self.limits.max_terminal_states

        def build() -> Any:
            try:
                labels = {program: self._piece(program, budget) for _, _, program in edges}
                return _core.CountedTerminal.from_units(
                    None if prefix is None else self._piece(prefix, budget),
                    list(accepting),
                    [(s, t, labels[program]) for s, t, program in edges],
                    min_count,
                    -1 if max_count is None else max_count,
                    None if suffix is None else self._piece(suffix, budget),
                    self.native_vocab,
                    self.slice,
                    self.limits.max_boundary_nodes,
                )
            except (LimitExceeded, ValueError):  # too large, or not a deterministic length-monotone loop
                return None

        key = ("units", prefix, units, min_count, max_count, suffix)
        return self._remembered(key, build)

    def fragment(self, key: tuple[Any, ...], make: Callable[[], Fragment]) -> Fragment:
        """The lowered rule set stored under ``key`` (made by ``make`` when missing): see
        :class:`~tokensieve.compiler.lower.Fragment`. Its terminals are entries of this cache,
        so it is valid for this vocabulary and these limits only, as the cache is."""
        fragment: Fragment = self._remembered(key, make)
        return fragment

    def _dfa(self, program: bytes, max_states: int) -> Any:
        words = np.frombuffer(program, dtype=np.int32)  # a view: no copy
        if words[0] == OP_DIFFERENCE:
            # "Any key but these" in every object schema: its left operand, the JSON string, is
            # the same each time, so the operands are built through the cache and only their
            # product is new.
            split = 4 * _core.program_node_end(words, 1)
            left = self._piece(program[4:split], max_states)
            right = self._piece(program[split:], max_states)
            return _core.dfa_product(left, right, "minus", max_states)
        return _core.build_dfa(words, self.limits.max_nfa_states, max_states)

    def _piece(self, program: bytes, max_states: int) -> Any:
        """The DFA of a part of a terminal, remembered with the terminals: a difference's
        operand, or a counted terminal's prefix, item, unit label or suffix. The same pieces
        recur: the JSON string left of every "any other key", and the labels of a word-count
        pattern's units (one schema asked for 359 label DFAs, 42 of them distinct)."""
        return self._remembered(("dfa", program, max_states), lambda: self._dfa(program, max_states))

    def _remembered(self, key: tuple[Any, ...], build: Callable[[], Any]) -> Any:
        """The entry for ``key``, built outside the lock on a miss (None is an entry too)."""
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        entry = build()
        with self._lock:
            self._entries[key] = entry
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return entry


def compile_grammar(
    grammar: Grammar,
    vocab: Vocabulary,
    limits: Limits,
    source: str = "grammar",
    terminals: TerminalCache | None = None,
    deadline: float | None = None,
) -> CompiledGrammar:
    """Lower ``grammar`` and build its automata and parser tables for ``vocab``; past
    ``deadline`` (``time.monotonic()``; default: ``limits.max_compile_seconds`` from now) it
    stops with :class:`LimitExceeded`."""
    started = time.perf_counter()
    cache = terminals if terminals is not None else TerminalCache.shared(vocab, limits)

    lowered = lower(
        grammar, cache.get, limits, cache.get_counted, cache.get_counted_units, deadline, cache.fragment
    )
    try:
        native = _core.CompiledGrammar(
            cache.native_vocab,
            lowered.terminals,
            lowered.num_nonterminals,
            lowered.productions,
            lowered.start,
            _native_limits(limits),
            lowered.unordered,
        )
    except EmptyLanguageError as e:
        raise EmptyLanguageError(f"{source}: {e}") from None
    elapsed = time.perf_counter() - started
    dfa_states = native.num_dfa_states
    stats = GrammarStats(
        terminals=len(lowered.terminals),
        dfa_states=dfa_states,
        productions=native.num_productions,
        nonterminals=lowered.num_nonterminals,
        memory_bytes=native.memory_bytes(),
        compile_seconds=elapsed,
        counted_terminals=sum(isinstance(t, _core.CountedTerminal) for t in lowered.terminals),
    )
    return CompiledGrammar(native, vocab, stats, limits, source)
