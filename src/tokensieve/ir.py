"""The grammar IR: what every front-end produces and the compiler consumes.

A :class:`Grammar` is a set of named rules with a start rule. Each rule's body is an
expression (:data:`Expr`) over **bytes**:

=====================  ==========================================================
``Bytes(ranges)``      one byte from a set of inclusive byte ranges
``Seq(items)``         concatenation (``Seq(())`` is the empty string, :data:`EMPTY`)
``Alt(items)``         alternation (``Alt(())`` is the empty language, :data:`NOTHING`)
``Repeat(item,m,n)``   ``item`` repeated ``m`` to ``n`` times (``n=None``: unbounded)
``Ref(name)``          the language of another rule; recursion is allowed
``Special(token_id)``  one special token, matched by token id, never by bytes
``Automaton(...)``     a regular language given as a finite automaton over bytes
``Unordered(...)``     items in any order, each at most once, between separators
``Difference(l, r)``   the strings of regular ``l`` that are not strings of regular ``r``
``Seam()``             the empty string, marking a good place for the compiler to cut
``CountedAutomaton``   a path of ``min`` to ``max`` edges through an automaton of *units*
=====================  ==========================================================

Front-ends never decide what is a "lexeme": the compiler finds the regular parts of
the grammar (sub-expressions that reference no recursive rule) and turns them into
byte automata; only the truly context-free skeleton goes to the Earley parser.

Characters are encoded to UTF-8 by the front-ends with :func:`codepoints`, so a
character class becomes a small union of byte-range sequences and tokens that split
a character are handled exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

__all__ = [
    "Alt",
    "Automaton",
    "Bytes",
    "CountedAutomaton",
    "Difference",
    "EMPTY",
    "Expr",
    "Grammar",
    "MAX_COUNT",
    "NOTHING",
    "SEAM",
    "Ref",
    "Repeat",
    "Seam",
    "Seq",
    "Special",
    "Unordered",
    "alt",
    "byte_range",
    "codepoints",
    "literal",
    "optional",
    "seq",
]


class _Node:
    """The base of every node class: a class-level default for the one attribute a consumer
    may attach to a node. Not a dataclass, so the attribute is no field: it takes no part in
    equality, hashing or ``repr``."""

    # What the compiler derives from the node alone (``compiler.lower._NodeFacts``), stored
    # on first use with ``object.__setattr__``; the class default makes the lookup one
    # attribute read on the hot path instead of a dictionary probe.
    _lowering_facts: Any = None
    # The hash of a composite node (Seq, Alt, Repeat, Difference, an automaton) or a byte set,
    # stored on first use: nodes are keys of value-keyed caches, and a tree hashed at every
    # lookup costs its size each time.
    _hash: Any = None


def _remembered_hash(node: _Node, fields: tuple[Any, ...]) -> int:
    h: int | None = node._hash
    if h is None:
        h = hash((type(node), fields))
        object.__setattr__(node, "_hash", h)
    return h


def _hashes_differ(a: _Node, b: _Node) -> bool:
    """Whether both nodes know their hash and the hashes differ (then they are not equal)."""
    ha: int | None = a._hash
    hb: int | None = b._hash
    return ha is not None and hb is not None and ha != hb


# The node classes are frozen dataclasses (fields, ``repr``, immutability), but the frequent
# ones define ``__init__``, ``__eq__`` and ``__hash__`` themselves, with the meaning the
# dataclass would give them: the dataclass-generated methods run as plain Python even in the
# compiled package (a generated ``__init__`` cost five times a compiled one, and a schema
# makes thousands of nodes), and value-keyed caches and ``alt``'s duplicate test compare
# nodes often, at every level. Unequal remembered hashes end a comparison.


def _same_items(a: Seq | Alt, b: object) -> bool:
    """``a == b`` for a Seq or an Alt: same class and items."""
    if a is b:
        return True
    if type(b) is not type(a):
        return False  # (no other type's value equals a node)
    other: Seq | Alt = b  # type: ignore[assignment]
    return not _hashes_differ(a, other) and a.items == other.items


@dataclass(frozen=True)
class Bytes(_Node):
    """One byte from a set given as sorted, disjoint, inclusive ranges ``(lo, hi)``."""

    ranges: tuple[tuple[int, int], ...]

    def __init__(self, ranges: tuple[tuple[int, int], ...]) -> None:
        object.__setattr__(self, "ranges", ranges)

    @staticmethod
    def of(ranges: Iterable[tuple[int, int]]) -> Bytes:
        """Normalize ranges (sort, merge adjacent and overlapping)."""
        merged: list[list[int]] = []
        for lo, hi in sorted(ranges):
            if not (0 <= lo <= hi <= 255):
                raise ValueError(f"bad byte range ({lo}, {hi})")
            if merged and lo <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], hi)
            else:
                merged.append([lo, hi])
        if len(merged) == 1:
            return byte_range(merged[0][0], merged[0][1])
        return Bytes(tuple((lo, hi) for lo, hi in merged))

    def complement(self) -> Bytes:
        out: list[tuple[int, int]] = []
        nxt = 0
        for lo, hi in self.ranges:
            if lo > nxt:
                out.append((nxt, lo - 1))
            nxt = hi + 1
        if nxt <= 255:
            out.append((nxt, 255))
        return Bytes(tuple(out))

    def __contains__(self, byte: object) -> bool:
        return isinstance(byte, int) and any(lo <= byte <= hi for lo, hi in self.ranges)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not Bytes:
            return False  # (no other type's value equals a node)
        return self.ranges == other.ranges

    def __hash__(self) -> int:
        # Remembered as a composite's: the nodes of single bytes are shared by every literal,
        # and a sequence made anew hashes each of its items when it first becomes a key.
        return _remembered_hash(self, self.ranges)


@dataclass(frozen=True)
class Seq(_Node):
    """Concatenation of ``items``."""

    items: tuple[Expr, ...]

    def __init__(self, items: tuple[Expr, ...]) -> None:
        object.__setattr__(self, "items", items)

    def __hash__(self) -> int:
        return _remembered_hash(self, self.items)

    def __eq__(self, other: object) -> bool:
        return _same_items(self, other)


@dataclass(frozen=True)
class Alt(_Node):
    """Alternation of ``items``; no items is the empty language."""

    items: tuple[Expr, ...]

    def __init__(self, items: tuple[Expr, ...]) -> None:
        object.__setattr__(self, "items", items)

    def __hash__(self) -> int:
        return _remembered_hash(self, self.items)

    def __eq__(self, other: object) -> bool:
        return _same_items(self, other)


@dataclass(frozen=True)
class Repeat(_Node):
    """``item`` repeated between ``min`` and ``max`` times (``max=None``: no bound)."""

    item: Expr
    min: int = 0
    max: int | None = None

    def __init__(self, item: Expr, min: int = 0, max: int | None = None) -> None:  # noqa: A002
        if min < 0 or (max is not None and max < min):
            raise ValueError(f"bad repetition bounds {{{min},{max}}}")
        object.__setattr__(self, "item", item)
        object.__setattr__(self, "min", min)
        object.__setattr__(self, "max", max)

    def __hash__(self) -> int:
        return _remembered_hash(self, (self.item, self.min, self.max))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not Repeat:
            return False  # (no other type's value equals a node)
        return (
            not _hashes_differ(self, other)
            and self.min == other.min
            and self.max == other.max
            and self.item == other.item
        )


@dataclass(frozen=True)
class Ref(_Node):
    """The language of the rule called ``name``."""

    name: str

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "name", name)

    def __eq__(self, other: object) -> bool:
        return self is other or (type(other) is Ref and self.name == other.name)

    def __hash__(self) -> int:
        return hash(self.name)


@dataclass(frozen=True)
class Special(_Node):
    """A special token (chat marker, EOS...) matched by its id only."""

    token_id: int

    def __init__(self, token_id: int) -> None:
        object.__setattr__(self, "token_id", token_id)

    def __eq__(self, other: object) -> bool:
        return self is other or (type(other) is Special and self.token_id == other.token_id)

    def __hash__(self) -> int:
        return hash(self.token_id)


@dataclass(frozen=True)
class Automaton(_Node):
    """A regular language as a finite automaton: state 0 starts, and state ``s`` accepts when
    ``accepting[s]``; its edges are ``labels[i]`` (a :class:`Bytes`) to ``targets[i]`` for
    ``i`` in ``range(edge_begin[s], edge_begin[s + 1])``. :meth:`of` makes one from rows
    ``(accepting, ((label, target), ...))``, and :attr:`states` gives those rows back.

    For languages that have a small automaton but no small expression (the complement of a
    set of words, an intersection); the compiler builds its DFA directly.

    Flat, not rows: front-end caches keep automata of thousands of edges alive, and Python's
    cyclic collector walks every tuple that holds a node (an edge ``(label, target)``) at each
    collection, for as long as the automaton lives, while it stops tracking a tuple of numbers
    after its first pass. Rows made the 42 automata that compiling the MaskBench dev split
    leaves in the caches 118,000 tracked tuples, half of everything the collector walked.
    """

    accepting: tuple[bool, ...]
    edge_begin: tuple[int, ...]
    labels: tuple[Bytes, ...]
    targets: tuple[int, ...]

    def __hash__(self) -> int:
        return _remembered_hash(self, (self.accepting, self.edge_begin, self.labels, self.targets))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not Automaton:
            return False  # (no other type's value equals a node)
        return (
            not _hashes_differ(self, other)
            and self.accepting == other.accepting
            and self.edge_begin == other.edge_begin
            and self.targets == other.targets
            and self.labels == other.labels
        )

    def __post_init__(self) -> None:
        n = len(self.accepting)
        if not n:
            raise ValueError("an automaton needs at least one state")
        if len(self.edge_begin) != n + 1 or self.edge_begin[0] != 0 or self.edge_begin[n] != len(self.labels):
            raise ValueError("edge_begin must bound each state's edges")
        if len(self.targets) != len(self.labels):
            raise ValueError("an automaton needs one target per label")
        if any(self.edge_begin[s] > self.edge_begin[s + 1] for s in range(n)):
            raise ValueError("edge_begin must not decrease")
        for label, target in zip(self.labels, self.targets, strict=True):
            if not isinstance(label, Bytes) or not 0 <= target < n:
                raise ValueError("automaton edges are (Bytes, target state) pairs")

    @staticmethod
    def of(states: Sequence[tuple[bool, Sequence[tuple[Bytes, int]]]]) -> Automaton:
        """The automaton whose state ``s`` is ``states[s] = (accepting, ((label, target), ...))``."""
        edge_begin = [0]
        labels: list[Bytes] = []
        targets: list[int] = []
        for _, edges in states:
            for label, target in edges:
                labels.append(label)
                targets.append(target)
            edge_begin.append(len(labels))
        return Automaton(
            tuple(accepting for accepting, _ in states), tuple(edge_begin), tuple(labels), tuple(targets)
        )

    @property
    def states(self) -> tuple[tuple[bool, tuple[tuple[Bytes, int], ...]], ...]:
        """The rows ``(accepting, ((label, target), ...))``, made on each call."""
        labels, targets, begin = self.labels, self.targets, self.edge_begin
        return tuple(
            (
                accepting,
                tuple(zip(labels[begin[s] : begin[s + 1]], targets[begin[s] : begin[s + 1]], strict=True)),
            )
            for s, accepting in enumerate(self.accepting)
        )


@dataclass(frozen=True)
class Unordered(_Node):
    """Items in any order, each at most once, with ``separator`` between two of them.

    The language is every ``x1 sep x2 sep ... sep xk`` (``k >= 0``) where each ``xj`` is a
    string of a *distinct* item, or of ``repeatable`` (which may occur any number of
    times); every item in ``required`` occurs, and ``min_count <= k <= max_count``.
    A JSON object whose members may come in any order is the motivating case: the items
    are the declared members, ``repeatable`` the additional ones.

    As a context-free grammar this needs one rule per subset of items (2^n); the matcher
    instead tracks the set of items already written in its parse state, so n may be large.
    Items, ``repeatable`` and ``separator`` must not derive the empty string.
    """

    items: tuple[Expr, ...]
    separator: Expr
    required: frozenset[int] = frozenset()
    repeatable: Expr | None = None
    min_count: int = 0
    max_count: int | None = None

    def __init__(
        self,
        items: tuple[Expr, ...],
        separator: Expr,
        required: frozenset[int] = frozenset(),
        repeatable: Expr | None = None,
        min_count: int = 0,
        max_count: int | None = None,
    ) -> None:
        if any(not 0 <= i < len(items) for i in required):
            raise ValueError("required indices must name items")
        if min_count < 0 or (max_count is not None and max_count < min_count):
            raise ValueError(f"bad count bounds [{min_count}, {max_count}]")
        object.__setattr__(self, "items", items)
        object.__setattr__(self, "separator", separator)
        object.__setattr__(self, "required", required)
        object.__setattr__(self, "repeatable", repeatable)
        object.__setattr__(self, "min_count", min_count)
        object.__setattr__(self, "max_count", max_count)

    def _fields(self) -> tuple[Any, ...]:
        return (self.items, self.separator, self.required, self.repeatable, self.min_count, self.max_count)

    def __eq__(self, other: object) -> bool:
        return self is other or (type(other) is Unordered and self._fields() == other._fields())

    def __hash__(self) -> int:
        return hash(self._fields())


@dataclass(frozen=True)
class Difference(_Node):
    """The strings of ``left`` that are not strings of ``right``; both must be regular
    (reach no recursive rule and no special token).

    For "any JSON string except these property names" in every spelling: the compiler
    determinizes both sides natively and takes their product, which is much cheaper than
    building the complement as an expression.
    """

    left: Expr
    right: Expr

    def __init__(self, left: Expr, right: Expr) -> None:
        object.__setattr__(self, "left", left)
        object.__setattr__(self, "right", right)

    def __hash__(self) -> int:
        return _remembered_hash(self, (self.left, self.right))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not Difference:
            return False  # (no other type's value equals a node)
        return not _hashes_differ(self, other) and self.left == other.left and self.right == other.right


@dataclass(frozen=True)
class Seam(_Node):
    """The empty string, as an item of a :class:`Seq`: a hint that the compiler should end one
    terminal here and start another, because the pieces on either side recur elsewhere.

    A JSON object member ``"key" ws ":" ws value`` has seams around ``ws ":" ws``: the key
    and often the value are particular to one schema, while ``ws ":" ws`` recurs in every
    member of every schema, so its automaton and token index are built once per process
    instead of once per member. A
    sequence with seams also cuts the sequence it is an item of (directly or through a rule
    reference): it ends the run of items before it at its first seam and starts a new one
    after its end. Nor is any other node holding a seam made one terminal (an alternation of
    optional members, a repetition of objects, an object in a value): the compiler lowers it
    by its structure, down to parts that hold none. The language never changes; a seam in an
    operand of a :class:`Difference`, which is one automaton whatever it holds, is ignored.
    """

    # Written out, as for the other frequent nodes: every object member holds two seams, and
    # the dataclass methods would run as plain Python each time a member is hashed.
    def __eq__(self, other: object) -> bool:
        return type(other) is Seam

    def __hash__(self) -> int:
        return 0x5EA3


@dataclass(frozen=True)
class CountedAutomaton(_Node):
    """The words spelled by a path from state 0 to an accepting state of ``units`` that takes
    between ``min`` and ``max`` edges (``max=None``: no bound).

    ``units[s]`` is ``(accepting, ((label, target), ...))``; each label is a regular
    expression matching one *unit*, a JSON string character in every spelling. The labels
    leaving a state must be prefix-free and match disjoint words, so the number of units in a
    word is fixed by its bytes. A ``pattern`` with a ``maxLength`` is the motivating case: the
    compiler runs the automaton with a counter instead of one state per (state, length).
    """

    units: tuple[tuple[bool, tuple[tuple[Expr, int], ...]], ...]
    min: int = 0
    max: int | None = None
    # The same language without a counter, built on demand by the front-end that made the
    # node, for consumers that need a plain regular expression (a set difference); None when
    # there is none. Not part of the node's value. It takes the grammar to add rules to
    # rather than holding one: the grammar holds this node, and a cycle between them would
    # keep the whole grammar alive until the garbage collector runs.
    expanded: Callable[[Grammar], Expr] | None = field(default=None, compare=False, repr=False)

    def __hash__(self) -> int:
        return _remembered_hash(self, (self.units, self.min, self.max))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not CountedAutomaton:
            return False  # (no other type's value equals a node)
        return (
            not _hashes_differ(self, other)
            and self.min == other.min
            and self.max == other.max
            and self.units == other.units
        )

    def __post_init__(self) -> None:
        if not self.units:
            raise ValueError("a counted automaton needs at least one state")
        if any(not 0 <= target < len(self.units) for _, edges in self.units for _, target in edges):
            raise ValueError("counted automaton edge targets must name states")
        if self.min < 0 or (self.max is not None and self.max < self.min):
            raise ValueError(f"bad count bounds [{self.min}, {self.max}]")


Expr = (
    Bytes | Seq | Alt | Repeat | Ref | Special | Automaton | Unordered | Difference | Seam | CountedAutomaton
)

SEAM: Final[Expr] = Seam()

MAX_COUNT: Final = 2**31 - 1
"""The largest count the compiler runs (its counters are int32): an upper bound of a
``Repeat``, ``Unordered`` or ``CountedAutomaton`` past it is read as no bound (only an output
of more than 2^31 - 1 items could tell them apart, and no generation writes one), and a lower
bound past it is refused with ``LimitExceeded``. Front-ends read such upper bounds in their
sources (``"maxLength": 4294967295``, a uint32 maximum, is common) the same way."""

EMPTY: Final[Expr] = Seq(())
NOTHING: Final[Expr] = Alt(())
_SINGLE_BYTES: Final[tuple[Bytes, ...]] = tuple(Bytes(((b, b),)) for b in range(256))

# One shared node per byte range lo..hi, made on first use (key ``lo << 8 | hi``). UTF-8
# character classes, digit ranges and escapes are made of a few hundred distinct ranges but
# build hundreds of thousands of nodes: sharing them keeps what the compiler derives from a
# node (stored on the node) to one copy, and keeps the caches of expressions small for
# Python's cyclic collector, which walks every node they hold at each full collection. A dict,
# not a list of all 65,536 ranges: the collector visits every slot of a list at each collection
# (half a megabyte of pointers, streamed through the CPU caches), and a process meets a few
# hundred ranges.
_BYTE_RANGES: Final[dict[int, Bytes]] = {b << 8 | b: _SINGLE_BYTES[b] for b in range(256)}


def byte_range(lo: int, hi: int) -> Bytes:
    """The (shared) node of one byte from ``lo`` to ``hi`` inclusive."""
    if not 0 <= lo <= hi <= 255:
        raise ValueError(f"bad byte range ({lo}, {hi})")
    node = _BYTE_RANGES.get(lo << 8 | hi)
    if node is None:  # (two threads may both make one: equal values, either is kept)
        node = _BYTE_RANGES.setdefault(lo << 8 | hi, Bytes(((lo, hi),)))
    return node


@dataclass
class Grammar:
    """Named rules and the start rule. ``rules`` maps a name to its body."""

    rules: dict[str, Expr] = field(default_factory=dict)
    start: str = "root"

    def add(self, name: str, body: Expr) -> Ref:
        """Add (or replace) a rule and return a reference to it."""
        self.rules[name] = body
        return Ref(name)

    def fresh_name(self, hint: str) -> str:
        """A rule name not yet used, derived from ``hint``."""
        if hint not in self.rules:
            return hint
        i = 1
        while f"{hint}_{i}" in self.rules:
            i += 1
        return f"{hint}_{i}"


# ----------------------------------------------------------------------------- builders


def seq(*items: Expr) -> Expr:
    """Concatenation, flattening nested sequences and dropping empty strings."""
    flat: list[Expr] = []
    for it in items:
        if isinstance(it, Seq):
            flat.extend(it.items)
        else:
            flat.append(it)
    for it in flat:
        if isinstance(it, Alt) and not it.items:  # NOTHING: the empty language absorbs the rest
            return NOTHING
    return flat[0] if len(flat) == 1 else Seq(tuple(flat))


def alt(*items: Expr) -> Expr:
    """Alternation, flattening nested alternations and dropping duplicates.

    Duplicates are found by identity, and by equality among the first few items only (a
    repeated alternative never changes the language, so finding them all is not worth a
    comparison per pair). Equality is tested only between items of equal hash: composite
    nodes remember their hash, while ``==`` walks both trees down to the first difference,
    and the dataclass ``__eq__`` at every level runs as plain Python.
    """
    if len(items) == 1 and not isinstance(items[0], Alt):
        return items[0]  # (the usual alternation of a value's types: one type)
    if len(items) == 2 and not isinstance(items[0], Alt) and not isinstance(items[1], Alt):
        # The usual call (``optional`` is one), as the loop below treats it without its
        # sets: nodes of different classes are never equal, so their hashes are not needed.
        a, b = items
        if a is b or (type(a) is type(b) and hash(a) == hash(b) and a == b):
            return a
        return Alt((a, b))
    flat: list[Expr] = []
    seen: set[int] = set()
    by_hash: dict[int, list[Expr]] = {}  # the first items, for the equality test
    for it in items:
        for sub in it.items if isinstance(it, Alt) else (it,):
            if id(sub) in seen:
                continue
            if len(flat) <= 32:
                h = hash(sub)
                same_hash = by_hash.get(h)
                if same_hash is None:
                    by_hash[h] = [sub]
                elif sub in same_hash:
                    continue
                else:
                    same_hash.append(sub)
            seen.add(id(sub))
            flat.append(sub)
    return flat[0] if len(flat) == 1 else Alt(tuple(flat))


def optional(item: Expr) -> Expr:
    return alt(item, EMPTY)


@lru_cache(maxsize=4096)
def literal(text: str | bytes) -> Expr:
    """The exact byte string (``str`` is UTF-8 encoded).

    Remembered, and built from one shared node per byte: expressions are immutable, and the
    compiler keeps what it derives from a node on the node, so shared nodes are analysed once."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return seq(*(_SINGLE_BYTES[b] for b in data))


_UTF8_BOUNDS: Final = ((0, 0x7F), (0x80, 0x7FF), (0x800, 0xFFFF), (0x10000, 0x10FFFF))


def codepoints(ranges: Sequence[tuple[int, int]]) -> Expr:
    """One UTF-8 encoded character whose code point lies in one of ``ranges``.

    Surrogates (U+D800..U+DFFF) are never produced: they are not valid UTF-8.
    The result is a union of sequences of byte ranges, the usual UTF-8 range split.
    """
    parts: list[Expr] = []
    for lo, hi in _merge_codepoint_ranges(ranges):
        for a, b in ((lo, min(hi, 0xD7FF)), (max(lo, 0xE000), hi)):
            if a > b:
                continue
            for blo, bhi in _UTF8_BOUNDS:
                x, y = max(a, blo), min(b, bhi)
                if x <= y:
                    parts.extend(_utf8_same_length(x, y))
    return alt(*parts) if parts else NOTHING


def _merge_codepoint_ranges(ranges: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        lo, hi = max(lo, 0), min(hi, 0x10FFFF)
        if lo > hi:
            continue
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return [(lo, hi) for lo, hi in out]


def _encode(cp: int) -> bytes:
    return chr(cp).encode("utf-8", "surrogatepass")


# One shared node per sequence of byte ranges that a UTF-8 split makes, for the reasons of
# _BYTE_RANGES: every character class splits into sequences from the same few thousand
# (``[\xe1-\xec][\x80-\xbf][\x80-\xbf]``...), and the caches of classes kept one copy each.
# Bounded: past it, new sequences are made but not kept.
_RANGE_SEQS: Final[dict[tuple[Expr, ...], Expr]] = {}
_RANGE_SEQS_MAX: Final = 16384


def _range_seq(items: tuple[Expr, ...]) -> Expr:
    node = _RANGE_SEQS.get(items)
    if node is None:
        node = seq(*items)
        if len(_RANGE_SEQS) < _RANGE_SEQS_MAX:  # (two threads may both make one: either is kept)
            node = _RANGE_SEQS.setdefault(items, node)
    return node


def _utf8_same_length(lo: int, hi: int) -> list[Expr]:
    """Split [lo, hi] (same UTF-8 length) into sequences of byte ranges."""
    if lo > hi:
        return []
    a, b = _encode(lo), _encode(hi)
    n = len(a)
    if n == 1:
        return [byte_range(a[0], b[0])]
    # Find the longest suffix where lo is all-minimal (0x80) and hi all-maximal (0xBF)
    # continuation bytes: that range is one sequence of byte ranges.
    for i in range(1, n):
        suffix_full = all(a[j] == 0x80 for j in range(i, n)) and all(b[j] == 0xBF for j in range(i, n))
        if suffix_full and a[: i - 1] == b[: i - 1]:
            items: list[Expr] = [_SINGLE_BYTES[a[j]] for j in range(i - 1)]
            items.append(byte_range(a[i - 1], b[i - 1]))
            items.extend(byte_range(0x80, 0xBF) for _ in range(i, n))
            return [_range_seq(tuple(items))]
    if a[: n - 1] == b[: n - 1]:
        return [_range_seq((*(_SINGLE_BYTES[c] for c in a[: n - 1]), byte_range(a[-1], b[-1])))]
    # Split at the boundary where the first differing byte changes.
    k = next(j for j in range(n) if a[j] != b[j])
    # Largest code point sharing a[:k+1] as prefix.
    shift = 6 * (n - 1 - k)
    mid = lo | ((1 << shift) - 1)
    if mid >= hi:
        mid = hi
    return _utf8_same_length(lo, mid) + _utf8_same_length(mid + 1, hi)
