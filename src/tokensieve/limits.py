"""Every resource limit in one place, with its default and what hitting it costs.

A limit that is hit raises :class:`tokensieve.LimitExceeded` whose ``limit`` attribute
names the field below; nothing hangs and nothing is silently truncated.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Limits"]


@dataclass(frozen=True)
class Limits:
    """Resource limits for compiling grammars and computing masks.

    Compile-time limits:

    - ``max_terminal_states``: the compiler turns regular parts of a grammar into one byte
      automaton when it has at most this many states, and splits larger ones into smaller
      automata joined by parser rules. Larger values mean fewer parser steps per mask but
      more memory per grammar; this is a tuning knob, never an error.
    - ``max_dfa_states``: hard cap for one automaton that cannot be split further (a single
      huge bounded repetition such as ``[a-z]{0,1000000}``).
    - ``max_nfa_states``: cap on the intermediate automaton (bounded repetitions unrolled).
    - ``max_productions``: cap on parser rules after lowering (e.g. nested ``{m,n}`` of
      non-regular parts).
    - ``max_total_dfa_states``: cap on the states of all automata of one grammar (memory:
      about 4 bytes x byte classes per state).
    - ``min_counted_repeat``: a repetition whose bound (its maximum, or its minimum when it
      has none) is at least this runs as a *counted terminal*, the automaton of one item plus
      a counter, when its item allows (prefix-free, e.g. one JSON string character): its size
      and its token index then do not grow with the bound. A tuning knob, never an error.
    - ``max_boundary_nodes``: where a terminal may end part-way through tokens at more
      vocabulary-trie nodes than this, a token-index entry keeps the tokens' suffixes after
      those points grouped by first byte (built when the parser first allows that byte) rather
      than the nodes themselves. A tuning knob, never an error.
    - ``max_grammar_depth``: nesting depth of a grammar's expressions (non-recursive rule
      references followed into their bodies). The compiler walks expressions recursively, in
      code compiled to C, so the depth is bounded where the native stack is safe; a JSON Schema
      nested a hundred levels deep needs about 500.
    - ``max_compile_seconds``: wall-clock budget for compiling one grammar through a
      :class:`Compiler`: the front-end (a JSON Schema's conversion) and the lowering and
      automata together.

    Run-time limits (per matcher):

    - ``max_mask_work``: parser items created while computing one mask. Bounds the tail
      latency of pathological, highly ambiguous grammars.
    - ``max_accept_work``: parser items created while accepting one token or byte string.
    - ``max_jump_forward_bytes``: longest forced continuation :meth:`Matcher.jump_forward`
      returns.
    - ``min_head_index_nodes``: where a mask walk below a trie node holds only scans of
      terminals (the letters of an identifier after a space), subtrees of at least this many
      nodes are judged from a per-(node, terminal state) *head index* built once per grammar
      (``cpp/include/tokensieve/head_index.hpp``); smaller ones step the terminals' automata
      node by node. A tuning knob, never an error.

    Cache:

    - ``cache_bytes``: memory the :class:`Compiler` cache may hold for compiled grammars:
      their compile-time size plus what their mask caches and head indexes have grown to
      since (the growth of every grammar the cache handed out that is still alive counts,
      so a grammar kept by a matcher after its eviction is still paid for). Least recently
      used grammars go first; the newest one always stays.
    - ``mask_cache_bytes``: memory each compiled grammar may use to remember masks by parser
      state (shared by its matchers; cleared when full). Masks for a 128k vocabulary are
      16 KiB each.
    - ``head_index_bytes``: memory each compiled grammar may use for head indexes (see
      ``min_head_index_nodes``); past it, walks step node by node where no index was built.
    """

    max_terminal_states: int = 2_000
    max_dfa_states: int = 200_000
    max_nfa_states: int = 2_000_000
    max_productions: int = 1_000_000
    max_total_dfa_states: int = 1_000_000
    max_grammar_depth: int = 2_000
    min_counted_repeat: int = 8
    max_boundary_nodes: int = 256
    max_compile_seconds: float = 30.0
    max_mask_work: int = 50_000_000
    max_accept_work: int = 5_000_000
    max_jump_forward_bytes: int = 4_096
    cache_bytes: int = 512 * 1024 * 1024
    mask_cache_bytes: int = 32 * 1024 * 1024
    min_head_index_nodes: int = 64
    head_index_bytes: int = 32 * 1024 * 1024

    def __post_init__(self) -> None:
        for name, value in self.__dict__.items():
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"Limits.{name} must be a positive number, got {value!r}")
