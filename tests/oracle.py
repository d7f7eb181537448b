"""The reference oracle: a small, obviously correct recognizer for :class:`tokensieve.ir.Grammar`.

Differential tests compare the real engine against this module, so it favours plain
textbook algorithms over speed:

1. :func:`to_cfg` turns the IR into a plain context-free grammar whose terminals are
   single byte sets or single special tokens. ``Seq`` becomes one production, ``Alt``
   one production per item, ``Repeat`` is unrolled into rules (``X{m,n}`` is ``m`` copies
   of ``X`` followed by a chain of ``n - m`` optional copies, ``X{m,}`` is ``m`` copies
   followed by a left-recursive star rule). ``Unordered`` is expanded into one rule per
   (set of items written, count, before/after an item): the textbook 2^n construction
   that the engine avoids, so the oracle only takes small ``n``. ``Difference`` is
   determinized here by a plain subset construction over both operands (their rules
   inlined, nested differences determinized first) and written as one right-linear rule
   per reachable pair of subsets.
2. Unproductive symbols (nonterminals that derive no terminal string at all, and empty
   byte sets) and every production that mentions one are removed.
3. An Earley recognizer with the Aycock–Horspool treatment of nullable nonterminals
   (predicting a nullable ``B`` in ``A -> α • B β`` also adds ``A -> α B • β``) reads the
   input one *piece* at a time, where a piece is a byte or a special token id.

**Why "the Earley set is non-empty" is exactly "viable prefix".** Every item
``[A -> α • β, i]`` in set ``j`` satisfies the Earley invariant: ``S =>* x[:i] A γ`` for
some ``γ`` and ``α =>* x[i:j]``. Since every symbol left after step 2 is productive,
``β`` and ``γ`` each derive some terminal string ``w``, so ``x[:j] w`` is a sentence:
any item at all proves viability. Conversely, if ``x[:j]`` is the prefix of a sentence,
the derivation of that sentence yields an item in set ``j`` (Earley's completeness). Sets
after the first are filled only by scanning, so "set ``j`` is non-empty" is the test. For
``j = 0`` the set holds predictions of the start symbol, which exist iff the start
symbol survived step 2, i.e. iff the language is not empty.

Special tokens are terminals that only the matching integer piece can scan; they are
never matched by bytes, even if a token's text looks the same.

Items point at their origin *set* rather than an index, and sets are hash-consed (equal
items, one object). The scan of a set is then a pure function of the set, so it is
memoized: a vocabulary-trie walk through a JSON string visits mostly known states.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from tokensieve.ir import (
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
)

__all__ = ["CFG", "Oracle", "TokenTrie", "to_cfg"]

Piece = int | bytes
"""An input piece for the oracle: ``bytes`` are read byte by byte, an ``int`` is a special token id."""


@dataclass(frozen=True)
class ByteSet:
    """A terminal: one byte from ``members``."""

    members: frozenset[int]


@dataclass(frozen=True)
class SpecialTok:
    """A terminal: the special token ``token_id``."""

    token_id: int


Symbol = str | ByteSet | SpecialTok  # a str is a nonterminal


@dataclass
class CFG:
    """A plain context-free grammar: ``productions[lhs]`` lists right-hand sides."""

    start: str
    productions: dict[str, list[tuple[Symbol, ...]]] = field(default_factory=dict)


def to_cfg(grammar: Grammar) -> CFG:
    """Translate the IR into a :class:`CFG` (before removing unproductive symbols).

    The same sub-expression object (shared by the front-ends) gets one nonterminal, which
    keeps ``Repeat`` unrolling of repeated structure small.
    """
    if grammar.start not in grammar.rules:
        raise KeyError(f"start rule {grammar.start!r} is not defined")
    cfg = CFG(start=_rule_nt(grammar.start))
    # Keyed by identity: hashing a shared expression DAG by value walks it as a tree, which
    # can take exponential time (the grammar keeps every node alive while this runs).
    memo: dict[int, Symbol] = {}

    def new_nt(rhss: list[tuple[Symbol, ...]]) -> str:
        name = f"#{len(cfg.productions)}"
        cfg.productions[name] = rhss
        return name

    def rhs_list(expr: Expr) -> list[tuple[Symbol, ...]]:
        # The right-hand sides that say "expr": Alt of Seq becomes one production per
        # item, without a nonterminal per Seq (fewer Earley items, same language).
        alts = expr.items if isinstance(expr, Alt) else (expr,)
        return [tuple(symbol(x) for x in it.items) if isinstance(it, Seq) else (symbol(it),) for it in alts]

    def symbol(expr: Expr) -> Symbol:
        if id(expr) in memo:
            return memo[id(expr)]
        result: Symbol
        if isinstance(expr, Bytes):
            result = ByteSet(frozenset(b for lo, hi in expr.ranges for b in range(lo, hi + 1)))
        elif isinstance(expr, Special):
            result = SpecialTok(expr.token_id)
        elif isinstance(expr, Ref):
            if expr.name not in grammar.rules:
                raise KeyError(f"reference to undefined rule {expr.name!r}")
            result = _rule_nt(expr.name)
        elif isinstance(expr, (Seq, Alt)):
            result = new_nt(rhs_list(expr))
        elif isinstance(expr, Repeat):
            result = _repeat(symbol(expr.item), expr.min, expr.max, new_nt, cfg)
        elif isinstance(expr, Automaton):
            # A right-linear grammar: one nonterminal per state, `s -> label target | ε`.
            names = [new_nt([]) for _ in expr.states]
            for (accepting, edges), name in zip(expr.states, names, strict=True):
                cfg.productions[name] = [(symbol(label), names[target]) for label, target in edges]
                if accepting:
                    cfg.productions[name].append(())
            result = names[0]
        elif isinstance(expr, Unordered):
            result = _unordered(expr, symbol, new_nt, cfg)
        elif isinstance(expr, Difference):
            result = _difference(expr, grammar.rules, new_nt, cfg)
        elif isinstance(expr, Seam):
            result = new_nt([()])  # the empty string
        elif isinstance(expr, CountedAutomaton):
            result = _counted_automaton(expr, symbol, new_nt, cfg)
        else:
            raise TypeError(f"not an IR expression: {expr!r}")
        memo[id(expr)] = result
        return result

    for name, body in grammar.rules.items():
        cfg.productions[_rule_nt(name)] = rhs_list(body)
    return cfg


def _counted_automaton(
    expr: CountedAutomaton,
    symbol: Callable[[Expr], Symbol],
    new_nt: Callable[[list[tuple[Symbol, ...]]], str],
    cfg: CFG,
) -> str:
    """Right-linear rules over (state, units read): ``N(s, k) -> label N(t, k + 1)``, and the
    empty string where s accepts and k >= min. Without a maximum, k stops counting at min."""
    cap = expr.max if expr.max is not None else expr.min
    names = {(s, k): new_nt([]) for s in range(len(expr.units)) for k in range(cap + 1)}
    for (s, k), name in names.items():
        accepting, edges = expr.units[s]
        if expr.max is None or k < expr.max:
            nk = k + 1 if expr.max is not None else min(k + 1, cap)
            cfg.productions[name] = [(symbol(label), names[(t, nk)]) for label, t in edges]
        if accepting and k >= expr.min:
            cfg.productions[name].append(())
    return names[(0, 0)]


def _rule_nt(name: str) -> str:
    # Rule names get a prefix so they can never collide with generated "#n" names.
    return "rule:" + name


def _repeat(
    item: Symbol, lo: int, hi: int | None, new_nt: Callable[[list[tuple[Symbol, ...]]], str], cfg: CFG
) -> str:
    """``item{lo,hi}``: ``lo`` copies, then optional copies (a chain) or a star rule."""
    if hi is None:  # star -> ε | star item (left recursion keeps Earley sets small)
        star = new_nt([()])
        cfg.productions[star].append((star, item))
        tail: tuple[Symbol, ...] = (star,)
    else:
        tail = ()
        for _ in range(hi - lo):  # opt_k -> ε | item opt_{k-1}
            tail = (new_nt([(), (item, *tail)]),)
    return new_nt([(item,) * lo + tail])


class _EpsilonNFA:
    """Thompson's construction over bytes, for the operands of ``Difference``."""

    def __init__(self, rules: Mapping[str, Expr]) -> None:
        self.rules = rules
        self.eps: list[list[int]] = []
        self.edges: list[list[tuple[frozenset[int], int]]] = []

    def state(self) -> int:
        self.eps.append([])
        self.edges.append([])
        return len(self.eps) - 1

    def add(self, expr: Expr, a: int, b: int, depth: int = 0) -> None:
        if depth > 10_000:
            raise ValueError("Difference operands must be regular (a rule refers to itself)")
        if isinstance(expr, Bytes):
            self.edges[a].append((frozenset(x for lo, hi in expr.ranges for x in range(lo, hi + 1)), b))
        elif isinstance(expr, Seq):
            cur = a
            for item in expr.items:
                nxt = self.state()
                self.add(item, cur, nxt, depth + 1)
                cur = nxt
            self.eps[cur].append(b)
        elif isinstance(expr, Alt):
            for item in expr.items:
                self.add(item, a, b, depth + 1)
        elif isinstance(expr, Repeat):
            cur = self.state()  # fresh: a loop on `a` would also loop before a sibling's path
            self.eps[a].append(cur)
            for _ in range(expr.min):
                nxt = self.state()
                self.add(expr.item, cur, nxt, depth + 1)
                cur = nxt
            if expr.max is None:
                self.add(expr.item, cur, cur, depth + 1)
            else:
                for _ in range(expr.max - expr.min):
                    nxt = self.state()
                    self.add(expr.item, cur, nxt, depth + 1)
                    self.eps[cur].append(b)
                    cur = nxt
            self.eps[cur].append(b)
        elif isinstance(expr, Ref):
            self.add(self.rules[expr.name], a, b, depth + 1)
        elif isinstance(expr, Seam):
            self.eps[a].append(b)
        elif isinstance(expr, Automaton):
            inner = [self.state() for _ in expr.states]
            self.eps[a].append(inner[0])
            for (accepting, edges), s in zip(expr.states, inner, strict=True):
                for label, target in edges:
                    self.add(label, s, inner[target], depth + 1)
                if accepting:
                    self.eps[s].append(b)
        elif isinstance(expr, Difference):
            trans, accept = _determinize_difference(expr, self.rules)
            inner = [self.state() for _ in trans]
            self.eps[a].append(inner[0])
            for s, row in enumerate(trans):
                for byte, t in row.items():
                    self.edges[inner[s]].append((frozenset((byte,)), inner[t]))
                if accept[s]:
                    self.eps[inner[s]].append(b)
        else:
            raise ValueError(f"Difference operands must be regular, not {type(expr).__name__}")

    def closure(self, states: Iterable[int]) -> frozenset[int]:
        seen = set(states)
        todo = list(seen)
        while todo:
            for t in self.eps[todo.pop()]:
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
        return frozenset(seen)

    def moves(self, states: frozenset[int]) -> dict[int, frozenset[int]]:
        """For every byte that leads somewhere: the closure of where it leads."""
        targets: dict[int, set[int]] = {}
        for s in states:
            for label, t in self.edges[s]:
                for byte in label:
                    targets.setdefault(byte, set()).add(t)
        closed: dict[frozenset[int], frozenset[int]] = {}
        out = {}
        for byte, ts in targets.items():
            key = frozenset(ts)
            if key not in closed:
                closed[key] = self.closure(key)
            out[byte] = closed[key]
        return out


def _determinize_difference(
    expr: Difference, rules: Mapping[str, Expr]
) -> tuple[list[dict[int, int]], list[bool]]:
    """A DFA for ``expr`` (state 0 starts): subsets of both operands' NFAs, reachable pairs."""
    nfa = _EpsilonNFA(rules)
    left = (nfa.state(), nfa.state())
    right = (nfa.state(), nfa.state())
    nfa.add(expr.left, *left)
    nfa.add(expr.right, *right)
    index: dict[tuple[frozenset[int], frozenset[int]], int] = {}
    order: list[tuple[frozenset[int], frozenset[int]]] = []

    def number(key: tuple[frozenset[int], frozenset[int]]) -> int:
        if key not in index:
            index[key] = len(order)
            order.append(key)
        return index[key]

    number((nfa.closure([left[0]]), nfa.closure([right[0]])))
    trans: list[dict[int, int]] = []
    accept: list[bool] = []
    i = 0
    while i < len(order):
        ls, rs = order[i]
        i += 1
        accept.append(left[1] in ls and right[1] not in rs)
        right_moves = nfa.moves(rs)
        row = {byte: number((nl, right_moves.get(byte, frozenset()))) for byte, nl in nfa.moves(ls).items()}
        trans.append(row)
    return trans, accept


def _difference(
    expr: Difference, rules: Mapping[str, Expr], new_nt: Callable[[list[tuple[Symbol, ...]]], str], cfg: CFG
) -> str:
    """One rule per DFA state: ``state -> byte next | ε``."""
    trans, accept = _determinize_difference(expr, rules)
    names = [new_nt([]) for _ in trans]
    for s, row in enumerate(trans):
        by_target: dict[int, set[int]] = {}
        for byte, t in row.items():
            by_target.setdefault(t, set()).add(byte)
        cfg.productions[names[s]] = [(ByteSet(frozenset(bs)), names[t]) for t, bs in by_target.items()]
        if accept[s]:
            cfg.productions[names[s]].append(())
    return names[0]


MAX_ORACLE_UNORDERED_ITEMS = 8


def _unordered(
    expr: Unordered,
    symbol: Callable[[Expr], Symbol],
    new_nt: Callable[[list[tuple[Symbol, ...]]], str],
    cfg: CFG,
) -> str:
    """``Unordered`` as plain rules: ``before(S, c)`` and ``after(S, c)`` for every set ``S``
    of items written and count ``c`` (capped where larger counts behave alike)."""
    n = len(expr.items)
    if n > MAX_ORACLE_UNORDERED_ITEMS:
        raise ValueError(f"the oracle expands Unordered into 2^n rules; {n} items is too many")
    items = [symbol(it) for it in expr.items]
    sep = symbol(expr.separator)
    rest = None if expr.repeatable is None else symbol(expr.repeatable)
    cap = expr.max_count if expr.max_count is not None else expr.min_count
    names: dict[tuple[str, int, int], str] = {}

    def state(phase: str, written: int, count: int) -> str:
        key = (phase, written, count)
        if key in names:
            return names[key]
        name = names[key] = new_nt([])
        rhss: list[tuple[Symbol, ...]] = []
        if phase == "before":
            if expr.max_count is None or count + 1 <= expr.max_count:
                nxt = min(count + 1, cap)
                fresh = [i for i in range(n) if not written >> i & 1]
                rhss += [(items[i], state("after", written | 1 << i, nxt)) for i in fresh]
                if rest is not None:
                    rhss.append((rest, state("after", written, nxt)))
        else:
            if all(written >> i & 1 for i in expr.required) and count >= expr.min_count:
                rhss.append(())
            rhss.append((sep, state("before", written, count)))
        cfg.productions[name] = rhss
        return name

    start = [(state("before", 0, 0),)]
    if not expr.required and expr.min_count == 0:
        start.append(())
    return new_nt(start)


def _productive(productions: Mapping[str, list[tuple[Symbol, ...]]]) -> set[str]:
    """Nonterminals that derive at least one terminal string (a plain fixpoint)."""
    productive: set[str] = set()
    changed = True
    while changed:
        changed = False
        for lhs, rhss in productions.items():
            if lhs in productive:
                continue
            if any(all(_symbol_productive(s, productive) for s in rhs) for rhs in rhss):
                productive.add(lhs)
                changed = True
    return productive


def _symbol_productive(sym: Symbol, productive: set[str]) -> bool:
    """A terminal is productive unless it is an empty byte set; a nonterminal if in the set."""
    if isinstance(sym, str):
        return sym in productive
    return not isinstance(sym, ByteSet) or bool(sym.members)


def _nullable(productions: Mapping[str, list[tuple[Symbol, ...]]]) -> set[str]:
    """Nonterminals that derive the empty string (a plain fixpoint)."""
    nullable: set[str] = set()
    changed = True
    while changed:
        changed = False
        for lhs, rhss in productions.items():
            if lhs not in nullable and any(all(s in nullable for s in rhs) for rhs in rhss):
                nullable.add(lhs)
                changed = True
    return nullable


class _EarleySet:
    """One Earley set: its items, indexed by the symbol after the dot, and memoized scans.

    An item is ``(production, dot, origin)`` where ``origin`` is the Earley set in which
    the item's production was predicted, or ``None`` for "this set". Sets are
    hash-consed by :meth:`Oracle._intern` (equal items, same object) so that a scan can
    be memoized per set: the result of scanning depends on nothing but the items and
    the sets they point to.
    """

    def __init__(self, prods: list[tuple[str, tuple[Symbol, ...]]]):
        self._prods = prods
        self.items: list[Item] = []
        self.seen: set[Item] = set()
        self.waiting: dict[Symbol, list[Item]] = {}
        self.accepts = False  # holds the completed start rule predicted in the initial set
        self.next: dict[tuple[bool, int], _EarleySet] = {}  # memoized scans

    def add(self, item: Item) -> None:
        if item in self.seen:
            return
        self.seen.add(item)
        self.items.append(item)
        rhs = self._prods[item[0]][1]
        if item[1] < len(rhs):
            self.waiting.setdefault(rhs[item[1]], []).append(item)


# An Earley item: (production index, dot position, origin set or None for "this set").
Item = tuple[int, int, "_EarleySet | None"]


class Oracle:
    """Recognizes viable prefixes and sentences of an IR grammar; computes exact masks.

    Inputs are ``bytes`` or sequences of pieces (``bytes`` or ``int`` special token ids).
    """

    def __init__(self, grammar: Grammar):
        cfg = to_cfg(grammar)
        productive = _productive(cfg.productions)
        self._prods: list[tuple[str, tuple[Symbol, ...]]] = []
        self._by_lhs: dict[str, list[int]] = {}
        for lhs, rhss in cfg.productions.items():
            if lhs not in productive:
                continue
            for rhs in rhss:
                if all(_symbol_productive(s, productive) for s in rhs):
                    self._by_lhs.setdefault(lhs, []).append(len(self._prods))
                    self._prods.append((lhs, rhs))
        kept = {lhs: [self._prods[i][1] for i in indices] for lhs, indices in self._by_lhs.items()}
        self._nullable = _nullable(kept)
        self._start = cfg.start
        self._interned: dict[frozenset[Item], _EarleySet] = {}
        self._dead = _EarleySet(self._prods)
        self._initial = self._closure([(p, 0, None) for p in self._by_lhs.get(cfg.start, [])], initial=True)
        self._tries: dict[int, tuple[object, TokenTrie]] = {}

    # ------------------------------------------------------------------ Earley core

    def _closure(self, seeds: Iterable[Item], initial: bool = False) -> _EarleySet:
        """A new set from its scanned (or initial) ``seeds``: predict and complete to a fixpoint."""
        current = _EarleySet(self._prods)
        for item in seeds:
            current.add(item)
        items = current.items
        k = 0
        while k < len(items):
            prod, dot, origin = items[k]
            k += 1
            lhs, rhs = self._prods[prod]
            if dot < len(rhs):
                nxt = rhs[dot]
                if isinstance(nxt, str):  # predict
                    for p in self._by_lhs.get(nxt, ()):
                        current.add((p, 0, None))
                    if nxt in self._nullable:  # Aycock–Horspool: skip over a nullable symbol
                        current.add((prod, dot + 1, origin))
            else:  # complete: advance every item in the origin set waiting on lhs
                if lhs == self._start and (origin is None if initial else origin is self._initial):
                    current.accepts = True
                if origin is None:  # lhs derived the empty string here
                    for p2, d2, o2 in list(current.waiting.get(lhs, ())):
                        current.add((p2, d2 + 1, o2))
                else:  # an origin-set item's own "None" origin means that set
                    for p2, d2, o2 in origin.waiting.get(lhs, ()):
                        current.add((p2, d2 + 1, o2 or origin))
        return self._intern(current)

    def _intern(self, new: _EarleySet) -> _EarleySet:
        # Every set after the initial one holds an item whose origin is a real set (its
        # scanned seeds), while the initial set's origins are all None: so equal items
        # also mean equal ``accepts``.
        return self._interned.setdefault(frozenset(new.items), new)

    def _scan(self, current: _EarleySet, piece: int, special: bool) -> _EarleySet:
        """The next set after reading one byte (``special=False``) or one special token."""
        key = (special, piece)
        if key in current.next:
            return current.next[key]
        seeds: list[Item] = []
        for sym, waiting in current.waiting.items():
            if special:
                ok = isinstance(sym, SpecialTok) and sym.token_id == piece
            else:
                ok = isinstance(sym, ByteSet) and piece in sym.members
            if ok:
                seeds.extend((prod, dot + 1, origin or current) for prod, dot, origin in waiting)
        result = self._closure(seeds) if seeds else self._dead
        current.next[key] = result
        return result

    def _run(self, data: bytes | Sequence[Piece]) -> _EarleySet:
        """The last Earley set after reading ``data`` (an empty set on failure)."""
        current = self._initial
        for kind, value in _flatten(data):
            if not current.items:
                break
            current = self._scan(current, value, special=kind == "special")
        return current

    # ------------------------------------------------------------------ public API

    @property
    def is_empty_language(self) -> bool:
        """True when no input at all is a sentence (the start rule is unproductive)."""
        return not self._initial.items

    def is_viable_prefix(self, data: bytes | Sequence[Piece]) -> bool:
        """Some continuation of ``data`` (possibly none) is a sentence."""
        return bool(self._run(data).items)

    def is_complete(self, data: bytes | Sequence[Piece]) -> bool:
        """``data`` itself is a sentence of the grammar."""
        return self._run(data).accepts

    def expected_specials(self, data: bytes | Sequence[Piece]) -> set[int]:
        """Special token ids that may come right after ``data``."""
        return {sym.token_id for sym in self._run(data).waiting if isinstance(sym, SpecialTok)}

    def mask(
        self,
        prefix: bytes | Sequence[Piece],
        vocab_tokens: Sequence[bytes],
        special_ids: Iterable[int] = (),
        eos_ids: Iterable[int] = (),
    ) -> set[int]:
        """The exact set of token ids allowed after ``prefix``.

        ``vocab_tokens[i]`` is the byte text of token ``i``. A token is allowed when:

        - it is not special and its bytes extend ``prefix`` to a viable prefix (a token
          with empty bytes makes no progress and is never allowed);
        - it is special (in ``special_ids``) and the grammar expects that special token
          next — a special token is never matched by its text;
        - it is an EOS id and ``prefix`` is complete.

        An unviable ``prefix`` allows nothing. The per-token check walks a byte trie of
        the vocabulary and scans one byte per trie edge, so a shared token prefix is
        parsed once and a dead subtree is skipped whole; memoized scans make repeated
        states (e.g. inside a JSON string) cost a dictionary lookup.
        """
        specials = set(special_ids)
        current = self._run(prefix)
        if not current.items:
            return set()
        allowed: set[int] = set()
        if current.accepts:
            allowed.update(eos_ids)
        expected = {sym.token_id for sym in current.waiting if isinstance(sym, SpecialTok)}
        allowed.update(t for t in specials if t in expected)
        trie = self._trie_for(vocab_tokens, specials)
        self._walk(trie.root, current, allowed)
        return allowed

    def _trie_for(self, vocab_tokens: Sequence[bytes], specials: set[int]) -> TokenTrie:
        # Cache by identity; keep the vocabulary object alive so its id is not reused.
        key = id(vocab_tokens)
        cached = self._tries.get(key)
        if cached is None or cached[0] is not vocab_tokens or cached[1].specials != specials:
            cached = (vocab_tokens, TokenTrie(vocab_tokens, specials))
            self._tries[key] = cached
        return cached[1]

    def _walk(self, node: _TrieNode, current: _EarleySet, allowed: set[int]) -> None:
        for byte, child in node.children.items():
            nxt = self._scan(current, byte, special=False)
            if not nxt.items:
                continue  # no continuation of this byte string is viable: skip the subtree
            allowed.update(child.token_ids)
            self._walk(child, nxt, allowed)


@dataclass
class _TrieNode:
    children: dict[int, _TrieNode] = field(default_factory=dict)
    token_ids: list[int] = field(default_factory=list)


class TokenTrie:
    """A byte trie over the non-special, non-empty tokens of a vocabulary."""

    def __init__(self, vocab_tokens: Sequence[bytes], specials: set[int]):
        self.specials = set(specials)
        self.root = _TrieNode()
        for tid, text in enumerate(vocab_tokens):
            if tid in self.specials or not text:
                continue
            node = self.root
            for byte in text:
                node = node.children.setdefault(byte, _TrieNode())
            node.token_ids.append(tid)


def _flatten(data: bytes | Sequence[Piece]) -> Iterable[tuple[str, int]]:
    """Yield ("byte", b) / ("special", id) for each unit of input."""
    if isinstance(data, (bytes, bytearray)):
        for b in data:
            yield "byte", b
        return
    for piece in data:
        if isinstance(piece, (bytes, bytearray)):
            for b in piece:
                yield "byte", b
        elif isinstance(piece, int):
            yield "special", piece
        else:
            raise TypeError(f"oracle input pieces are bytes or int token ids, not {type(piece).__name__}")
