"""The reference oracle: a small, obviously correct recognizer for :class:`tokensieve.ir.Grammar`.

Differential tests compare the real engine against this module, so it favours plain
textbook algorithms over speed:

1. :func:`to_cfg` turns the IR into a plain context-free grammar whose terminals are
   single byte sets or single special tokens. ``Seq`` becomes one production, ``Alt``
   one production per item, ``Repeat`` is unrolled into rules (``X{m,n}`` is ``m`` copies
   of ``X`` followed by a chain of ``n - m`` optional copies, ``X{m,}`` is ``m`` copies
   followed by a right-recursive star rule).
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
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from tokensieve.ir import Alt, Bytes, Expr, Grammar, Ref, Repeat, Seq, Special

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

    Identical sub-expressions share one nonterminal (the IR nodes are hashable), which
    keeps ``Repeat`` unrolling of repeated structure small.
    """
    if grammar.start not in grammar.rules:
        raise KeyError(f"start rule {grammar.start!r} is not defined")
    cfg = CFG(start=_rule_nt(grammar.start))
    memo: dict[Expr, Symbol] = {}

    def new_nt(rhss: list[tuple[Symbol, ...]]) -> str:
        name = f"#{len(cfg.productions)}"
        cfg.productions[name] = rhss
        return name

    def symbol(expr: Expr) -> Symbol:
        if expr in memo:
            return memo[expr]
        result: Symbol
        if isinstance(expr, Bytes):
            result = ByteSet(frozenset(b for lo, hi in expr.ranges for b in range(lo, hi + 1)))
        elif isinstance(expr, Special):
            result = SpecialTok(expr.token_id)
        elif isinstance(expr, Ref):
            if expr.name not in grammar.rules:
                raise KeyError(f"reference to undefined rule {expr.name!r}")
            result = _rule_nt(expr.name)
        elif isinstance(expr, Seq):
            result = new_nt([tuple(symbol(it) for it in expr.items)])
        elif isinstance(expr, Alt):
            result = new_nt([(symbol(it),) for it in expr.items])
        elif isinstance(expr, Repeat):
            result = _repeat(symbol(expr.item), expr.min, expr.max, new_nt, cfg)
        else:
            raise TypeError(f"not an IR expression: {expr!r}")
        memo[expr] = result
        return result

    for name, body in grammar.rules.items():
        cfg.productions[_rule_nt(name)] = [(symbol(body),)]
    return cfg


def _rule_nt(name: str) -> str:
    # Rule names get a prefix so they can never collide with generated "#n" names.
    return "rule:" + name


def _repeat(
    item: Symbol, lo: int, hi: int | None, new_nt: Callable[[list[tuple[Symbol, ...]]], str], cfg: CFG
) -> str:
    """``item{lo,hi}``: ``lo`` copies, then optional copies (a chain) or a star rule."""
    if hi is None:
        star = new_nt([()])
        cfg.productions[star].append((item, star))
        tail: tuple[Symbol, ...] = (star,)
    else:
        tail = ()
        for _ in range(hi - lo):  # opt_k -> ε | item opt_{k-1}
            tail = (new_nt([(), (item, *tail)]),)
    return new_nt([(item,) * lo + tail])


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


# An Earley item: (production index, dot position, origin set index).
Item = tuple[int, int, int]


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
        kept = {lhs: [rhs for lhs2, rhs in self._prods if lhs2 == lhs] for lhs in self._by_lhs}
        self._nullable = _nullable(kept)
        self._start = cfg.start
        seeds = [(p, 0, 0) for p in self._by_lhs.get(cfg.start, [])]
        self._initial: list[list[Item]] = [self._closure(0, [], seeds)]
        self._tries: dict[int, tuple[object, TokenTrie]] = {}

    # ------------------------------------------------------------------ Earley core

    def _closure(self, j: int, chart: list[list[Item]], seeds: Iterable[Item]) -> list[Item]:
        """Set ``j`` from its scanned (or initial) ``seeds``: predict and complete to a fixpoint.

        ``chart`` holds sets ``0..j-1``; completions with origin ``j`` look at the set
        being built, the others at ``chart[origin]``.
        """
        items: list[Item] = []
        seen: set[Item] = set()

        def add(item: Item) -> None:
            if item not in seen:
                seen.add(item)
                items.append(item)

        for item in seeds:
            add(item)
        k = 0
        while k < len(items):
            prod, dot, origin = items[k]
            k += 1
            lhs, rhs = self._prods[prod]
            if dot < len(rhs):
                nxt = rhs[dot]
                if isinstance(nxt, str):  # predict
                    for p in self._by_lhs.get(nxt, ()):
                        add((p, 0, j))
                    if nxt in self._nullable:  # Aycock–Horspool: skip over a nullable symbol
                        add((prod, dot + 1, origin))
            else:  # complete: advance every item in the origin set waiting on lhs
                waiting = items if origin == j else chart[origin]
                for p2, d2, o2 in list(waiting):
                    rhs2 = self._prods[p2][1]
                    if d2 < len(rhs2) and rhs2[d2] == lhs:
                        add((p2, d2 + 1, o2))
        return items

    def _scan(self, chart: list[list[Item]], piece: int, special: bool) -> list[Item]:
        """The next set after reading one byte (``special=False``) or one special token."""
        last = chart[-1]
        seeds: list[Item] = []
        for prod, dot, origin in last:
            rhs = self._prods[prod][1]
            if dot < len(rhs):
                sym = rhs[dot]
                if special:
                    ok = isinstance(sym, SpecialTok) and sym.token_id == piece
                else:
                    ok = isinstance(sym, ByteSet) and piece in sym.members
                if ok:
                    seeds.append((prod, dot + 1, origin))
        if not seeds:
            return []
        return self._closure(len(chart), chart, seeds)

    def _chart(self, data: bytes | Sequence[Piece]) -> list[list[Item]]:
        """Run the recognizer over ``data``; the chart ends with an empty set on failure."""
        chart = list(self._initial)
        for kind, value in _flatten(data):
            if not chart[-1]:
                break
            chart.append(self._scan(chart, value, special=kind == "special"))
        return chart

    def _accepts(self, chart: list[list[Item]]) -> bool:
        last = chart[-1]
        for prod, dot, origin in last:
            lhs, rhs = self._prods[prod]
            if origin == 0 and lhs == self._start and dot == len(rhs):
                return True
        return False

    # ------------------------------------------------------------------ public API

    @property
    def is_empty_language(self) -> bool:
        """True when no input at all is a sentence (the start rule is unproductive)."""
        return not self._initial[0]

    def is_viable_prefix(self, data: bytes | Sequence[Piece]) -> bool:
        """Some continuation of ``data`` (possibly none) is a sentence."""
        return bool(self._chart(data)[-1])

    def is_complete(self, data: bytes | Sequence[Piece]) -> bool:
        """``data`` itself is a sentence of the grammar."""
        chart = self._chart(data)
        return bool(chart[-1]) and self._accepts(chart)

    def expected_specials(self, data: bytes | Sequence[Piece]) -> set[int]:
        """Special token ids that may come right after ``data``."""
        return self._expected_specials(self._chart(data))

    def _expected_specials(self, chart: list[list[Item]]) -> set[int]:
        out: set[int] = set()
        for prod, dot, _ in chart[-1]:
            rhs = self._prods[prod][1]
            if dot < len(rhs) and isinstance(rhs[dot], SpecialTok):
                out.add(rhs[dot].token_id)  # type: ignore[union-attr]
        return out

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
        the vocabulary and extends the Earley chart one byte per trie edge, so a shared
        token prefix is parsed once and a dead subtree is skipped whole.
        """
        specials = set(special_ids)
        chart = self._chart(prefix)
        if not chart[-1]:
            return set()
        allowed: set[int] = set()
        if self._accepts(chart):
            allowed.update(eos_ids)
        expected = self._expected_specials(chart)
        allowed.update(t for t in specials if t in expected)
        trie = self._trie_for(vocab_tokens, specials)
        self._walk(trie.root, chart, allowed)
        return allowed

    def _trie_for(self, vocab_tokens: Sequence[bytes], specials: set[int]) -> TokenTrie:
        # Cache by identity; keep the vocabulary object alive so its id is not reused.
        key = id(vocab_tokens)
        cached = self._tries.get(key)
        if cached is None or cached[0] is not vocab_tokens or cached[1].specials != specials:
            cached = (vocab_tokens, TokenTrie(vocab_tokens, specials))
            self._tries[key] = cached
        return cached[1]

    def _walk(self, node: _TrieNode, chart: list[list[Item]], allowed: set[int]) -> None:
        for byte, child in node.children.items():
            nxt = self._scan(chart, byte, special=False)
            if not nxt:
                continue  # no continuation of this byte string is viable: skip the subtree
            allowed.update(child.token_ids)
            chart.append(nxt)
            self._walk(child, chart, allowed)
            chart.pop()


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
