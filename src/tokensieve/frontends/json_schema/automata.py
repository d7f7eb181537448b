"""Byte automata for the regular operations the grammar IR does not have.

The IR has concatenation, alternation and repetition, but JSON Schema also needs
*intersection* (``pattern`` together with ``minLength``, two ``pattern`` s in an
``allOf``) and *complement* (``additionalProperties`` keys = "any string except the
declared names", ``not``). This module turns a regular IR expression into a DFA over
bytes, performs those operations on DFAs, and turns the result back into the IR (the
Thompson NFA is in :mod:`.nfa`; edge-labelled graphs and the ways back, in :mod:`.labeled`).

Conventions: a :class:`DFA` is partial (a missing byte goes to an implicit dead state),
state 0 is the start state, and transitions are sorted, disjoint byte ranges.
Complement is taken relative to *valid UTF-8 strings* (:func:`utf8_strings`), since every
language here is a set of UTF-8 encoded texts.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from ...ir import Alt, Expr, Grammar, Repeat, Seq, codepoints
from .labeled import LabeledGraph, byte_set
from .nfa import NFA, Edge, NotRegular, split_targets

__all__ = ["DFA", "LabeledGraph", "NotRegular", "dfa_from_expr", "expr_size", "utf8_strings"]


# ----------------------------------------------------------------------------- DFA


@dataclass
class DFA:
    """A partial deterministic automaton over bytes; state 0 starts."""

    trans: list[list[Edge]]
    accept: list[bool]

    @property
    def size(self) -> int:
        return len(self.accept)

    # -- construction -------------------------------------------------------------

    @staticmethod
    def from_nfa(nfa: NFA, start: int, final: int, max_states: int = 20000) -> DFA:
        first = nfa.closure([start])
        index = {first: 0}
        order = [first]
        trans: list[list[Edge]] = []
        i = 0
        while i < len(order):
            cur = order[i]
            i += 1
            row: list[Edge] = []
            edges = [(lo, hi, t) for s in cur for lo, hi, t in nfa.edges[s]]
            for lo, hi, targets in split_targets(edges):  # type: ignore[arg-type]
                tgt = nfa.closure(targets)  # type: ignore[arg-type]
                if tgt not in index:
                    if len(order) >= max_states:
                        raise OverflowError("automaton too large")
                    index[tgt] = len(order)
                    order.append(tgt)
                _append(row, lo, hi, index[tgt])
            trans.append(row)
        return DFA(trans, [final in s for s in order]).minimize()

    # -- operations ---------------------------------------------------------------

    def intersect(self, other: DFA) -> DFA:
        return _remembered_product("and", self, other)

    def union(self, other: DFA) -> DFA:
        return _remembered_product("or", self, other)

    def minus(self, other: DFA) -> DFA:
        return _remembered_product("minus", self, other)

    def complement(self) -> DFA:
        """Valid UTF-8 strings not in this language."""
        return utf8_strings().minus(self)

    def _product(self, other: DFA, keep, complete: bool) -> DFA:  # type: ignore[no-untyped-def]
        # -1 stands for the dead state of a partial automaton.
        index = {(0, 0): 0}
        order = [(0, 0)]
        trans: list[list[Edge]] = []
        i = 0
        while i < len(order):
            p, q = order[i]
            i += 1
            rp = self.trans[p] if p >= 0 else []
            rq = other.trans[q] if q >= 0 else []
            row: list[Edge] = []
            for lo, hi, ta, tb in _overlay(rp, rq):
                if not complete and (ta < 0 or tb < 0):
                    continue
                key = (ta, tb)
                if key not in index:
                    index[key] = len(order)
                    order.append(key)
                _append(row, lo, hi, index[key])
            trans.append(row)
        accept = [keep(p >= 0 and self.accept[p], q >= 0 and other.accept[q]) for p, q in order]
        return DFA(trans, accept).minimize()

    def is_empty(self) -> bool:
        return not any(self.accept[s] for s in self._reachable())

    def _reachable(self) -> set[int]:
        seen = {0}
        todo = [0]
        while todo:
            for _, _, t in self.trans[todo.pop()]:
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
        return seen

    def minimize(self) -> DFA:
        """Trim (reachable and co-reachable states only) and merge equivalent states (Hopcroft)."""
        reach = self._reachable()
        rev: dict[int, set[int]] = {}
        for s in reach:
            for _, _, t in self.trans[s]:
                rev.setdefault(t, set()).add(s)
        live = {s for s in reach if self.accept[s]}
        todo = list(live)
        while todo:
            for p in rev.get(todo.pop(), ()):
                if p not in live:
                    live.add(p)
                    todo.append(p)
        if 0 not in live:
            return DFA([[]], [False])
        states = sorted(live)
        cls = _hopcroft(self, states, live)
        # Renumber so that the start state's class is 0.
        remap = {cls[0]: 0}
        for s in states:
            remap.setdefault(cls[s], len(remap))
        trans: list[list[Edge]] = [[] for _ in remap]
        accept = [False] * len(remap)
        done = set()
        for s in states:
            c = remap[cls[s]]
            if c in done:
                continue
            done.add(c)
            accept[c] = self.accept[s]
            for lo, hi, t in self.trans[s]:
                if t in live:
                    _append(trans[c], lo, hi, remap[cls[t]])
        return DFA(trans, accept)

    # -- back to the IR -------------------------------------------------------------

    def labeled(self) -> LabeledGraph:
        """This DFA as a graph whose edge labels are byte sets."""
        edges: list[dict[int, Expr]] = []
        for row in self.trans:
            groups: dict[int, list[tuple[int, int]]] = {}
            for lo, hi, t in row:
                groups.setdefault(t, []).append((lo, hi))
            edges.append({t: byte_set(tuple(r)) for t, r in groups.items()})
        return LabeledGraph(edges, list(self.accept))

    def to_ir(self, grammar: Grammar, hint: str) -> Expr:
        """This language back in the IR (what :meth:`LabeledGraph.to_ir` of :meth:`labeled`
        gives: one expression when small, else an automaton, else rules).

        The automaton is remembered for the expression it returns, so a later operation on
        that expression (a chain of subtractions, one ``not`` after another) starts from it
        instead of rebuilding it. That is exact, not just equivalent: a DFA that comes out of
        the operations here is minimal and numbered in breadth-first order with bytes
        ascending (subset and product construction discover states that way, and
        :meth:`minimize` keeps the first-found order of the classes), so one language has
        exactly one such DFA, the one :func:`dfa_from_expr` would build again.
        """
        expr = _regular_ir(self)
        if expr is None:  # too many byte-level states: left-linear rules stay exact
            return self.labeled().to_rules(grammar, hint)
        _remember(expr, self)
        return expr

    def finite_words(self, limit: int) -> list[bytes] | None:
        """All words when the language is finite with at most ``limit`` words, else None."""
        words: list[bytes] = []
        # A trimmed DFA is finite iff it has no cycle; a DFS with a path stack detects one.
        stack: list[tuple[int, bytes, frozenset[int]]] = [(0, b"", frozenset([0]))]
        while stack:
            s, word, path = stack.pop()
            if self.accept[s]:
                words.append(word)
                if len(words) > limit:
                    return None
            for lo, hi, t in self.trans[s]:
                if t in path:
                    return None
                if hi - lo > limit:
                    return None
                for b in range(lo, hi + 1):
                    stack.append((t, word + bytes([b]), path | {t}))
        return sorted(words)


def _hopcroft(dfa: DFA, states: list[int], live: set[int]) -> dict[int, int]:
    """Equivalence classes of the live states (Hopcroft's partition refinement).

    Byte ranges are first cut into the symbol classes no transition splits. Splitters are
    whole blocks, taken for every symbol at once through per-state predecessor lists, so
    a split costs only the transitions into the splitter. The automaton is partial
    (transitions to dead states count as missing) and needs no explicit sink: every
    initial block is a splitter, so a state with a transition into a block is always
    separated from one without.
    """
    cuts = sorted(
        {lo for s in states for lo, _, t in dfa.trans[s] if t in live}
        | {hi + 1 for s in states for _, hi, t in dfa.trans[s] if t in live}
    )
    position = {b: i for i, b in enumerate(cuts)}
    # preds[t][c]: the states that go to t on symbol class c.
    preds: dict[int, dict[int, list[int]]] = {s: {} for s in states}
    for s in states:
        for lo, hi, t in dfa.trans[s]:
            if t in live:
                into = preds[t]
                for c in range(position[lo], position[hi + 1]):
                    into.setdefault(c, []).append(s)
    accepting = {s for s in states if dfa.accept[s]}
    blocks = [b for b in (accepting, set(states) - accepting) if b]
    block_of = {s: i for i, b in enumerate(blocks) for s in b}
    work = list(range(len(blocks)))
    while work:
        movers_by_symbol: dict[int, list[int]] = {}
        for t in blocks[work.pop()]:
            for c, sources in preds[t].items():
                movers = movers_by_symbol.get(c)
                if movers is None:
                    movers_by_symbol[c] = list(sources)
                else:
                    movers.extend(sources)
        for movers in movers_by_symbol.values():
            touched: dict[int, set[int]] = {}
            for s in movers:
                i = block_of[s]
                if len(blocks[i]) > 1:  # a single state cannot split
                    touched.setdefault(i, set()).add(s)
            for i, inside in touched.items():
                if len(inside) == len(blocks[i]):
                    continue
                outside = blocks[i] - inside
                small, large = (inside, outside) if len(inside) <= len(outside) else (outside, inside)
                blocks[i] = large
                new = len(blocks)
                blocks.append(small)
                for s in small:
                    block_of[s] = new
                # Whether or not block i still waits, the smaller half must: a waiting
                # block is split by both halves, and otherwise splitting by the parent and
                # one half implies the other half.
                work.append(new)
    return {s: block_of[s] for s in states}


def _overlay(a: list[Edge], b: list[Edge]) -> list[tuple[int, int, int, int]]:
    """Two sorted, disjoint rows laid over each other: ``(lo, hi, target_a, target_b)`` for
    each maximal interval where neither row changes, -1 for no transition; intervals
    covered by neither row are left out."""
    if not b:  # the other side is dead (common: a subtrahend's literal ended long ago)
        return [(lo, hi, t, -1) for lo, hi, t in a]
    if not a:
        return [(lo, hi, -1, t) for lo, hi, t in b]
    out: list[tuple[int, int, int, int]] = []
    i = j = 0
    pos = 0
    while i < len(a) or j < len(b):
        # Skip to the next byte that some range covers.
        starts = []
        if i < len(a):
            starts.append(max(a[i][0], pos))
        if j < len(b):
            starts.append(max(b[j][0], pos))
        lo = min(starts)
        in_a = i < len(a) and a[i][0] <= lo
        in_b = j < len(b) and b[j][0] <= lo
        # The interval ends where a covering range ends or an uncovering one starts.
        hi = 255
        if in_a:
            hi = min(hi, a[i][1])
        elif i < len(a):
            hi = min(hi, a[i][0] - 1)
        if in_b:
            hi = min(hi, b[j][1])
        elif j < len(b):
            hi = min(hi, b[j][0] - 1)
        out.append((lo, hi, a[i][2] if in_a else -1, b[j][2] if in_b else -1))
        pos = hi + 1
        if in_a and a[i][1] == hi:
            i += 1
        if in_b and b[j][1] == hi:
            j += 1
    return out


def _append(row: list[Edge], lo: int, hi: int, target: int) -> None:
    """Append a range to a sorted row, merging with the previous one when contiguous."""
    if row and row[-1][2] == target and row[-1][1] + 1 == lo:
        row[-1] = (row[-1][0], hi, target)
    else:
        row.append((lo, hi, target))


_DFA_CACHE: OrderedDict[int, tuple[Expr, DFA]] = OrderedDict()
_DFA_CACHE_SIZE = 512
_DFA_LOCK = threading.Lock()
_DFA_BY_VALUE: OrderedDict[Expr, DFA] = OrderedDict()


def dfa_from_expr(expr: Expr, max_states: int = 20000) -> DFA:
    """The minimal DFA of a regular expression (raises :class:`NotRegular` on refs).

    Remembered per expression object (the same format or pattern language meets many
    negations and intersections); the entry keeps the expression alive, so its id is not
    reused while cached. Behind that, remembered per expression *value* (IR nodes compare
    and hash by content): operands rebuilt for every oneOf arm then still share one DFA
    object, and with it the remembered products. DFAs are never modified in place.
    """
    with _DFA_LOCK:
        hit = _DFA_CACHE.get(id(expr))
        if hit is not None and hit[0] is expr:
            _DFA_CACHE.move_to_end(id(expr))
            known: DFA | None = hit[1]
        else:
            known = _DFA_BY_VALUE.get(expr)
    if known is not None:
        if known.size > max_states:
            raise OverflowError("automaton too large")
        _remember(expr, known)
        return known
    nfa = NFA()
    start, final = nfa.state(), nfa.state()
    nfa.add(expr, start, final)
    dfa = DFA.from_nfa(nfa, start, final, max_states)
    _remember(expr, dfa)
    return dfa


def _remember(expr: Expr, dfa: DFA) -> None:
    """Cache ``dfa`` as the minimal DFA of ``expr`` (least recently used entries go first)."""
    with _DFA_LOCK:
        _DFA_CACHE[id(expr)] = (expr, dfa)
        _DFA_CACHE.move_to_end(id(expr))
        if len(_DFA_CACHE) > _DFA_CACHE_SIZE:
            _DFA_CACHE.popitem(last=False)
        _DFA_BY_VALUE[expr] = dfa
        _DFA_BY_VALUE.move_to_end(expr)
        if len(_DFA_BY_VALUE) > _DFA_CACHE_SIZE:
            _DFA_BY_VALUE.popitem(last=False)


_PRODUCTS: OrderedDict[tuple[str, int, int], tuple[DFA, DFA, DFA]] = OrderedDict()
_PRODUCTS_SIZE = 1024
_PRODUCT_OPS = {
    "and": (lambda a, b: a and b, False),
    "or": (lambda a, b: a or b, True),
    "minus": (lambda a, b: a and not b, True),
}


def _remembered_product(op: str, a: DFA, b: DFA) -> DFA:
    """``a op b``, remembered per pair of automaton objects: the key languages of one
    conjunction are intersected again for every disjointness question about it. DFAs are
    never modified in place, and the entry keeps both operands alive (their ids are the key).
    """
    key = (op, id(a), id(b))
    with _DFA_LOCK:
        hit = _PRODUCTS.get(key)
        if hit is not None and hit[0] is a and hit[1] is b:
            _PRODUCTS.move_to_end(key)
            return hit[2]
    keep, complete = _PRODUCT_OPS[op]
    result = a._product(b, keep, complete)
    with _DFA_LOCK:
        _PRODUCTS[key] = (a, b, result)
        if len(_PRODUCTS) > _PRODUCTS_SIZE:
            _PRODUCTS.popitem(last=False)
    return result


_REGULAR_IR: OrderedDict[tuple[tuple[tuple[Edge, ...], ...], tuple[bool, ...]], Expr | None] = OrderedDict()
_REGULAR_IR_SIZE = 256


def _regular_ir(dfa: DFA) -> Expr | None:
    """:meth:`LabeledGraph.to_ir` of ``dfa.labeled()`` without the rule fallback (None
    where that would make rules), remembered by the automaton's *content*.

    One schema often subtracts the same language many times from operands built afresh
    (every arm of a oneOf, every level of a nested not), so the DFAs are new objects but
    equal; state elimination of a few hundred states costs milliseconds each time.
    """
    key = (tuple(tuple(row) for row in dfa.trans), tuple(dfa.accept))
    with _DFA_LOCK:
        if key in _REGULAR_IR:
            _REGULAR_IR.move_to_end(key)
            return _REGULAR_IR[key]
    graph = dfa.labeled()
    expr = graph.to_expr()
    if expr is None:
        try:
            expr = graph.to_automaton()
        except OverflowError:
            expr = None
    with _DFA_LOCK:
        _REGULAR_IR[key] = expr
        if len(_REGULAR_IR) > _REGULAR_IR_SIZE:
            _REGULAR_IR.popitem(last=False)
    return expr


_UTF8: DFA | None = None


def utf8_strings() -> DFA:
    """All valid UTF-8 strings (no surrogates), as a DFA."""
    global _UTF8
    if _UTF8 is None:
        _UTF8 = dfa_from_expr(Repeat(codepoints([(0, 0x10FFFF)]), 0, None))
    return _UTF8


def expr_size(expr: Expr) -> int:
    """Number of nodes of an expression tree (a cost measure)."""
    if isinstance(expr, (Seq, Alt)):
        return 1 + sum(expr_size(e) for e in expr.items)
    if isinstance(expr, Repeat):
        return 1 + expr_size(expr.item)
    return 1
