"""Thompson NFAs over bytes: how a regular IR expression first becomes an automaton.

:class:`NFA` adds the paths of an expression between two states (byte-range edges plus
epsilon edges); :mod:`.automata` determinizes it in the native DFA builder, and
:mod:`.labeled` expands edge labels with it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from ...ir import (
    Alt,
    Automaton,
    Bytes,
    CountedAutomaton,
    Difference,
    Expr,
    Ref,
    Repeat,
    Seam,
    Seq,
    Special,
    Unordered,
)

__all__ = ["NFA", "Edge", "Fragment", "NotRegular"]

Edge = tuple[int, int, int]  # (lo, hi, target), an inclusive byte range


class NotRegular(Exception):
    """The expression refers to a rule or a special token, so it has no byte DFA here."""


@dataclass
class Fragment:
    """What :meth:`NFA.add` of ``expr`` builds between states 0 and 1 of an empty NFA."""

    expr: Expr  # kept alive: fragments are looked up by its id
    edges: list[list[Edge]]
    eps: list[list[int]]


# The most states an automaton built here may have (past it: OverflowError, "too large").
MAX_NFA_STATES: Final = 200_000


class NFA:
    """Thompson NFA: byte-range edges plus epsilon edges."""

    def __init__(self, max_states: int = MAX_NFA_STATES) -> None:
        self.edges: list[list[Edge]] = []
        self.eps: list[list[int]] = []
        self.max_states = max_states

    def state(self) -> int:
        if len(self.edges) >= self.max_states:
            raise OverflowError("automaton too large")
        self.edges.append([])
        self.eps.append([])
        return len(self.edges) - 1

    def add_copy(self, expr: Expr, start: int, end: int, fragments: dict[int, Fragment]) -> None:
        """The same as :meth:`add`, faster when ``expr`` is added many times: the fragment
        :meth:`add` builds is recorded once per expression object (in ``fragments``, which
        must keep the expressions alive) and then replayed with its states renumbered.

        The replay is exact, state numbers and edge order included: :meth:`add` creates the
        inner states of one call consecutively, and appends edges whose source is ``start``
        or an inner state, never ``end``, so each list gets the same entries in the same order.
        """
        fragment = fragments.get(id(expr))
        if fragment is None:
            scratch = NFA(self.max_states)
            scratch.add(expr, scratch.state(), scratch.state())
            fragment = fragments[id(expr)] = Fragment(expr, scratch.edges, scratch.eps)
        inner = len(fragment.edges) - 2
        if len(self.edges) + inner > self.max_states:
            raise OverflowError("automaton too large")
        # Scratch state 0 is start, 1 is end, and the inner ones are numbered on from here.
        number = [start, end, *range(len(self.edges), len(self.edges) + inner)]
        self.edges.extend([] for _ in range(inner))
        self.eps.extend([] for _ in range(inner))
        for i, row in enumerate(fragment.edges):
            if row:
                self.edges[number[i]].extend([(lo, hi, number[t]) for lo, hi, t in row])
        for i, targets in enumerate(fragment.eps):
            if targets:
                self.eps[number[i]].extend([number[t] for t in targets])

    def add(self, expr: Expr, start: int, end: int) -> None:
        """Add paths from ``start`` to ``end`` that spell exactly ``expr``."""
        if isinstance(expr, Bytes):
            self.edges[start].extend((lo, hi, end) for lo, hi in expr.ranges)
        elif isinstance(expr, Seq):
            cur = start
            for i, item in enumerate(expr.items):
                nxt = end if i == len(expr.items) - 1 else self.state()
                self.add(item, cur, nxt)
                cur = nxt
            if not expr.items:
                self.eps[start].append(end)
        elif isinstance(expr, Seam):
            self.eps[start].append(end)
        elif isinstance(expr, Alt):
            for item in expr.items:
                self.add(item, start, end)
        elif isinstance(expr, Repeat):
            cur = start
            for _ in range(expr.min):
                nxt = self.state()
                self.add(expr.item, cur, nxt)
                cur = nxt
            if expr.max is None:
                loop = self.state()
                self.eps[cur].append(loop)
                self.add(expr.item, loop, loop)
                self.eps[loop].append(end)
            else:
                for _ in range(expr.max - expr.min):
                    nxt = self.state()
                    self.eps[cur].append(end)
                    self.add(expr.item, cur, nxt)
                    cur = nxt
                self.eps[cur].append(end)
        elif isinstance(expr, Automaton):
            inner = [self.state() for _ in expr.accepting]
            self.eps[start].append(inner[0])
            labels, targets, begin = expr.labels, expr.targets, expr.edge_begin
            for s, state in enumerate(inner):
                for i in range(begin[s], begin[s + 1]):
                    self.add(labels[i], state, inner[targets[i]])
                if expr.accepting[s]:
                    self.eps[state].append(end)
        elif isinstance(expr, (Ref, Special, Unordered, Difference, CountedAutomaton)):
            raise NotRegular(f"{type(expr).__name__} is not a regular byte expression")
        else:  # pragma: no cover - the Expr union is closed
            raise TypeError(f"not an IR expression: {expr!r}")

    def closure(self, states: Iterable[int]) -> frozenset[int]:
        seen = set(states)
        todo = list(seen)
        while todo:
            for t in self.eps[todo.pop()]:
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
        return frozenset(seen)
