"""Build the native ``CompiledGrammar`` from the IR: lowering, automata, parser tables."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _core
from ..errors import EmptyLanguageError, LimitExceeded
from ..ir import Grammar
from ..limits import Limits
from ..vocabulary import Vocabulary
from .lower import lower
from .native_vocab import native_vocabulary

__all__ = ["CompiledGrammar", "GrammarStats", "compile_grammar"]


@dataclass(frozen=True)
class GrammarStats:
    """What compiling one grammar produced and cost."""

    terminals: int
    dfa_states: int
    productions: int
    nonterminals: int
    memory_bytes: int
    compile_seconds: float


class CompiledGrammar:
    """An immutable compiled grammar for one vocabulary; share it freely across threads.

    Make a :class:`tokensieve.Matcher` per sequence from it.
    """

    def __init__(self, native: Any, vocab: Vocabulary, stats: GrammarStats, limits: Limits, source: str) -> None:
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
    return native


def compile_grammar(grammar: Grammar, vocab: Vocabulary, limits: Limits, source: str = "grammar") -> CompiledGrammar:
    """Lower ``grammar`` and build its automata and parser tables for ``vocab``."""
    started = time.perf_counter()

    def build(program: list[int], max_states: int) -> Any:
        try:
            return _core.build_dfa(np.asarray(program, dtype=np.int32), limits.max_nfa_states, max_states)
        except LimitExceeded as e:
            if e.limit == "max_nfa_states" and max_states >= limits.max_dfa_states:
                raise
            return None

    lowered = lower(grammar, build, limits)
    try:
        native = _core.CompiledGrammar(
            native_vocabulary(vocab),
            lowered.terminals,
            lowered.num_nonterminals,
            lowered.productions,
            lowered.start,
            _native_limits(limits),
        )
    except EmptyLanguageError as e:
        raise EmptyLanguageError(f"{source}: {e}") from None
    elapsed = time.perf_counter() - started
    dfa_states = sum(t.num_states for t in lowered.terminals if not isinstance(t, int))
    stats = GrammarStats(
        terminals=len(lowered.terminals),
        dfa_states=dfa_states,
        productions=native.num_productions,
        nonterminals=lowered.num_nonterminals,
        memory_bytes=native.memory_bytes(),
        compile_seconds=elapsed,
    )
    return CompiledGrammar(native, vocab, stats, limits, source)
