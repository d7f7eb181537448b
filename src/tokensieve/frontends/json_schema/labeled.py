"""Automata whose edges carry IR expressions, and the ways back from them to the IR.

A :class:`LabeledGraph` is what :meth:`.automata.DFA.labeled` gives (edge labels are byte
sets) or what a character-level automaton becomes once its labels are JSON spellings of
characters (:mod:`.strings`). It turns into one regular expression by state elimination,
into a byte-level :class:`~tokensieve.ir.Automaton`, or into left-linear rules.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from ...ir import EMPTY, NOTHING, Alt, Automaton, Bytes, Expr, Grammar, Ref, Repeat, Seq, alt, seq
from .nfa import MAX_NFA_STATES, NFA, Fragment

__all__ = ["MAX_ELIMINATION_EDGES", "LabeledGraph", "byte_set"]


@lru_cache(maxsize=4096)
def byte_set(ranges: tuple[tuple[int, int], ...]) -> Bytes:
    """``Bytes.of(ranges)``, remembered: automata repeat a few edge labels thousands of times."""
    return Bytes.of(ranges)


# State elimination's helpers are module functions, not closures inside
# LabeledGraph.to_expr: closures that call each other are a reference cycle, which would keep
# the expressions alive until the garbage collector runs.


def _link(out: dict[int, dict[int, Expr]], into: dict[int, set[int]], p: int, q: int, e: Expr) -> None:
    """Add ``e`` to the label of the edge p -> q (as an alternative to the one there)."""
    old = out[p].get(q)
    out[p][q] = e if old is None else alt(old, e)
    into[q].add(p)


def _elimination_cost(out: dict[int, dict[int, Expr]], into: dict[int, set[int]], x: int) -> int:
    """The number of edges eliminating state x creates."""
    return (len(into[x]) - (x in into[x])) * (len(out[x]) - (x in out[x]))


def _node_count(e: Expr, sizes: dict[int, tuple[Expr, int]]) -> int:
    """Nodes of ``e`` counted as a tree, remembered per object in ``sizes``."""
    hit = sizes.get(id(e))
    if hit is not None and hit[0] is e:
        return hit[1]
    if isinstance(e, (Seq, Alt)):
        nodes = 1 + sum(_node_count(item, sizes) for item in e.items)
    elif isinstance(e, Repeat):
        nodes = 1 + _node_count(e.item, sizes)
    else:
        nodes = 1
    sizes[id(e)] = (e, nodes)
    return nodes


# State elimination is worth its cost for small graphs only. Its expression holds every edge
# label at least once and usually many times over (each eliminated state multiplies its in-
# and out-edges), and the compiler turns an expression and an Automaton node into the same
# DFA, so past this many edges the graph goes straight to an automaton. Measured over the
# MaskBench dev split (every to_expr call while converting its 3563 schemas): no graph of more
# than 210 edges fitted the 4000-node budget, and the 224 attempts that did not fit cost
# ten times what the 739 that did cost (most of them hundreds of edges, up to 9 ms each in
# the development tree: the residue automata of multipleOf after a subtraction).
MAX_ELIMINATION_EDGES: Final = 256


_LaidRow = tuple[tuple[Bytes, int], ...]


class _Layout:
    """A label's minimal DFA as :meth:`LabeledGraph._laid_out` places it: the grouped edges of
    its start (``start``) and of each inner state (``inner``), each edge a byte set and a
    destination: an inner state's index, or -1 for the end of a word (the edge's target)."""

    def __init__(self, start: _LaidRow, inner: list[_LaidRow]) -> None:
        self.start = start
        self.inner = inner

    @staticmethod
    def of(label: Expr) -> _Layout | None:
        """The layout of ``label``; None when it has the empty word, a word that extends
        another, or no DFA here (too large, or not regular)."""
        from .automata import dfa_from_expr  # (automata builds on this module)
        from .nfa import NotRegular

        try:
            dfa = dfa_from_expr(label)
        except (OverflowError, NotRegular):
            return None
        rows, accept = dfa.label_rows(), dfa.accept
        if accept[0] or any(rows[q] for q, final in enumerate(accept) if final):
            return None
        index: dict[int, int] = {}  # DFA state -> inner index (the start too, if re-entered)
        order: list[int] = []
        start = _laid_row(rows[0], accept, index, order)
        inner: list[_LaidRow] = []
        while len(inner) < len(order):
            inner.append(_laid_row(rows[order[len(inner)]], accept, index, order))
        return _Layout(start, inner)


def _laid_row(
    row: list[tuple[int, Bytes]], accept: tuple[bool, ...], index: dict[int, int], order: list[int]
) -> _LaidRow:
    """One row of :meth:`~.automata.DFA.label_rows` as a :class:`_Layout` row: each target
    becomes a destination, inner states numbered (in ``index`` and ``order``) as they are
    first met. (A minimal DFA whose accepting states have no edges has one accepting state,
    so the groups by target are the groups by destination.)"""
    out: list[tuple[Bytes, int]] = []
    for t, label in row:
        if accept[t]:
            k = -1
        else:
            k = index.setdefault(t, len(order))
            if k == len(order):
                order.append(t)
        out.append((label, k))
    return tuple(out)


@dataclass
class LabeledGraph:
    """An automaton whose edges carry IR expressions; state 0 starts.

    Edge labels may be any regular expressions (e.g. "one JSON-escaped character from
    this set"), which is how a character-level automaton becomes JSON string syntax.
    """

    edges: list[dict[int, Expr]]
    accept: list[bool]

    def to_expr(self, budget: int = 4000) -> Expr | None:
        """A regular expression by state elimination, or None past ``budget`` nodes (or
        past :data:`MAX_ELIMINATION_EDGES` edges, without trying)."""
        n = len(self.accept)
        edges = sum(len(row) for row in self.edges)
        if edges > min(budget, MAX_ELIMINATION_EDGES):
            # Every edge label of a trimmed automaton survives into the expression at least
            # once, so past the budget it cannot fit; the elimination itself is quadratic in
            # the states, and past the edge bound it does not fit in practice either.
            return None
        init, final = n, n + 1
        out: dict[int, dict[int, Expr]] = {s: {} for s in range(n + 2)}
        into: dict[int, set[int]] = {s: set() for s in range(n + 2)}
        _link(out, into, init, 0, EMPTY)
        for s in range(n):
            for t, label in self.edges[s].items():
                _link(out, into, s, t, label)
            if self.accept[s]:
                _link(out, into, s, final, EMPTY)

        # States go cheapest first, ties by number. The heap may hold outdated costs: an
        # entry counts only while it matches the state's current cost, and every change
        # pushes a fresh one, so the pick is the same as a scan over all remaining states.
        # Sizes of the subexpressions met so far, by object (kept alive by the entry): each
        # new edge expression shares its parts with older ones.
        sizes: dict[int, tuple[Expr, int]] = {}
        remaining = set(range(n))
        heap = [(_elimination_cost(out, into, x), x) for x in range(n)]
        heapq.heapify(heap)
        total = 0
        while remaining:
            c, s = heapq.heappop(heap)
            if s not in remaining or c != _elimination_cost(out, into, s):
                continue
            remaining.discard(s)
            neighbours = (into[s] | out[s].keys()) & remaining
            loop = out[s].pop(s, None)
            into[s].discard(s)
            star = Repeat(loop, 0, None) if loop is not None else EMPTY
            for p in into[s]:
                head = out[p].pop(s)
                for q, tail in out[s].items():
                    e = seq(head, star, tail)
                    total += _node_count(e, sizes)
                    if total > budget:
                        return None
                    _link(out, into, p, q, e)
            for q in out[s]:
                into[q].discard(s)
            out[s] = {}
            into[s] = set()
            for x in neighbours:
                heapq.heappush(heap, (_elimination_cost(out, into, x), x))
        return out[init].get(final, NOTHING)

    def to_automaton(self) -> Automaton:
        """The language as a byte-level :class:`~tokensieve.ir.Automaton` (labels expanded).

        Where every label is a set of non-empty words none of which is a prefix of another
        (the JSON spellings of one character are), each label's minimal DFA is laid out once
        per (label, target state) (:meth:`_laid_out`); otherwise the labels are expanded
        through a Thompson NFA (:meth:`_through_nfa`)."""
        laid_out = self._laid_out()
        return laid_out if laid_out is not None else self._through_nfa()

    def _laid_out(self) -> Automaton | None:
        """The automaton whose states are this graph's, plus one copy of a label DFA's inner
        states per (label, target) pair: an edge s -> t labelled L leaves s on the bytes that
        leave L's start, and a byte that completes a word of L enters t. That is exact when L
        has no empty word and no word extends another (its accepting states then have no
        edges, and t takes their place); None when a label is not so, or has no DFA here.

        Sources of one target share the copy (the rest of a word of L, once begun, does not
        depend on where it began). The NFA route built a Thompson fragment per edge and took
        epsilon closures in Python: 43% of Snowplow sp_330's front-end, for one length
        product of a pattern."""
        layouts: dict[int, _Layout | None] = {}
        first_inner: dict[tuple[int, int], int] = {}  # (id(label), target) -> its first inner state
        copies: list[tuple[_Layout, int, int]] = []  # (layout, target, first inner state)
        size = len(self.accept)
        rows: list[tuple[bool, _LaidRow]] = []
        for s, row in enumerate(self.edges):
            out: list[tuple[Bytes, int]] = []
            for t, label in row.items():
                key = id(label)
                if key in layouts:
                    layout = layouts[key]
                else:
                    layout = layouts[key] = _Layout.of(label)
                if layout is None:
                    return None
                base = first_inner.get((key, t))
                if base is None:
                    base = first_inner[(key, t)] = size
                    size += len(layout.inner)
                    if size > MAX_NFA_STATES:
                        raise OverflowError("automaton too large")
                    copies.append((layout, t, base))
                out.extend((b, t if k < 0 else base + k) for b, k in layout.start)
            rows.append((self.accept[s], tuple(out)))
        for layout, t, base in copies:
            for inner in layout.inner:
                rows.append((False, tuple((b, t if k < 0 else base + k) for b, k in inner)))
        return Automaton.of(rows)

    def _through_nfa(self) -> Automaton:
        """:meth:`to_automaton` for any labels: a Thompson NFA of the whole graph, then its
        epsilon edges removed."""
        nfa = NFA()
        fragments: dict[int, Fragment] = {}  # labels repeat (one escape set on many edges)
        states = [nfa.state() for _ in self.accept]
        final = nfa.state()
        for s, row in enumerate(self.edges):
            for t, label in row.items():
                nfa.add_copy(label, states[s], states[t], fragments)
            if self.accept[s]:
                nfa.eps[states[s]].append(final)
        # Epsilon removal, no determinization: the compiler determinizes anyway, and a
        # subset construction here can blow up (every state has its own escape branches).
        # Only the states some byte edge enters (and the start) become automaton states,
        # so closures are taken for those alone, not for every NFA state.
        index = {states[0]: 0}
        order = [states[0]]
        rows = []
        i = 0
        while i < len(order):
            s = order[i]
            i += 1
            # Most states entered by a byte have no epsilon edge: their closure is themselves.
            closure: frozenset[int] | tuple[int] = nfa.closure([s]) if nfa.eps[s] else (s,)
            groups: dict[int, list[tuple[int, int]]] = {}
            for c in closure:
                for lo, hi, t in nfa.edges[c]:
                    if t not in index:
                        index[t] = len(order)
                        order.append(t)
                    groups.setdefault(index[t], []).append((lo, hi))
            rows.append((final in closure, tuple((byte_set(tuple(r)), t) for t, r in groups.items())))
        return Automaton.of(rows)

    def to_ir(self, grammar: Grammar, hint: str, budget: int = 4000) -> Expr:
        """The language as one expression when small enough, else as an automaton.

        Both are regular, so the compiler builds one DFA either way; the automaton avoids
        the blow-up of state elimination (and per-character parser rules).
        """
        expr = self.to_expr(budget)
        if expr is not None:
            return expr
        try:
            return self.to_automaton()
        except OverflowError:  # too many byte-level states: left-linear rules stay exact
            return self.to_rules(grammar, hint)

    def to_rules(self, grammar: Grammar, hint: str) -> Ref:
        """One rule per state, plus one for the language: exact, whatever the size.

        The grammar is left-linear: state t's rule derives the strings that lead from the
        start to t (``P(t) ::= P(s) label`` per edge s -> t, and the empty string for the
        start), and the language is the union of the accepting states' rules. For an Earley
        parser every item of such a rule keeps the origin where the string began, so a step
        costs the same at the 200th character as at the first. Right-linear rules
        (``L(s) ::= label L(t)``) would leave one item per character read, and wherever the
        string may end (an email address after its ``@``) every byte would complete that
        whole chain: mask time grew with the position in the string.
        """
        # One scan for a free prefix, then numbered states (Grammar.fresh_name scans from 1
        # each time: quadratic over thousands of states).
        prefix = grammar.fresh_name(f"{hint}_dfa")
        grammar.rules[prefix] = NOTHING
        names = []
        for i in range(len(self.accept) + 1):  # the last one is the language's
            name = f"{prefix}_{i}"
            if name in grammar.rules:
                name = grammar.fresh_name(name)
            grammar.rules[name] = NOTHING  # reserve the name
            names.append(name)
        del grammar.rules[prefix]  # only reserved the prefix while numbering
        into: list[list[Expr]] = [[] for _ in self.accept]
        into[0].append(EMPTY)
        for s, row in enumerate(self.edges):
            for t, label in row.items():
                into[t].append(seq(Ref(names[s]), label))
        for t, options in enumerate(into):
            grammar.rules[names[t]] = alt(*options) if options else NOTHING
        accepting = [Ref(names[t]) for t, accept in enumerate(self.accept) if accept]
        grammar.rules[names[-1]] = alt(*accepting) if accepting else NOTHING
        return Ref(names[-1])
