"""JSON strings whose *unescaped* content is constrained (``minLength``, ``pattern``, ``format``...).

JSON Schema constrains the decoded value of a string, while the grammar sees its
serialization. The two differ by escapes: ``"\\u00e9"`` and ``"é"``, ``"\\/"`` and ``"/"``
are the same value. The construction here is exact for that:

1. every constraint is a *content language*: a regular expression over the UTF-8
   bytes of the decoded value (patterns, formats, enum values, excluded values);
2. constraints are combined on byte DFAs (:mod:`.automata`: intersection, difference);
3. the DFA is read character by character (:func:`char_graph`): its edges become
   sets of code points, and lengths are counted in code points, not bytes;
4. each edge's code-point set becomes :func:`escaped_chars`: the JSON spellings of
   those characters (raw UTF-8 where JSON allows it, the short escapes, ``\\uXXXX``
   with hex digits in either case, surrogate pairs above U+FFFF), except that a
   printable ASCII character but ``&<>`` is never a ``\\u`` escape (see :data:`PLAIN_ASCII`).

**One spelling of printable ASCII.** ``"\\u0061"`` is ``"a"`` to a JSON parser, but no
serializer writes it (``json.dumps`` with or without ``ensure_ascii``, ``JSON.stringify``,
serde): printable ASCII (U+0020..U+007E) is written as itself, ``"`` and ``\\`` as ``\\"``
and ``\\\\``, and ``/`` as ``/`` or ``\\/``. The one exception kept is Go's
``encoding/json``, which by default writes ``&``, ``<`` and ``>`` as ``\\u0026``,
``\\u003c`` and ``\\u003e`` (HTML-safe output): those three keep their ``\\u``
spellings. Every value keeps a spelling, so the set of values is the same, while the
automata are several times smaller (a property name had six states per character, the
``\\u00XX`` branch of each) and a key's remaining characters are forced once it is
begun, which jump-forward decoding needs. Control characters, other non-ASCII
characters and astral ones keep every spelling, as ``ensure_ascii`` output needs them.

Control characters (U+0000..U+001F), ``"`` and ``\\`` therefore only ever appear escaped,
whatever the pattern says. Lone surrogate escapes (``"\\ud800"``) are never accepted: such
a value is not a Unicode string and cannot be UTF-8 encoded.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final

from ...errors import UnsatisfiableSchemaError, UnsupportedSchemaError
from ...ir import (
    EMPTY,
    Alt,
    Bytes,
    CountedAutomaton,
    Expr,
    Grammar,
    Repeat,
    Seq,
    alt,
    codepoints,
    literal,
    seq,
)
from ..json_value import PLAIN_ASCII
from .automata import DFA, LabeledGraph, NotRegular, dfa_from_expr, utf8_strings
from .digits import fixed_width

__all__ = [
    "ANY_CHAR",
    "CharGraph",
    "StringSpec",
    "char_graph",
    "escaped_chars",
    "json_literal_string",
    "string_expr",
]

CpRanges = tuple[tuple[int, int], ...]

_SHORT_ESCAPES: Final = {
    0x22: '"', 0x5C: "\\", 0x2F: "/", 0x08: "b", 0x0C: "f", 0x0A: "n", 0x0D: "r", 0x09: "t"
}
_MUST_ESCAPE: Final[CpRanges] = ((0x00, 0x1F), (0x22, 0x22), (0x5C, 0x5C))
_QUOTE: Final = literal('"')


def _subtract(ranges: Sequence[tuple[int, int]], remove: CpRanges) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in ranges:
        cur = lo
        for rlo, rhi in remove:
            if rhi < cur or rlo > hi:
                continue
            if rlo > cur:
                out.append((cur, rlo - 1))
            cur = max(cur, rhi + 1)
        if cur <= hi:
            out.append((cur, hi))
    return out


def _clip(ranges: CpRanges, lo: int, hi: int) -> list[tuple[int, int]]:
    return [(max(a, lo), min(b, hi)) for a, b in ranges if max(a, lo) <= min(b, hi)]


@lru_cache(maxsize=256)
def _hex_digit(lo: int, hi: int) -> Bytes:
    """One hex digit from ``lo`` to ``hi`` (0..15), in either case (one shared node each)."""
    parts: list[tuple[int, int]] = []
    if lo <= 9:
        parts.append((0x30 + lo, 0x30 + min(hi, 9)))
    if hi >= 10:
        a, b = max(lo, 10) - 10, hi - 10
        parts += [(0x61 + a, 0x61 + b), (0x41 + a, 0x41 + b)]
    return Bytes.of(parts)


def _u_escape(lo: int, hi: int) -> Expr:
    """``\\uXXXX`` for the 16-bit values lo..hi, hex digits in either case."""
    options = [seq(*(_hex_digit(a, b) for a, b in digits)) for digits in fixed_width(lo, hi, 4, 16)]
    return seq(literal("\\u"), alt(*options))


@lru_cache(maxsize=512)
def escaped_chars(ranges: CpRanges) -> Expr:
    """The JSON spellings of one character whose code point lies in ``ranges`` (no ``\\u``
    escape of printable ASCII).

    Remembered, but not many: a class's spellings are a dozen objects that Python's cyclic
    collector walks at every collection while they are kept. Over the MaskBench dev split
    (51,763 calls, 1,759 classes) 512 entries miss 2,009 times and 4,096 entries 1,759 times;
    a miss costs about 16 us."""
    options: list[Expr] = []
    raw = _subtract(ranges, _MUST_ESCAPE)
    if raw:
        options.append(codepoints(raw))
    for cp, letter in _SHORT_ESCAPES.items():
        if any(lo <= cp <= hi for lo, hi in ranges):
            options.append(literal("\\" + letter))
    for lo, hi in _subtract(_clip(ranges, 0, 0xFFFF), PLAIN_ASCII):
        for a, b in ((lo, min(hi, 0xD7FF)), (max(lo, 0xE000), hi)):  # no lone surrogates
            if a <= b:
                options.append(_u_escape(a, b))
    for lo, hi in _clip(ranges, 0x10000, 0x10FFFF):
        vlo, vhi = lo - 0x10000, hi - 0x10000
        hlo, hhi = vlo >> 10, vhi >> 10
        pieces = [(hlo, vlo & 0x3FF, 0x3FF if hhi > hlo else vhi & 0x3FF)]
        if hhi > hlo + 1:
            pieces.append((-1, 0, 0x3FF))  # the full middle block, below
        if hhi > hlo:
            pieces.append((hhi, 0, vhi & 0x3FF))
        for high, llo, lhi in pieces:
            high_escape = (
                _u_escape(0xD800 + hlo + 1, 0xD800 + hhi - 1)
                if high < 0
                else _u_escape(0xD800 + high, 0xD800 + high)
            )
            options.append(seq(high_escape, _u_escape(0xDC00 + llo, 0xDC00 + lhi)))
    return alt(*options)


ANY_CHAR: Final[Expr] = escaped_chars(((0, 0x10FFFF),))
"""One character of a JSON string, in any spelling."""


@lru_cache(maxsize=1024)
def json_literal_string(value: str) -> Expr:
    """Every JSON spelling of the string ``value`` (quotes included).

    Remembered: property names and enum strings recur within and across schemas, and the
    expression is immutable. Not many of them: each kept spelling is a few objects that
    Python's cyclic collector walks at every collection for as long as it is kept, and a
    miss costs only a sequence of shared character nodes. (Over the MaskBench dev split's
    263,553 calls, 1,024 entries miss 43,758 times, 8,192 entries 34,170 times, and keep
    eight times the objects.)"""
    return seq(_QUOTE, *map(_spelled_char, value), _QUOTE)


_SPELLED_CHARS: Final[dict[str, Expr]] = {}  # by character: property names repeat a few dozen


def _spelled_char(c: str) -> Expr:
    """Every JSON spelling of the character ``c`` inside a string (one shared node per character)."""
    hit = _SPELLED_CHARS.get(c)
    if hit is None:
        hit = escaped_chars(((ord(c), ord(c)),))
        if len(_SPELLED_CHARS) < 4096:  # bounded: a schema may use any of a million characters
            hit = _SPELLED_CHARS.setdefault(c, hit)
    return hit


# ----------------------------------------------------------------------------- character graphs


@dataclass
class CharGraph:
    """A deterministic automaton over code points: ``edges[s][t]`` = code points from s to t."""

    edges: list[dict[int, CpRanges]]
    accept: list[bool]

    def single_loop(self) -> CpRanges | None:
        """The set C when the language is exactly C* (one accepting state looping on C)."""
        if len(self.accept) == 1 and self.accept[0] and set(self.edges[0]) <= {0}:
            return self.edges[0].get(0, ())
        return None

    def uniform_repeat(self) -> tuple[CpRanges, int, int | None] | None:
        """(C, m, n) when the language is exactly C{m,n} (n None: unbounded), else None.

        Patterns such as ``^.{1,255}$`` or ``^[a-z]+$`` have this shape; as a bounded
        repetition they need no automaton at all, however long the bound.
        """
        labels = {c for row in self.edges for c in row.values()}
        if len(labels) != 1 or any(len(row) > 1 for row in self.edges):
            return None
        label = labels.pop()
        path: list[int] = []
        s: int | None = 0
        while s is not None and s not in path:
            path.append(s)
            s = next(iter(self.edges[s]), None)
        accepted = [i for i, state in enumerate(path) if self.accept[state]]
        if not accepted or accepted != list(range(accepted[0], accepted[-1] + 1)):
            return None
        if s is None:
            return label, accepted[0], accepted[-1]
        # A cycle back to path[k]: unbounded only as a one-state accepting loop at the end.
        if s == path[-1] and accepted[-1] == len(path) - 1:
            return label, accepted[0], None
        return None

    def with_length(self, lo: int, hi: int | None, max_states: int = 20000) -> CharGraph:
        """Product with a character counter: only words of length lo..hi (``hi=None``: no bound)."""
        cap = hi if hi is not None else lo  # past ``lo`` the count no longer matters if unbounded
        index: dict[tuple[int, int], int] = {(0, 0): 0}
        order = [(0, 0)]
        edges: list[dict[int, CpRanges]] = []
        i = 0
        while i < len(order):
            s, k = order[i]
            i += 1
            row: dict[int, CpRanges] = {}
            if hi is None or k < hi:
                nk = min(k + 1, cap) if hi is None else k + 1
                for t, cps in self.edges[s].items():
                    key = (t, nk)
                    if key not in index:
                        if len(order) >= max_states:
                            raise OverflowError("length product too large")
                        index[key] = len(order)
                        order.append(key)
                    row[index[key]] = cps
            edges.append(row)
        accept = [self.accept[s] and k >= lo for s, k in order]
        return CharGraph(edges, accept)

    def counted(
        self,
        lo: int,
        hi: int | None,
        min_product: int = 256,
        expanded: Callable[[Grammar], Expr] | None = None,
    ) -> CountedAutomaton | None:
        """Words of length lo..hi as a :class:`~tokensieve.ir.CountedAutomaton` (run with a
        counter), when :meth:`with_length` would have at least ``min_product`` states and,
        from some length on, each state reaches acceptance with every length or with none
        (``\\S+@\\S+`` does; ``(..)*`` does not). None otherwise: the product is small
        enough, or a counter cannot run it."""
        live = self._live()
        if 0 not in live or len(live) * ((hi if hi is not None else lo) + 1) < min_product:
            return None
        # R_k: the states that reach acceptance in exactly k characters. R_{k+1} is a function
        # of R_k; a counter needs two consecutive layers to be equal soon (see counted.hpp).
        reach = {s for s in live if self.accept[s]}
        for _ in range(min(4 * len(live) + 64, 4096)):
            nxt = {s for s in live if any(t in reach for t in self.edges[s])}
            if nxt == reach:
                break
            reach = nxt
        else:
            return None
        order = [0]
        index = {0: 0}
        for s in order:
            for t in self.edges[s]:
                if t in live and t not in index:
                    index[t] = len(order)
                    order.append(t)
        units = tuple(
            (
                self.accept[s],
                tuple((escaped_chars(cps), index[t]) for t, cps in self.edges[s].items() if t in live),
            )
            for s in order
        )
        return CountedAutomaton(units, lo, hi, expanded)

    def _live(self) -> set[int]:
        """The states from which an accepting state can be reached."""
        live = {s for s, a in enumerate(self.accept) if a}
        changed = True
        while changed:
            changed = False
            for s, row in enumerate(self.edges):
                if s not in live and any(t in live for t in row):
                    live.add(s)
                    changed = True
        return live

    def labeled(self) -> LabeledGraph:
        """Edges labelled with every JSON spelling of their characters; dead states dropped."""
        live = self._live()
        edges = [{t: escaped_chars(c) for t, c in row.items() if t in live} for row in self.edges]
        return LabeledGraph(edges, self.accept)


def char_graph(dfa: DFA) -> CharGraph:
    """Read a byte DFA over valid UTF-8 one character at a time."""
    index = {0: 0}
    order = [0]
    edges: list[dict[int, CpRanges]] = []
    tails: dict[int, list[tuple[int, int, int]]] = {}
    i = 0
    while i < len(order):
        s = order[i]
        i += 1
        groups: dict[int, list[tuple[int, int]]] = {}
        for lo, hi, t in _decode(dfa, s, tails):
            groups.setdefault(t, []).append((lo, hi))
        row: dict[int, CpRanges] = {}
        for t, cps in groups.items():
            if t not in index:
                index[t] = len(order)
                order.append(t)
            row[index[t]] = _merge(cps)
        edges.append(row)
    return CharGraph(edges, [dfa.accept[s] for s in order])


# Lead bytes of 1- to 4-byte characters (first, last, continuation bytes that follow), the
# payload bits of each lead, and the code points each length may spell (shorter spellings
# are overlong; 3-byte ones also skip the surrogates, below).
_LEADS: Final = ((0x00, 0x7F, 0), (0xC2, 0xDF, 1), (0xE0, 0xEF, 2), (0xF0, 0xF4, 3))
_LEAD_BITS: Final = (0x7F, 0x1F, 0x0F, 0x07)
_SPELLED: Final = ((0x00, 0x7F), (0x80, 0x7FF), (0x800, 0xFFFF), (0x10000, 0x10FFFF))
_SURROGATES: Final = (0xD800, 0xDFFF)


def _decode(dfa: DFA, s: int, tails: dict[int, list[tuple[int, int, int]]]) -> list[tuple[int, int, int]]:
    """(first code point, last code point, target) for the characters leaving state s, in
    code point order; ``tails`` remembers :func:`_tails` for the whole automaton."""
    out: list[tuple[int, int, int]] = []
    for lo, hi, t in dfa.trans[s]:
        for a, b, cont in _LEADS:
            x, y = max(lo, a), min(hi, b)
            if x > y:
                continue
            if cont == 0:
                out.append((x, y, t))
                continue
            rest = _tails(dfa, t, cont, tails)
            shift = 6 * cont
            bits = _LEAD_BITS[cont]
            full = (1 << shift) - 1
            if len(rest) == 1 and rest[0][0] == 0 and rest[0][1] == full:  # any continuation
                _add_spelled(out, (x & bits) << shift, ((y & bits) << shift) | full, rest[0][2], cont)
                continue
            for lead in range(x, y + 1):
                base = (lead & bits) << shift
                for p, q, u in rest:
                    _add_spelled(out, base | p, base | q, u, cont)
    return out


def _tails(
    dfa: DFA, state: int, remaining: int, memo: dict[int, list[tuple[int, int, int]]]
) -> list[tuple[int, int, int]]:
    """The payloads of ``remaining`` continuation bytes read from ``state`` (6 bits each, the
    first byte's highest), as (first, last, state they end in) in increasing order, adjacent
    runs to one state joined. Remembered per (state, remaining): the lead bytes of a class
    such as ``\\S`` lead to a few continuation states, each decoded once, not once per
    lead byte and path."""
    if remaining == 0:
        return [(0, 0, state)]
    key = state * 4 + remaining
    hit = memo.get(key)
    if hit is not None:
        return hit
    shift = 6 * (remaining - 1)
    full = (1 << shift) - 1
    out: list[tuple[int, int, int]] = []
    for lo, hi, t in dfa.trans[state]:
        a, b = max(lo, 0x80), min(hi, 0xBF)
        if a > b:
            continue
        rest = _tails(dfa, t, remaining - 1, memo)
        if len(rest) == 1 and rest[0][0] == 0 and rest[0][1] == full:
            _add_run(out, (a - 0x80) << shift, ((b - 0x80) << shift) | full, rest[0][2])
            continue
        for c in range(a, b + 1):
            base = (c - 0x80) << shift
            for p, q, u in rest:
                _add_run(out, base | p, base | q, u)
    memo[key] = out
    return out


def _add_run(out: list[tuple[int, int, int]], lo: int, hi: int, target: int) -> None:
    """Append (lo, hi, target), joined to the last run when it continues it."""
    if out and out[-1][2] == target and out[-1][1] + 1 == lo:
        out[-1] = (out[-1][0], hi, target)
    else:
        out.append((lo, hi, target))


def _add_spelled(out: list[tuple[int, int, int]], lo: int, hi: int, target: int, cont: int) -> None:
    """Append the code points lo..hi that a lead with ``cont`` continuation bytes spells (not
    overlong, no surrogate)."""
    first, last = _SPELLED[cont]
    lo, hi = max(lo, first), min(hi, last)
    if cont == 2 and lo <= _SURROGATES[1] and hi >= _SURROGATES[0]:
        if lo < _SURROGATES[0]:
            out.append((lo, _SURROGATES[0] - 1, target))
        lo = _SURROGATES[1] + 1
    if lo <= hi:
        out.append((lo, hi, target))


def _merge(ranges: list[tuple[int, int]]) -> CpRanges:
    merged: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return tuple((lo, hi) for lo, hi in merged)


# ----------------------------------------------------------------------------- string constraints


@dataclass
class StringSpec:
    """Everything that constrains a string value; ``pointer`` locates it for errors.

    ``languages`` must all hold and ``excluded`` must all fail; both hold content
    languages (regular IR expressions over UTF-8 bytes), tagged with their keyword.
    """

    pointer: str = ""
    min_length: int = 0
    max_length: int | None = None
    languages: list[tuple[str, Expr]] = field(default_factory=list)
    excluded: list[tuple[str, Expr]] = field(default_factory=list)

    def __init__(  # written out: a dataclass-generated __init__ stays plain Python under mypyc
        self,
        pointer: str = "",
        min_length: int = 0,
        max_length: int | None = None,
        languages: list[tuple[str, Expr]] | None = None,
        excluded: list[tuple[str, Expr]] | None = None,
    ) -> None:
        self.pointer = pointer
        self.min_length = min_length
        self.max_length = max_length
        self.languages = [] if languages is None else languages
        self.excluded = [] if excluded is None else excluded

    def content_dfa(self) -> DFA | None:
        """The combined content automaton, or None when only lengths constrain the string."""
        if not self.languages and not self.excluded:
            return None
        dfa: DFA = utf8_strings()
        for keyword, lang in self.languages:
            dfa = dfa.intersect(self._dfa(keyword, lang))
        for keyword, lang in self.excluded:
            dfa = dfa.minus(self._dfa(keyword, lang))
        return dfa

    def _dfa(self, keyword: str, lang: Expr) -> DFA:
        try:
            return dfa_from_expr(lang)
        except OverflowError as exc:
            raise UnsupportedSchemaError(
                "the string constraint is too large to combine with the others",
                keyword=keyword,
                pointer=self.pointer,
            ) from exc


def string_expr(spec: StringSpec, grammar: Grammar, hint: str = "string") -> Expr:
    """A JSON string (quotes included) whose decoded content satisfies ``spec``."""
    lo, hi = spec.min_length, spec.max_length
    if hi is not None and lo > hi:
        raise UnsatisfiableSchemaError(
            f"minLength {lo} is greater than maxLength {hi}", keyword="minLength", pointer=spec.pointer
        )
    shortcut = _repeated_class(spec)
    if shortcut is not None:
        chars, m, n = shortcut
        m, n = max(m, lo), (hi if n is None else n if hi is None else min(n, hi))
        if n is not None and m > n:
            raise _empty(spec)
        return seq(_QUOTE, Repeat(escaped_chars(chars), m, n), _QUOTE)
    if len(spec.languages) == 1 and not spec.excluded and lo == 0 and hi is None:
        direct = _escape_expr(spec.languages[0][1], {})
        if direct is not None:  # one pattern or format: escaped as it is, no automaton
            return seq(_QUOTE, direct, _QUOTE)
    dfa = spec.content_dfa()
    if dfa is None:
        return seq(_QUOTE, Repeat(ANY_CHAR, lo, hi), _QUOTE)
    graph = char_graph(dfa)
    loop = graph.single_loop()
    if loop is not None:  # C* with a length: a plain bounded repetition
        body = Repeat(escaped_chars(loop), lo, hi) if loop else (EMPTY if lo == 0 else None)
        if body is None:
            raise _empty(spec)
        return seq(_QUOTE, body, _QUOTE)
    uniform = graph.uniform_repeat()
    if uniform is not None:  # C{m,n} with a length: one bounded repetition
        chars, m, n = uniform
        m, n = max(m, lo), (hi if n is None else n if hi is None else min(n, hi))
        if n is not None and m > n:
            raise _empty(spec)
        return seq(_QUOTE, Repeat(escaped_chars(chars), m, n), _QUOTE)
    if lo > 0 or hi is not None:
        counted = graph.counted(lo, hi, expanded=lambda into: _with_length(spec, graph, into, hint))
        if counted is not None:  # a counter instead of a state per (state, length)
            return seq(_QUOTE, counted, _QUOTE)
    key = (lo, hi, tuple(spec.languages), tuple(spec.excluded))
    hit = _LENGTHS_BUILT.get(key)
    if hit is not None:
        return hit
    rules = len(grammar.rules)
    out = seq(_QUOTE, _with_length(spec, graph, grammar, hint), _QUOTE)
    if len(grammar.rules) == rules:  # no rules of this grammar in it: valid in any grammar
        _LENGTHS_BUILT.put(key, out)
    return out


class _RecentStrings:
    """The last few strings built by :func:`_with_length` (an automaton with a state per
    position), by their constraints' values, for every conversion in the process. Schemas of
    one family repeat them: Snowplow's ``processor.version``, a semantic-version pattern of at
    most 32 characters, took 13 ms to build each time. Least recently used first out; the
    expressions are rule-free and immutable, so any grammar may hold them. Thread-safe."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[object, ...], Expr] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[object, ...]) -> Expr | None:
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
            return hit

    def put(self, key: tuple[object, ...], expr: Expr) -> None:
        with self._lock:
            self._entries[key] = expr
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)


_LENGTHS_BUILT: Final = _RecentStrings(128)


def _with_length(spec: StringSpec, graph: CharGraph, grammar: Grammar, hint: str) -> Expr:
    """The content of length min_length..max_length as a plain expression (no counter)."""
    lo, hi = spec.min_length, spec.max_length
    if lo > 0 or hi is not None:
        try:
            graph = graph.with_length(lo, hi)
        except OverflowError as exc:
            raise UnsupportedSchemaError(
                "this pattern/format together with minLength/maxLength needs too many states",
                keyword="maxLength" if hi is not None else "minLength",
                pointer=spec.pointer,
            ) from exc
    labeled = graph.labeled()
    body = labeled.to_ir(grammar, hint)
    if body == alt():
        raise _empty(spec)
    return body


def _escape_expr(expr: Expr, memo: dict[int, Expr | None]) -> Expr | None:
    """The JSON spellings of a content expression, rewritten node by node: each subtree that
    is exactly one character class becomes :func:`escaped_chars` of it. None when a node
    splits a character (then the automaton route is needed)."""
    key = id(expr)
    if key in memo:
        return memo[key]
    out: Expr | None
    chars = _one_char(expr)
    if chars is not None:
        out = escaped_chars(chars)
    elif isinstance(expr, Seq):
        items = [_escape_expr(e, memo) for e in expr.items]
        out = None if any(i is None for i in items) else seq(*items)  # type: ignore[arg-type]
    elif isinstance(expr, Alt):
        items = [_escape_expr(e, memo) for e in expr.items]
        out = None if any(i is None for i in items) else alt(*items)  # type: ignore[arg-type]
    elif isinstance(expr, Repeat):
        item = _escape_expr(expr.item, memo)
        out = None if item is None else Repeat(item, expr.min, expr.max)
    else:
        out = None
    memo[key] = out
    return out


def _one_char(expr: Expr) -> CpRanges | None:
    """The code points when ``expr`` matches exactly one whole UTF-8 character, else None."""
    if isinstance(expr, Bytes):
        return expr.ranges if expr.ranges and expr.ranges[-1][1] < 0x80 else None
    if not isinstance(expr, (Alt, Seq)) or not _starts_with_lead_byte(expr):
        return None
    try:
        graph = char_graph(dfa_from_expr(expr, max_states=64))
    except (OverflowError, NotRegular):
        return None
    if len(graph.accept) != 2 or graph.accept[0] or not graph.accept[1] or graph.edges[1]:
        return None
    return graph.edges[0].get(1)


def _starts_with_lead_byte(expr: Expr) -> bool:
    """Cheap filter: only byte sequences shaped like UTF-8 characters can be one character: a
    byte set, or 2 to 4 byte sets of which the first holds a lead byte and the others only
    continuation bytes (a literal ``abc`` inside a pattern never reaches the automaton test)."""
    if isinstance(expr, Bytes):
        return True
    if isinstance(expr, Seq):
        items = expr.items
        if not 1 <= len(items) <= 4 or not all(isinstance(e, Bytes) for e in items):
            return False
        if len(items) == 1:
            return True
        first: Bytes = items[0]  # type: ignore[assignment]
        return bool(first.ranges) and first.ranges[-1][1] >= 0xC2 and all(
            lo >= 0x80 and hi <= 0xBF for e in items[1:] for lo, hi in e.ranges  # type: ignore[union-attr]
        )
    if isinstance(expr, Alt):
        return all(_starts_with_lead_byte(e) for e in expr.items)
    return False


def _repeated_class(spec: StringSpec) -> tuple[CpRanges, int, int | None] | None:
    """(C, m, n) when the only constraint is a pattern that is one character class repeated
    (``^[a-z]{2,64}$``): no automaton of the whole repetition is ever built."""
    if len(spec.languages) != 1 or spec.excluded:
        return None
    lang = spec.languages[0][1]
    if not isinstance(lang, Repeat):
        return None
    try:
        item = char_graph(dfa_from_expr(lang.item, max_states=256))
    except (OverflowError, NotRegular):
        return None
    if (
        len(item.accept) != 2
        or item.accept[0]
        or not item.accept[1]
        or item.edges[1]
        or set(item.edges[0]) != {1}
    ):
        return None
    return item.edges[0][1], lang.min, lang.max


def _empty(spec: StringSpec) -> UnsatisfiableSchemaError:
    keyword = spec.languages[0][0] if spec.languages else "minLength"
    return UnsatisfiableSchemaError(
        "no string satisfies all the string constraints", keyword=keyword, pointer=spec.pointer
    )
