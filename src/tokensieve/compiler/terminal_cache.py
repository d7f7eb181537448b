"""The terminal cache: terminal automata and their token indexes, kept per vocabulary and
limits and shared by every grammar compiled for them.

Its own module so that it is compiled with the lowering (see ``scripts/mypyc_generate.py``):
the lowering asks it for every terminal of every compile.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final

import numpy as np

from .. import _core
from ..errors import LimitExceeded
from ..ir import MAX_COUNT
from ..limits import Limits
from ..program import OP_DIFFERENCE, native_max_count
from ..vocabulary import Vocabulary
from .lower import Fragment
from .native_vocab import native_vocabulary, string_slice

__all__ = ["TerminalCache", "native_matcher_limits"]


class TerminalCache:
    """Terminal automata and their per-state token indexes, shared by every grammar compiled
    for one vocabulary and limits (see :meth:`shared`): the whitespace, number and string
    terminals of every schema are built and indexed once per process.

    Keyed by (regex program, state budget), or by the pieces of a counted terminal; ``None``
    records "too large for that budget" (or "no counter for these pieces").
    Least recently used entries go first past ``max_entries``.
    """

    @staticmethod
    def shared(vocab: Vocabulary, limits: Limits) -> TerminalCache:
        """The process-wide cache for (vocabulary, limits); a few are kept, LRU."""
        key = (vocab.fingerprint, limits)
        with _shared_lock:
            hit = _shared.get(key)
            if hit is not None:
                _shared.move_to_end(key)
                return hit
        cache = TerminalCache(vocab, limits)
        with _shared_lock:
            cache = _shared.setdefault(key, cache)
            while len(_shared) > 4:
                _shared.popitem(last=False)
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
        self._lefts: tuple[bytes, ...] = ()  # the last left operands of differences met
        self._lock = threading.Lock()
        # The native lowering's view of this cache's DFA terminals (see native_lower): found
        # there, a terminal every schema has costs no call into Python.
        self.native_terminals = _core.TerminalMemo(max_entries)
        # The matcher limits every grammar built over this cache's terminals gets (the native
        # grammar copies them): made once, not at each compile.
        self.native_limits = native_matcher_limits(limits)

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
        native_max = native_max_count(max_count)

        def build() -> Any:
            if min_count > MAX_COUNT:  # no counter: the lowering's other ways refuse it
                return None
            try:
                return _core.CountedTerminal(
                    self._optional_piece(prefix, budget),
                    self._optional_piece(item, budget),
                    min_count,
                    native_max,
                    self._optional_piece(suffix, budget),
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
        native_max = native_max_count(max_count)

        def build() -> Any:
            if min_count > MAX_COUNT:  # no counter: the lowering's other ways refuse it
                return None
            try:
                labels = {program: self._piece(program, budget) for _, _, program in edges}
                return _core.CountedTerminal.from_units(
                    None if prefix is None else self._piece(prefix, budget),
                    list(accepting),
                    [(s, t, labels[program]) for s, t, program in edges],
                    min_count,
                    native_max,
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
            # the same each time, so it is built through the cache and only the names and the
            # product are new. A left operand met before is recognized by its words (programs
            # are prefix codes: a node's words decide where it ends), not found again by
            # parsing the whole program, and looked up by the bytes remembered for it (whose
            # hash Python keeps), not a copy hashed anew. The right operand is built without
            # the cache: its names recur with their whole difference, which the cache holds
            # already, and storing them would only push useful entries out.
            left = next((known for known in self._lefts if program.startswith(known, 4)), None)
            if left is None:
                left = program[4 : 4 * _core.program_node_end(words, 1)]
                with self._lock:
                    self._lefts = (left, *self._lefts[:3])
            left_dfa = self._piece(left, max_states)
            right_dfa = _core.build_dfa(words[1 + len(left) // 4 :], self.limits.max_nfa_states, max_states)
            return _core.dfa_product(left_dfa, right_dfa, "minus", max_states)
        return _core.build_dfa(words, self.limits.max_nfa_states, max_states)

    def _piece(self, program: bytes, max_states: int) -> Any:
        """The DFA of a part of a terminal, remembered with the terminals: a difference's left
        operand, or a counted terminal's prefix, item, unit label or suffix. The same pieces
        recur: the JSON string left of every "any other key", and the labels of a word-count
        pattern's units (one schema asked for 359 label DFAs, 42 of them distinct)."""
        return self._remembered(("dfa", program, max_states), lambda: self._dfa(program, max_states))

    def _optional_piece(self, program: bytes | None, max_states: int) -> Any:
        """:meth:`_piece`, or None for no program (the empty string)."""
        return None if program is None else self._piece(program, max_states)

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


def native_matcher_limits(limits: Limits) -> Any:
    """The native ``MatcherLimits`` for ``limits``."""
    native = _core.MatcherLimits()
    native.max_mask_work = limits.max_mask_work
    native.max_accept_work = limits.max_accept_work
    native.max_jump_forward_bytes = limits.max_jump_forward_bytes
    native.mask_cache_bytes = limits.mask_cache_bytes
    native.head_index_bytes = limits.head_index_bytes
    native.min_head_index_nodes = limits.min_head_index_nodes
    return native


# The process-wide caches (see TerminalCache.shared), a few, least recently used first out.
_shared: Final[OrderedDict[tuple[str, Limits], TerminalCache]] = OrderedDict()
_shared_lock: Final = threading.Lock()
