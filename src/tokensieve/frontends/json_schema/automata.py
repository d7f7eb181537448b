"""Byte automata for the regular operations the grammar IR does not have.

The IR has concatenation, alternation and repetition, but JSON Schema also needs
*intersection* (``pattern`` together with ``minLength``, two ``pattern`` s in an
``allOf``) and *complement* (``additionalProperties`` keys = "any string except the
declared names", ``not``). This module turns a regular IR expression into a DFA over
bytes, performs those operations on DFAs, and turns the result back into the IR
(edge-labelled graphs and the ways back are in :mod:`.labeled`; the Thompson NFA of
:mod:`.nfa` serves automata given by their edges, such as those graphs).

Conventions: a :class:`DFA` is partial (a missing byte goes to an implicit dead state),
state 0 is the start state, and transitions are sorted, disjoint byte ranges.
Complement is taken relative to *valid UTF-8 strings* (:func:`utf8_strings`), since every
language here is a set of UTF-8 encoded texts.

Determinization, products and minimization run in the native DFA builder (the one that
builds the grammar's terminals): an expression crosses as a regex program (the encoding the
compiler gives that builder), an automaton as rows of byte ranges, and a DFA keeps its native
twin, so a chain of operations converts only its first operands and its result.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from itertools import accumulate, chain
from typing import Any, Final, NamedTuple

import numpy as np

from ... import _core
from ...errors import LimitExceeded
from ...ir import (
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
    codepoints,
)
from ...program import OP_ALT, OP_BYTES, OP_SEQ, automaton_header, repeat_words, words
from .labeled import MAX_ELIMINATION_EDGES, LabeledGraph, byte_set
from .nfa import MAX_NFA_STATES, NFA, Edge, NotRegular

__all__ = [
    "DFA",
    "LabeledGraph",
    "NotRegular",
    "dfa_from_expr",
    "expr_size",
    "remembered_dfa",
    "utf8_strings",
]


# ----------------------------------------------------------------------------- DFA


def _rows(rows: Sequence[Sequence[Edge]]) -> tuple[list[int], list[int], list[int], list[int]]:
    """Rows of range edges as the native builder takes them: row starts, then lo, hi, target."""
    edge_begin = list(accumulate(map(len, rows), initial=0))
    flat = list(chain.from_iterable(rows))
    if not flat:
        return edge_begin, [], [], []
    lo, hi, target = zip(*flat, strict=True)
    return edge_begin, list(lo), list(hi), list(target)


# Most states a product may explore (a product beyond it raises OverflowError, as a
# determinization past its ``max_states`` does): pairs cost a row of byte classes each.
_MAX_PRODUCT_STATES: Final = 200_000


Rows = tuple[tuple[Edge, ...], ...]


class LabelGroups(NamedTuple):
    """A native DFA's edges grouped by target (``Dfa.label_groups``, see ``LabelGroups`` in
    dfa.hpp): state s has groups ``group_begin[s]`` .. ``group_begin[s + 1]``, one per target
    in the order of its lowest byte, group g's bytes the ranges ``sets[group_set[g]]``."""

    accepting: list[bool]
    group_begin: list[int]
    group_target: list[int]
    group_set: list[int]
    sets: list[list[tuple[int, int]]]
    key: bytes
    """The transitions as bytes: equal for equal automata."""
    walk_numbered: bool
    """Whether a breadth-first walk over the groups meets the states in number order."""


class DFA:
    """A partial deterministic automaton over bytes; state 0 starts.

    Made either from rows of range edges (``DFA(trans, accept)``) or from a native DFA
    (:meth:`_from_native`, what every operation here returns). The native one is made from
    the rows on first use, the rows from the native one on first use: most automata here only
    pass from one native operation to the next and never need their rows in Python. Rows are
    tuples, not lists: the caches below keep thousands of automata alive, and Python's cyclic
    collector stops tracking a tuple of numbers after its first pass over it, while it walks
    every list at every full collection."""

    def __init__(
        self, trans: Sequence[Sequence[Edge]] | None, accept: Sequence[bool] | None, native: Any = None
    ) -> None:
        self._trans: Rows | None = None if trans is None else tuple(tuple(row) for row in trans)
        self._accept: tuple[bool, ...] | None = None if accept is None else tuple(accept)
        # The native DFA of the same language (minimal; numbered like this one when this one
        # came out of an operation here).
        self._native: Any = native
        # Whether the rows are the native DFA's (this one came out of an operation here):
        # then the native side can also give them grouped (:class:`LabelGroups`).
        self._native_rows = trans is None

    @property
    def size(self) -> int:
        if self._accept is None:
            return max(1, int(self._native.num_states))  # (the empty language: one state)
        return len(self._accept)

    @property
    def trans(self) -> Rows:
        """Per state, its edges ``(lo, hi, target)``: sorted, disjoint byte ranges."""
        if self._trans is None:
            self._unpack()
        assert self._trans is not None
        return self._trans

    @property
    def accept(self) -> tuple[bool, ...]:
        """Per state, whether it accepts."""
        if self._accept is None:
            self._unpack()
        assert self._accept is not None
        return self._accept

    def _unpack(self) -> None:
        """The rows of the native DFA (two threads may both do it: they write equal values)."""
        edge_begin, lo, hi, target, accepting = self._native.to_ranges()
        if not accepting:  # the empty language
            self._trans, self._accept = ((),), (False,)
            return
        edges = tuple(zip(lo, hi, target, strict=True))
        self._trans = tuple(edges[edge_begin[s] : edge_begin[s + 1]] for s in range(len(accepting)))
        self._accept = tuple(bool(a) for a in accepting)

    def accepts(self, data: bytes) -> bool:
        """Whether the automaton accepts ``data`` (walked in Python: for tests and one-off
        checks, not for hot paths)."""
        state = 0
        for byte in data:
            state = next((t for lo, hi, t in self.trans[state] if lo <= byte <= hi), -1)
            if state < 0:
                return False
        return self.accept[state]

    # -- construction -------------------------------------------------------------

    @staticmethod
    def from_nfa(nfa: NFA, start: int, final: int, max_states: int = 20000) -> DFA:
        """The minimal DFA of ``nfa`` (OverflowError past ``max_states`` subset states)."""
        edge_begin, lo, hi, target = _rows(nfa.edges)
        eps_begin = list(accumulate(map(len, nfa.eps), initial=0))
        eps = list(chain.from_iterable(nfa.eps))
        try:
            native = _core.determinize_ranges(
                edge_begin, lo, hi, target, eps_begin, eps, start, final, max_states
            )
        except LimitExceeded:
            raise OverflowError("automaton too large") from None
        return DFA._from_native(native)

    @staticmethod
    def _from_native(native: Any) -> DFA:
        return DFA(None, None, native)

    def native(self) -> Any:
        """The native DFA of this language (built from the rows the first time)."""
        if self._native is None:
            edge_begin, lo, hi, target = _rows(self.trans)
            self._native = _core.dfa_from_ranges(edge_begin, lo, hi, target, [int(a) for a in self.accept])
        return self._native

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

    def _product(self, other: DFA, op: str) -> DFA:
        try:
            native = _core.dfa_product(self.native(), other.native(), op, _MAX_PRODUCT_STATES)
        except LimitExceeded:
            raise OverflowError("automaton too large") from None
        return DFA._from_native(native)

    def is_empty(self) -> bool:
        if self._native is not None:  # (minimal and trimmed: empty iff it has no start)
            return bool(self._native.is_empty)
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
        """The minimal DFA of this language: trimmed (reachable and co-reachable states
        only), equivalent states merged, numbered breadth-first with bytes ascending."""
        return DFA._from_native(self.native())

    # -- back to the IR -------------------------------------------------------------

    def label_groups(self) -> LabelGroups | None:
        """The edges grouped by target on the native side, for a DFA that came out of an
        operation here (None for rows made in Python)."""
        return LabelGroups(*self._native.label_groups()) if self._native_rows else None

    def label_rows(self, groups: LabelGroups | None = None) -> list[list[tuple[int, Bytes]]]:
        """Per state, its edges as one byte-set label per target (:func:`_labels_by_target`):
        what :meth:`labeled` and :meth:`to_automaton` are made of. Not kept on the DFA: the
        caches keep thousands of automata alive, and these lists would be objects for the
        cyclic collector to walk.

        For a DFA that came out of an operation here the native side groups the edges
        (``groups``: what :meth:`content_key` read, else read here), and each distinct byte
        set becomes one node: grouping rows of Python tuples took a third of the front-end of
        schemas that subtract long strings (Github_easy o65510)."""
        if groups is None:
            groups = self.label_groups()
        if groups is None:
            return [_labels_by_target(row) for row in self.trans]
        labels = _group_labels(groups.sets)
        begin, target, label = groups.group_begin, groups.group_target, groups.group_set
        return [
            [(target[g], labels[label[g]]) for g in range(begin[s], begin[s + 1])]
            for s in range(len(groups.accepting))
        ]

    def content_key(self) -> tuple[object, LabelGroups | None]:
        """A key of this automaton's content, its rows and accepting states (equal keys for
        equal automata), and the native groups it was read from (for :meth:`label_rows`;
        None for rows made in Python, whose key is made of their tuples)."""
        groups = self.label_groups()
        if groups is None:
            return (tuple(tuple(row) for row in self.trans), tuple(self.accept)), None
        return groups.key, groups

    def labeled(self, rows: list[list[tuple[int, Bytes]]] | None = None) -> LabeledGraph:
        """This DFA as a graph whose edge labels are byte sets (from :meth:`label_rows`,
        computed here unless given)."""
        if rows is None:
            rows = self.label_rows()
        edges: list[dict[int, Expr]] = [dict(row) for row in rows]
        return LabeledGraph(edges, list(self.accept))

    def to_automaton(
        self, rows: list[list[tuple[int, Bytes]]] | None = None, groups: LabelGroups | None = None
    ) -> Automaton:
        """This DFA as an IR :class:`~tokensieve.ir.Automaton`: what
        ``self.labeled().to_automaton()`` gives (states in the order that discovers them,
        each row's targets in the order of their lowest byte), without the Thompson NFA and
        its closures, which a graph whose labels are byte sets does not need. ``rows``:
        :meth:`label_rows`, when the caller has them already; ``groups``: the native groups
        (:meth:`content_key`), read here for a DFA that came out of an operation here.

        Such a DFA is numbered as that walk would number it (the native side says so), so
        its groups are the automaton's flat rows as they are, with no walk in Python."""
        if groups is None and rows is None:
            groups = self.label_groups()
        accept: Sequence[bool] = self.accept if groups is None else groups.accepting
        if len(accept) + 1 > MAX_NFA_STATES:  # where that NFA would overflow
            raise OverflowError("automaton too large")
        if groups is not None and groups.walk_numbered:
            labels = _group_labels(groups.sets)
            return Automaton(
                tuple(accept),
                tuple(groups.group_begin),
                tuple([labels[k] for k in groups.group_set]),
                tuple(groups.group_target),
            )
        if rows is None:
            rows = self.label_rows(groups)
        index = {0: 0}
        order = [0]
        states: list[tuple[bool, tuple[tuple[Bytes, int], ...]]] = []
        i = 0
        while i < len(order):
            s = order[i]
            i += 1
            row = []
            for t, label in rows[s]:
                if t not in index:
                    index[t] = len(order)
                    order.append(t)
                row.append((label, index[t]))
            states.append((accept[s], tuple(row)))
        return Automaton.of(states)

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
        # By object only: the key by value would be the expression's regex program, written
        # out label by label (a fifth of Github_easy o65510's front-end), and _regular_ir
        # gives this very object again for an equal automaton.
        _remember(expr, self, by_value=False)
        return expr

    def finite_words(self, limit: int) -> list[bytes] | None:
        """All words when the language is finite with at most ``limit`` words, else None
        (also for a cycle among the reachable states, or an edge of more than ``limit`` bytes).

        The count comes first, from the states' successors, so that a key space of a hundred
        names is refused without spelling out 65 of them, and the words are only spelled out
        when they fit (a negated object's key names: 2 calls were 3% of WashingtonPost's
        front-end when each step of the spelling copied its path's set of states)."""
        trans, accept = self.trans, self.accept
        # Reachable states, each after all of its successors (depth-first, iteratively);
        # an edge back to a state still on the stack is a cycle.
        done: list[int] = []
        mark = {0: 1}  # 1: on the stack, 2: done
        stack = [(0, 0)]
        while stack:
            s, i = stack[-1]
            row = trans[s]
            if i == len(row):
                stack.pop()
                mark[s] = 2
                done.append(s)
                continue
            stack[-1] = (s, i + 1)
            lo, hi, t = row[i]
            if hi - lo > limit:
                return None
            seen = mark.get(t, 0)
            if seen == 1:
                return None
            if seen == 0:
                mark[t] = 1
                stack.append((t, 0))
        # Words from each state, counted no further than limit + 1.
        count: dict[int, int] = {}
        for s in done:
            n = 1 if accept[s] else 0
            for lo, hi, t in trans[s]:
                n = min(n + (hi - lo + 1) * count[t], limit + 1)
            count[s] = n
        if count[0] > limit:
            return None
        words: list[bytes] = []
        todo: list[tuple[int, bytes]] = [(0, b"")]
        while todo:
            s, word = todo.pop()
            if accept[s]:
                words.append(word)
            for lo, hi, t in trans[s]:
                if count[t]:
                    for b in range(lo, hi + 1):
                        todo.append((t, word + _BYTE[b]))
        return sorted(words)


_BYTE: Final = [bytes((b,)) for b in range(256)]  # each byte as a one-byte string


def _group_labels(sets: list[list[tuple[int, int]]]) -> list[Bytes]:
    """The byte-set node of each distinct range list of native label groups."""
    return [byte_set(tuple(ranges)) for ranges in sets]


def _labels_by_target(row: Sequence[Edge]) -> list[tuple[int, Bytes]]:
    """A DFA row as one byte-set label per target, targets in the order of their lowest byte."""
    groups: dict[int, list[tuple[int, int]]] = {}
    for lo, hi, t in row:
        groups.setdefault(t, []).append((lo, hi))
    return [(t, byte_set(tuple(r))) for t, r in groups.items()]


_DFA_CACHE: Final[OrderedDict[int, tuple[Expr, DFA]]] = OrderedDict()
_DFA_CACHE_SIZE: Final = 512
_DFA_LOCK: Final = threading.Lock()


def dfa_from_expr(expr: Expr, max_states: int = 20000) -> DFA:
    """The minimal DFA of a regular expression (raises :class:`NotRegular` on refs).

    Remembered per expression object (the same format or pattern language meets many
    negations and intersections); the entry keeps the expression alive, so its id is not
    reused while cached. Behind that, remembered per expression *value*, by its regex
    program: operands rebuilt for every oneOf arm then still share one DFA object, and with
    it the remembered products. DFAs are never modified in place.
    """
    with _DFA_LOCK:
        hit = _DFA_CACHE.get(id(expr))
        mine = hit[1] if hit is not None and hit[0] is expr else None
        if mine is not None:
            _DFA_CACHE.move_to_end(id(expr))
    if mine is not None:  # this very expression: nothing to encode or remember again
        if mine.size > max_states:
            raise OverflowError("automaton too large")
        return mine
    try:
        program = _program(expr)
    except LimitExceeded:
        raise OverflowError("automaton too large") from None
    with _DFA_LOCK:
        known = _DFA_BY_PROGRAM.get(program) if program in _DFA_BY_PROGRAM else None
    if known is not None:
        if known.size > max_states:
            raise OverflowError("automaton too large")
        _remember(expr, known, program)
        return known
    try:
        native = _core.build_dfa(np.frombuffer(program, dtype=np.int32), MAX_NFA_STATES, max_states)
    except LimitExceeded:
        raise OverflowError("automaton too large") from None
    dfa = DFA._from_native(native)
    _remember(expr, dfa, program)
    return dfa


def remembered_dfa(expr: Expr) -> DFA | None:
    """The DFA :func:`dfa_from_expr` remembers for this very expression object, or None.

    An expression remembered here is a regular byte expression (no rule, counter or other
    node that :func:`_encode` refuses), which callers may then take as it is."""
    with _DFA_LOCK:
        hit = _DFA_CACHE.get(id(expr))
    return hit[1] if hit is not None and hit[0] is expr else None


def _program(expr: Expr) -> bytes:
    """``expr``'s regex program: the native builder's input, and the key of its value."""
    chunks: list[bytes] = []
    _encode(expr, chunks, {})
    return b"".join(chunks)


def _encode(expr: Expr, out: list[bytes], spans: dict[int, tuple[int, int]]) -> None:
    """Appends ``expr``'s regex program to ``out`` as chunks of native int32 words: a prefix
    encoding the native builder reads in one pass, where a Python Thompson NFA made an object
    per state and edge (a schema with many patterns spent a third of its front-end time
    there). A node met again (the IR is a DAG) repeats the chunks it was first written as
    (``spans``, by id; the caller keeps the nodes alive): references are copied, not words.
    Raises :class:`NotRegular` for what has no byte automaton here."""
    span = spans.get(id(expr))
    if span is not None:
        out.extend(out[span[0] : span[1]])
        return
    start = len(out)
    if isinstance(expr, Bytes):
        out.append(words(OP_BYTES, len(expr.ranges), *[b for r in expr.ranges for b in r]))
    elif isinstance(expr, (Seq, Alt)):
        out.append(words(OP_SEQ if isinstance(expr, Seq) else OP_ALT, len(expr.items)))
        for item in expr.items:
            _encode(item, out, spans)
    elif isinstance(expr, Seam):  # the empty string
        out.append(words(OP_SEQ, 0))
    elif isinstance(expr, Repeat):
        out.append(repeat_words(expr.min, expr.max))  # (LimitExceeded past MAX_COUNT copies)
        _encode(expr.item, out, spans)
    elif isinstance(expr, Automaton):
        out.append(words(*automaton_header(expr)))
        for label in expr.labels:
            _encode(label, out, spans)
    elif isinstance(expr, (Ref, Special, Unordered, Difference, CountedAutomaton)):
        raise NotRegular(f"{type(expr).__name__} is not a regular byte expression")
    else:  # pragma: no cover - the Expr union is closed
        raise TypeError(f"not an IR expression: {expr!r}")
    spans[id(expr)] = (start, len(out))


def _size_up_to(expr: Expr, cap: int) -> int:
    """:func:`expr_size` of ``expr``, counting no further than ``cap`` (a tree walk of a DAG
    may be exponential; the callers only compare with a bound)."""
    todo, size = [expr], 0
    while todo and size < cap:
        e = todo.pop()
        if isinstance(e, Automaton):
            size += expr_size(e)
        else:
            size += 1
            if isinstance(e, (Seq, Alt)):
                todo.extend(e.items)
            elif isinstance(e, Repeat):
                todo.append(e.item)
    return min(size, cap)


def _remember(expr: Expr, dfa: DFA, program: bytes = b"", by_value: bool = True) -> None:
    """Cache ``dfa`` as the minimal DFA of ``expr``, whose regex program is ``program``
    (computed here when not given; least recently used entries go first). ``by_value``:
    also under that program, for equal expressions made anew."""
    if by_value and not program:
        try:
            program = _program(expr)
        except (LimitExceeded, NotRegular):  # (what only rules express: remembered by object)
            program = b""
    with _DFA_LOCK:
        _DFA_CACHE[id(expr)] = (expr, dfa)
        _DFA_CACHE.move_to_end(id(expr))
        if len(_DFA_CACHE) > _DFA_CACHE_SIZE:
            _DFA_CACHE.popitem(last=False)
        if program:
            _DFA_BY_PROGRAM.put(program, dfa, len(program))


_PRODUCTS: Final[OrderedDict[tuple[str, int, int], tuple[DFA, DFA, DFA]]] = OrderedDict()
_PRODUCTS_SIZE: Final = 1024


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
    result = a._product(b, op)
    with _DFA_LOCK:
        _PRODUCTS[key] = (a, b, result)
        if len(_PRODUCTS) > _PRODUCTS_SIZE:
            _PRODUCTS.popitem(last=False)
    return result


class _SizedLru:
    """A least-recently-used map bounded by the total size its values are given, not by their
    number. The remembered expressions below range from a few nodes to tens of thousands, and
    every node and edge of one is an object Python's cyclic collector tracks: 256 entries kept
    340,000 of them alive after the MaskBench dev split, and each full collection of the
    process walked them all (0.3 s here). Not thread-safe: callers hold ``_DFA_LOCK``."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.total = 0
        self._entries: OrderedDict[Any, tuple[Any, int]] = OrderedDict()

    def __contains__(self, key: Any) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Any) -> Any:
        """The value for ``key`` (which must be present), now the most recently used."""
        self._entries.move_to_end(key)
        return self._entries[key][0]

    def put(self, key: Any, value: Any, size: int) -> None:
        """Stores ``value`` of ``size``; the least recently used entries go until the total
        fits the budget again (the newest stays, even alone over it)."""
        old = self._entries.pop(key, None)
        if old is not None:
            self.total -= old[1]
        self._entries[key] = (value, size)
        self.total += size
        while self.total > self.budget and len(self._entries) > 1:
            _, (_, evicted) = self._entries.popitem(last=False)
            self.total -= evicted


# Bytes of regex program the automata remembered by expression value are keyed by, in all.
# Keys are bytes, which the cyclic collector does not track: keyed by the expressions
# themselves, 512 entries kept 200,000 tracked objects alive after the MaskBench dev split
# (an automaton's states and edges are tuples of nodes), and the collector walked them all
# at every full collection.
_DFA_BY_PROGRAM_BUDGET: Final = 32 << 20
_DFA_BY_PROGRAM: Final = _SizedLru(_DFA_BY_PROGRAM_BUDGET)

# Expression nodes (``expr_size``) the remembered expressions of ``_regular_ir`` hold in all:
# room for hundreds of small automata and the few largest of the dev split (34,000 nodes).
_REGULAR_IR_BUDGET: Final = 131_072
_REGULAR_IR: Final = _SizedLru(_REGULAR_IR_BUDGET)


def _regular_ir(dfa: DFA) -> Expr | None:
    """:meth:`LabeledGraph.to_ir` of ``dfa.labeled()`` without the rule fallback (None
    where that would make rules), remembered by the automaton's *content*.

    One schema often subtracts the same language many times from operands built afresh
    (every arm of a oneOf, every level of a nested not), so the DFAs are new objects but
    equal; state elimination of a few hundred states costs milliseconds each time.
    """
    key, groups = dfa.content_key()
    with _DFA_LOCK:
        if key in _REGULAR_IR:
            known: Expr | None = _REGULAR_IR.get(key)
            return known
    # The label rows serve both forms, and a graph of more edges than state elimination
    # takes (LabeledGraph.to_expr gives up on it unseen) goes straight to the automaton: the
    # spelling automata of a subtracted string have thousands of edges, and grouping their
    # rows twice was a third of such a schema's front-end (Github_easy o65510).
    # Native groups count the edges without the rows, which a large automaton never needs.
    rows = None if groups is not None else dfa.label_rows()
    edges = len(groups.group_target) if groups is not None else sum(map(len, rows or ()))
    expr: Expr | None = None
    if edges <= MAX_ELIMINATION_EDGES:
        rows = rows if rows is not None else dfa.label_rows(groups)
        expr = dfa.labeled(rows).to_expr()
    if expr is None:
        try:
            expr = dfa.to_automaton(rows, groups)
        except OverflowError:
            expr = None
    with _DFA_LOCK:
        _REGULAR_IR.put(key, expr, 1 if expr is None else _size_up_to(expr, _REGULAR_IR_BUDGET))
    return expr


_UTF8: DFA | None = None


def utf8_strings() -> DFA:
    """All valid UTF-8 strings (no surrogates), as a DFA."""
    global _UTF8
    if _UTF8 is None:
        _UTF8 = dfa_from_expr(Repeat(codepoints([(0, 0x10FFFF)]), 0, None))
    return _UTF8


def expr_size(expr: Expr) -> int:
    """Number of nodes of an expression tree (a cost measure); an automaton counts its
    states and edges."""
    if isinstance(expr, (Seq, Alt)):
        return 1 + sum(expr_size(e) for e in expr.items)
    if isinstance(expr, Repeat):
        return 1 + expr_size(expr.item)
    if isinstance(expr, Automaton):
        return len(expr.accepting) + len(expr.labels)
    return 1
