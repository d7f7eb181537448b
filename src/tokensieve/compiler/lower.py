"""Lowering: grammar IR -> terminals (byte automata) + Earley productions.

The IR lets front-ends write whole languages as expressions. The runtime wants two kinds
of pieces: *terminals*, regular byte languages run by a DFA (cheap per byte), and
*productions*, the context-free skeleton run by the Earley parser (general but costlier).

The rule: an expression is **regular** when it reaches no recursive rule and no special
token. A regular expression becomes one terminal if its DFA has at most
``Limits.max_terminal_states`` states; otherwise it is split along its structure (a
sequence into its items, an alternation into alternatives, a repetition into a recursive
rule), and each part tries again. Everything else is lowered structurally.

A repetition too large for one automaton (``Repeat(char, 0, 8192)``, a long JSON string) whose
item is prefix-free becomes a *counted terminal* instead (``cpp/include/tokensieve/counted.hpp``):
the item's automaton plus a counter, so neither the automaton nor the parser grows with the bound.

Splitting never changes the language: the Earley matcher lets a terminal end at *any*
accepting state of its DFA, so how the grammar is cut into terminals only affects speed.

Symbols are encoded as in ``cpp/include/tokensieve/grammar.hpp``: ``n >= 0`` is
nonterminal ``n``, ``-(t + 1)`` is terminal ``t``.
"""

from __future__ import annotations

import sys
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from ..errors import GrammarSyntaxError, LimitExceeded
from ..ir import (
    MAX_COUNT,
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
from ..limits import Limits
from ..program import (
    OP_ALT,
    OP_BYTES,
    OP_DIFFERENCE,
    OP_SEQ,
    automaton_header,
    native_max_count,
    repeat_words,
)
from ..program import words as _words

__all__ = ["Fragment", "LoweredGrammar", "lower", "regex_program"]

# Programs travel as native-endian int32 words in ``bytes`` (see :func:`_program`).
# A terminal builder: (regex program, state budget, subset-construction cap) -> DfaTokenIndex
# handle, or None when the minimized automaton exceeds the budget or its construction the cap.
TerminalBuilder = Callable[[bytes, int, int], Any]
# A counted-terminal builder: (prefix program or None, item program, min, max or None, suffix
# program or None) -> CountedTerminal handle, or None when the pieces do not suit a counter.
CountedBuilder = Callable[[Any, bytes, int, Any, Any], Any]
# The same for a counted automaton: the item is (unit accepting flags, ((from, to, label
# program), ...)).
UnitItem = tuple[tuple[bool, ...], tuple[tuple[int, int, bytes], ...]]  # (accepting, edges)
UnitsBuilder = Callable[[Any, UnitItem, int, Any, Any], Any]
# A store of lowered rule sets shared by grammars (see :class:`Fragment`): (key, make) -> the
# fragment stored under key, made by make() when missing. ``TerminalCache.fragment`` is one.
FragmentStore = Callable[[tuple[Any, ...], Callable[[], "Fragment"]], "Fragment"]


@dataclass
class LoweredGrammar:
    """The runtime's view of a grammar (before the native CompiledGrammar is built)."""

    terminals: list[Any] = field(default_factory=list)  # DFA handles, or int special token ids
    productions: list[list[int]] = field(default_factory=list)  # [lhs, rhs...]
    num_nonterminals: int = 0
    start: int = 0
    nonterminal_names: list[str] = field(default_factory=list)
    # One row per Unordered nonterminal (cpp/include/tokensieve/unordered.hpp):
    # [nonterminal, separator, repeatable or -1, min_count, max_count or -1, n, items..., required...]
    unordered: list[list[int]] = field(default_factory=list)


@dataclass(frozen=True)
class Fragment:
    """A set of rules lowered on their own, for splicing into every grammar that holds the same
    rule bodies (the same objects): the JSON Schema front-end's "any value" rule recurs in most
    schemas, and splicing its productions is cheaper than lowering it again.

    Rules are closed under reference (a rule's references are in the set), so lowering them
    apart from the rest of a grammar makes the same terminals and productions."""

    lowered: LoweredGrammar
    rule_nt: dict[str, int]  # each rule's nonterminal in ``lowered``
    bodies: tuple[Expr, ...]  # the rule bodies, kept alive: their ids are in the store's key


class _NodeFacts:
    """What lowering needs to know about an IR node that depends on the node alone.

    Cached on the node itself (see :func:`_facts`): IR nodes are immutable, and front-ends
    share sub-expressions within and across grammars (a JSON string character is an 842-word
    program; whitespace, numbers and the characters of property names recur in every
    schema), so each fact is derived once per node, not once per lowering.
    """

    __slots__ = ("closed", "counted", "depth", "nfa_size", "program", "refs", "seams", "spelled_out")

    def __init__(
        self,
        refs: frozenset[str],
        closed: bool,
        nfa_size: int | None,
        counted: bool = False,
        depth: int = 1,
        spelled_out: bool = False,
        seams: bool = False,
    ) -> None:
        self.refs = refs  # rule names referenced inside (not followed)
        self.depth = depth  # nesting depth of the node's expressions (a reference counts 1)
        self.closed = closed  # no Special or Unordered inside: regular if its rules are
        self.counted = counted  # holds a CountedAutomaton: regular, but only a counter runs it
        # Its words are spelled out: no repetition (but optional parts), reference or
        # automaton inside, so finitely many and each written down (an enum's spellings; see
        # _Lowering.is_word_list). A bounded repetition is finite too, but not a word list:
        # a string of up to 255 characters has no small automaton.
        self.spelled_out = spelled_out
        self.seams = seams  # a Seam inside (references not followed)
        # Known only when the node references no rule (otherwise they depend on the grammar):
        self.nfa_size = nfa_size  # Thompson-NFA size, bounded repetitions unrolled
        self.program: bytes | None = None  # its regex program (int32 words), set when first emitted

    @property
    def rule_free(self) -> bool:
        """Regular whatever the grammar: no rule reference, no special token, no Unordered."""
        return self.closed and not self.refs


_NO_REFS: Final[frozenset[str]] = frozenset()


def _facts(expr: Expr) -> _NodeFacts:
    """The node's :class:`_NodeFacts`, derived from its children's on first use.

    Kept in the node's ``_lowering_facts`` attribute (see ``ir._Node``), stored with
    ``object.__setattr__`` because IR dataclasses are frozen; the facts are a function of the
    node, so concurrent lowerings may both store them harmlessly. Hot callers read the
    attribute themselves and call this only when it is still None.

    Nodes without facts are visited children first from an explicit stack, not by recursion:
    a grammar built by hand may nest deeper than any stack, and its depth (a fact) is what
    the lowering checks before it walks the grammar recursively."""
    hit: _NodeFacts | None = expr._lowering_facts
    if hit is not None:
        return hit
    kids = _subexpressions(expr)
    if all(kid._lowering_facts is not None for kid in kids):  # the usual case: one new node
        facts = _derive_facts(expr, kids)
        object.__setattr__(expr, "_lowering_facts", facts)
        return facts
    stack = [expr]
    while stack:
        node = stack[-1]
        missing = [kid for kid in _subexpressions(node) if kid._lowering_facts is None]
        if missing:
            stack.extend(missing)
            continue
        stack.pop()
        if node._lowering_facts is None:  # a node met twice on the way: derived once
            object.__setattr__(node, "_lowering_facts", _derive_facts(node, _subexpressions(node)))
    derived: _NodeFacts = expr._lowering_facts
    return derived


def _subexpressions(expr: Expr) -> tuple[Expr, ...]:
    """The expressions inside ``expr`` (a rule reference is a leaf here)."""
    if isinstance(expr, (Seq, Alt)):
        return expr.items
    if isinstance(expr, Repeat):
        return (expr.item,)
    if isinstance(expr, Difference):
        return (expr.left, expr.right)
    if isinstance(expr, Unordered):
        rest = () if expr.repeatable is None else (expr.repeatable,)
        return (*expr.items, expr.separator, *rest)
    if isinstance(expr, CountedAutomaton):
        return tuple(label for _, edges in expr.units for label, _ in edges)
    return ()  # Bytes, Automaton (its labels are Bytes), Ref, Special, Seam


def _derive_facts(expr: Expr, kids: tuple[Expr, ...]) -> _NodeFacts:
    """:class:`_NodeFacts` of a node whose sub-expressions (``kids``) have theirs."""
    parts: list[_NodeFacts] = [it._lowering_facts for it in kids]
    depth = 1
    for p in parts:
        if p.depth >= depth:
            depth = p.depth + 1
    if isinstance(expr, Bytes):
        return _NodeFacts(_NO_REFS, True, 1, spelled_out=True)
    if isinstance(expr, (Seq, Alt)):
        size: int | None = 1 if isinstance(expr, Alt) else 0
        for p in parts:
            size = None if size is None or p.nfa_size is None else size + p.nfa_size
        counted = any(p.counted for p in parts)
        spelled = all(p.spelled_out for p in parts)
        closed = all(p.closed for p in parts)
        seams = any(p.seams for p in parts)
        return _NodeFacts(_union_refs(parts), closed, size, counted, depth, spelled, seams)
    if isinstance(expr, Repeat):
        item = parts[0]
        copies = expr.max if expr.max is not None else max(expr.min, 1)
        size = None if item.nfa_size is None else 1 + item.nfa_size * copies
        spelled = item.spelled_out and expr.max is not None and expr.max <= 1
        return _NodeFacts(item.refs, item.closed, size, item.counted, depth, spelled, item.seams)
    if isinstance(expr, CountedAutomaton):
        size = len(expr.units)
        for p in parts:
            size = None if size is None or p.nfa_size is None else size + p.nfa_size
        copies = (expr.max if expr.max is not None else expr.min) + 1
        size = None if size is None else size * copies  # unrolled: a state per (unit state, count)
        return _NodeFacts(_union_refs(parts), all(p.closed for p in parts), size, True, depth)
    if isinstance(expr, Ref):
        return _NodeFacts(frozenset((expr.name,)), True, None)
    if isinstance(expr, Automaton):
        return _NodeFacts(_NO_REFS, True, len(expr.accepting) + len(expr.labels))
    if isinstance(expr, Difference):
        left, right = parts
        size = None if left.nfa_size is None or right.nfa_size is None else left.nfa_size + right.nfa_size
        counted = left.counted or right.counted
        closed = left.closed and right.closed
        return _NodeFacts(_union_refs(parts), closed, size, counted, depth, left.spelled_out)
    if isinstance(expr, Unordered):
        return _NodeFacts(_union_refs(parts), False, None, any(p.counted for p in parts), depth)
    if isinstance(expr, Seam):
        return _NodeFacts(_NO_REFS, True, 0, spelled_out=True, seams=True)
    return _NodeFacts(_NO_REFS, False, None)  # Special


def _union_refs(parts: list[_NodeFacts]) -> frozenset[str]:
    with_refs = [p.refs for p in parts if p.refs]
    if not with_refs:
        return _NO_REFS
    return with_refs[0] if len(with_refs) == 1 else frozenset().union(*with_refs)


def regex_program(expr: Expr, rules: dict[str, Expr] | None = None) -> list[int]:
    """The prefix-encoded program of a regular expression (``Ref`` bodies are inlined)."""
    return array("i", _program(expr, rules or {}, {})).tolist()


def _program(expr: Expr, rules: dict[str, Expr], memo: dict[int, bytes]) -> bytes:
    """``expr``'s program as native-endian int32 words: the form the native DFA builder reads
    without a copy, and a cheap dictionary key (hashed once, as bytes)."""
    facts = expr._lowering_facts or _facts(expr)
    if facts.program is not None:
        return facts.program
    out: list[bytes] = []
    _emit(expr, rules, out, memo)
    return out[0] if len(out) == 1 else b"".join(out)


_EMPTY_SEQ: Final = _words(OP_SEQ, 0)


def _emit(expr: Expr, rules: dict[str, Expr], out: list[bytes], memo: dict[int, bytes]) -> None:
    """Appends ``expr``'s program to ``out`` as chunks of int32 words. A rule-free node keeps its
    program in its facts; one that inlines rules depends on the grammar and is remembered in
    ``memo`` (by id: the caller keeps the node alive). Programs of children are joined, not
    re-encoded, so emitting a sequence of known parts is a few memory copies."""
    facts = expr._lowering_facts or _facts(expr)
    if facts.program is not None:
        out.append(facts.program)
        return
    cached = memo.get(id(expr))
    if cached is not None:
        out.append(cached)
        return
    start = len(out)
    if isinstance(expr, Bytes):
        out.append(_words(OP_BYTES, len(expr.ranges), *(b for r in expr.ranges for b in r)))
    elif isinstance(expr, (Seq, Alt)):
        out.append(_words(OP_SEQ if isinstance(expr, Seq) else OP_ALT, len(expr.items)))
        for it in expr.items:
            _emit(it, rules, out, memo)
    elif isinstance(expr, Repeat):
        out.append(repeat_words(expr.min, expr.max))
        _emit(expr.item, rules, out, memo)
    elif isinstance(expr, Ref):
        _emit(rules[expr.name], rules, out, memo)
    elif isinstance(expr, Automaton):
        out.append(_words(*automaton_header(expr)))
        for label in expr.labels:
            _emit(label, rules, out, memo)
    elif isinstance(expr, Difference):
        out.append(_words(OP_DIFFERENCE))
        _emit(expr.left, rules, out, memo)
        _emit(expr.right, rules, out, memo)
    elif isinstance(expr, Seam):  # inside one terminal a seam is just the empty string
        out.append(_EMPTY_SEQ)
    elif isinstance(expr, CountedAutomaton):
        raise TypeError("a counted automaton has no regex program: it runs as a counted terminal")
    else:
        raise TypeError(f"not a regular expression: {expr!r}")
    program = out[start] if len(out) == start + 1 else b"".join(out[start:])
    del out[start + 1 :]
    out[start] = program
    if facts.rule_free:
        facts.program = program
    else:
        memo[id(expr)] = program


class RuleGraph:
    """What one walk of the rule graph tells the lowering (see :func:`analyse_rules`)."""

    __slots__ = ("depth", "recursive")

    def __init__(self, depth: int, recursive: set[str]) -> None:
        self.depth = depth
        """A bound on how deep the lowering's recursive walks go (see :func:`grammar_depth`)."""
        self.recursive = recursive
        """Names of the rules that can reach themselves."""


def analyse_rules(grammar: Grammar, stop_past: int) -> RuleGraph:
    """The recursive rules (Tarjan's strongly connected components) and :func:`grammar_depth`'s
    bound, from one depth-first walk of the rules: both walk the same graph, and on schemas of
    a thousand rules (Kubernetes, WashingtonPost) the two walks were a sixth of the lowering.

    The walk is iterative, over rule numbers rather than names, visiting the rules in their
    order and each rule's references from the last name in sorted order to the first: the
    order the bound is defined by (a reference back into the current path counts nothing,
    so the bound depends on the order, and sorting makes it the same in every process)."""
    rules = grammar.rules
    names = list(rules)
    position = {name: i for i, name in enumerate(names)}
    facts = [_facts(body) for body in rules.values()]
    total = 0
    for f in facts:
        total += f.depth
    n = len(names)
    index = [-1] * n  # Tarjan's visit numbers, -1 before the visit
    low = [0] * n
    bound = [0] * n  # set when a rule's walk ends: until then (on the path) it counts 0
    on_stack = [False] * n
    component_stack: list[int] = []
    recursive: set[str] = set()
    counter = 0
    deepest = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        index[root] = low[root] = counter
        counter += 1
        component_stack.append(root)
        on_stack[root] = True
        frames: list[tuple[int, list[int]]] = [(root, _successors(facts[root], position))]
        while frames:
            node, pending = frames[-1]
            child = -1
            while pending:
                nxt = pending.pop()
                if index[nxt] < 0:
                    child = nxt
                    break
                if on_stack[nxt] and index[nxt] < low[node]:
                    low[node] = index[nxt]
            if child >= 0:
                index[child] = low[child] = counter
                counter += 1
                component_stack.append(child)
                on_stack[child] = True
                frames.append((child, _successors(facts[child], position)))
                continue
            frames.pop()
            below = 0
            for ref in facts[node].refs:
                at = position.get(ref)
                if at is not None and bound[at] > below:
                    below = bound[at]
            bound[node] = facts[node].depth + below
            if bound[node] > deepest:
                deepest = bound[node]
            if low[node] == index[node]:  # node roots a component: pop it
                component: list[str] = []
                while True:
                    w = component_stack.pop()
                    on_stack[w] = False
                    component.append(names[w])
                    if w == node:
                        break
                if len(component) > 1 or names[node] in facts[node].refs:
                    recursive.update(component)
            if frames:
                parent = frames[-1][0]
                if low[node] < low[parent]:
                    low[parent] = low[node]
    return RuleGraph(total if total <= stop_past else deepest, recursive)


def _successors(facts: _NodeFacts, position: dict[str, int]) -> list[int]:
    """A rule's references that are rules, as numbers, to be popped last name first."""
    return [position[r] for r in sorted(facts.refs) if r in position]


class _Lowering:
    def __init__(
        self,
        grammar: Grammar,
        build: TerminalBuilder,
        limits: Limits,
        build_counted: CountedBuilder | None,
        build_units: UnitsBuilder | None,
        deadline: float | None = None,
        fragments: FragmentStore | None = None,
    ) -> None:
        self.grammar = grammar
        self.rules = grammar.rules
        self.fragments = fragments
        # Rules whose bodies an earlier lowering analysed (they carry facts already): shared
        # objects, so their lowering may be spliced from a fragment. Taken before this
        # lowering derives facts of its own.
        self.recurring = (
            {name for name, body in grammar.rules.items() if body._lowering_facts is not None}
            if fragments is not None
            else set()
        )
        self.build = build
        self.build_counted = build_counted
        self.build_units = build_units
        self.limits = limits
        # Before any recursive walk (and after `recurring`, which tells bodies analysed by
        # earlier grammars by their facts): the walks below stay within a safe depth.
        graph = analyse_rules(grammar, limits.max_grammar_depth)
        if graph.depth > limits.max_grammar_depth:
            raise LimitExceeded(
                f"the grammar nests more than {limits.max_grammar_depth} expressions deep",
                limit="max_grammar_depth",
            )
        self.recursive = graph.recursive
        self.out = LoweredGrammar()
        self.regular_rules: dict[str, bool] = {}
        self.counted_rules: dict[str, bool] = {}
        self.regular_refs: dict[frozenset[str], bool] = {}  # by a node's references
        self.counted_refs: dict[frozenset[str], bool] = {}
        self.seam_rules: dict[str, bool] = {}
        self.seam_refs: dict[frozenset[str], bool] = {}
        self.rule_nt: dict[str, int] = {}
        self.expr_nt: dict[int, int] = {}
        self.terminal_of_program: dict[tuple[Any, ...], int | None] = {}
        # try_run_terminal's answers by the run's program pieces (see there).
        self.terminal_of_run: dict[tuple[Any, ...], int | None] = {}
        self.special_terminal: dict[int, int] = {}
        self.program_memo: dict[int, bytes] = {}
        self.size_memo: dict[int, int] = {}
        self.symbols_memo: dict[int, list[int]] = {}
        self.run_memo: dict[tuple[int, ...], list[int]] = {}  # run_symbols' answers by item ids
        self.terminal_of_handle: dict[int, int] = {}  # id(DFA or counted handle) -> terminal
        self.keep_alive: list[Expr] = []  # id()-keyed memos need their keys alive
        self.deadline = deadline if deadline is not None else time.monotonic() + limits.max_compile_seconds
        self.total_states = 0

    # ---------------------------------------------------------------- classification
    def is_regular(self, expr: Expr) -> bool:
        """Whether ``expr`` reaches no recursive rule, special token or Unordered node."""
        facts = expr._lowering_facts or _facts(expr)
        if not facts.closed:
            return False
        refs = facts.refs
        if not refs:
            return True
        hit = self.regular_refs.get(refs)  # many nodes share one set of references
        if hit is None:
            hit = all(self.rule_is_regular(name) for name in refs)
            self.regular_refs[refs] = hit
        return hit

    def rule_is_regular(self, name: str) -> bool:
        hit = self.regular_rules.get(name)
        if hit is None:
            hit = name not in self.recursive and self.is_regular(self.rule_body(name))
            self.regular_rules[name] = hit
        return hit

    def has_counted(self, expr: Expr) -> bool:
        """Whether a regular ``expr`` holds a CountedAutomaton (rules followed: none of them is
        recursive): it then has no regex program."""
        facts = expr._lowering_facts or _facts(expr)
        if facts.counted:
            return True
        refs = facts.refs
        return bool(refs) and self.rules_hold(refs, self.counted_refs, self.counted_rules, self.has_counted)

    def has_seam(self, expr: Expr) -> bool:
        """Whether a regular ``expr`` holds a :class:`Seam` (rules followed: none of them is
        recursive). Such an expression is lowered by its structure and cut at its seams,
        never made one terminal (see :meth:`_symbols`). A difference is one automaton
        whatever it holds: it has none here."""
        if isinstance(expr, Difference):
            return False
        facts = expr._lowering_facts or _facts(expr)
        if facts.seams:
            return True
        refs = facts.refs
        return bool(refs) and self.rules_hold(refs, self.seam_refs, self.seam_rules, self.has_seam)

    def rules_hold(
        self,
        refs: frozenset[str],
        by_refs: dict[frozenset[str], bool],
        by_rule: dict[str, bool],
        body_holds: Callable[[Expr], bool],
    ) -> bool:
        """Whether the body of some rule in ``refs`` holds what ``body_holds`` looks for
        (:meth:`has_counted`, :meth:`has_seam`), remembered by reference set (many nodes
        share one) and by rule. The rules of a regular node are not recursive, so the walk
        down their references ends."""
        hit = by_refs.get(refs)
        if hit is None:
            hit = False
            for name in refs:
                held = by_rule.get(name)
                if held is None:
                    held = body_holds(self.rule_body(name))
                    by_rule[name] = held
                if held:
                    hit = True
                    break
            by_refs[refs] = hit
        return hit

    def rule_body(self, name: str) -> Expr:
        try:
            return self.rules[name]
        except KeyError:
            raise GrammarSyntaxError(
                f"rule {name!r} is referenced but not defined", source="grammar"
            ) from None

    # ---------------------------------------------------------------- symbols
    def new_nonterminal(self, name: str) -> int:
        self.out.nonterminal_names.append(name)
        self.out.num_nonterminals += 1
        return self.out.num_nonterminals - 1

    def add_production(self, lhs: int, rhs: list[int]) -> None:
        self.out.productions.append([lhs, *rhs])
        if len(self.out.productions) > self.limits.max_productions:
            raise LimitExceeded(
                f"the grammar needs more than {self.limits.max_productions} parser rules",
                limit="max_productions",
            )

    def nfa_size(self, expr: Expr) -> int:
        """Thompson-NFA size of a regular expression (bounded repetitions unrolled), memoized."""
        size: int | None = (expr._lowering_facts or _facts(expr)).nfa_size
        if size is not None:
            return size
        key = id(expr)
        size = self.size_memo.get(key)
        if size is not None:
            return size
        self.keep_alive.append(expr)  # the memo is keyed by id()
        if isinstance(expr, Seq):
            size = sum(self.nfa_size(it) for it in expr.items)
        elif isinstance(expr, Alt):
            size = 1 + sum(self.nfa_size(it) for it in expr.items)
        elif isinstance(expr, Repeat):
            copies = expr.max if expr.max is not None else max(expr.min, 1)
            size = 1 + self.nfa_size(expr.item) * copies
        elif isinstance(expr, Ref):
            size = self.nfa_size(self.rule_body(expr.name))
        elif isinstance(expr, Difference):
            size = self.nfa_size(expr.left) + self.nfa_size(expr.right)
        else:  # Special, Unordered: never in a terminal; a unit for the heuristics that compare
            size = 1
        self.size_memo[key] = size
        return size

    def try_terminal(
        self, expr: Expr, budget: int | None = None, subset_slack: int = 1, size_budget: int | None = None
    ) -> int | None:
        """The terminal symbol for a regular expression, or None if its DFA is too large
        (``budget`` states after minimization, by default the limit for its kind; the subset
        construction may pass through ``subset_slack`` times as many; ``size_budget`` is the
        budget :meth:`too_large_to_try` judges the NFA by, by default the terminals' limit)."""
        if self.has_counted(expr):
            return None  # a counted automaton inside: only counted terminals run it
        splittable = isinstance(expr, (Seq, Alt, Repeat, Ref)) and not _is_atomic(expr, self.rules)
        if splittable and self.too_large_to_try(self.nfa_size(expr), subset_slack, size_budget):
            return None
        program = _program(expr, self.rules, self.program_memo)
        return self.terminal_for(program, splittable, budget, subset_slack)

    def try_run_terminal(
        self, run: list[Expr], budget: int | None = None, subset_slack: int = 1
    ) -> int | None:
        """:meth:`try_terminal` of ``Seq(run)``, without making that node: a sequence node made
        for one lookup would have its facts derived and its program joined, only to be dropped."""
        if any(self.has_counted(it) for it in run):
            return None
        if self.too_large_to_try(sum(self.nfa_size(it) for it in run), subset_slack):
            return None
        chunks = [_words(OP_SEQ, len(run))]
        for it in run:
            _emit(it, self.rules, chunks, self.program_memo)
        # The same run is tried again and again (by every flush that holds it), and joining its
        # pieces into a new program costs a copy and a hash of kilobytes each time; the pieces
        # are the nodes' own programs, whose hashes are remembered.
        key = (budget, subset_slack, *chunks)
        if key in self.terminal_of_run:
            return self.terminal_of_run[key]
        symbol = self.terminal_for(b"".join(chunks), True, budget, subset_slack)
        self.terminal_of_run[key] = symbol
        return symbol

    def too_large_to_try(self, nfa_size: int, subset_slack: int, budget: int | None = None) -> bool:
        """Big expressions are split without trying: a DFA rarely has fewer states than the
        NFA has positions, and building a doomed automaton level after level is quadratic
        (with 64x the budget, Github_medium o50681 spent 30 s and 6 GiB on attempts like that)."""
        return nfa_size > 8 * (budget or self.limits.max_terminal_states) * subset_slack

    def is_word_list(self, expr: Expr) -> bool:
        """Whether ``expr`` is an alternation of words spelled out (rules followed): an enum's
        or a choice's spellings."""
        while isinstance(expr, Ref):
            expr = self.rule_body(expr.name)
        return isinstance(expr, Alt) and (expr._lowering_facts or _facts(expr)).spelled_out

    def word_list_budget(self) -> int:
        """The state budget of a word list's terminal (see :meth:`is_word_list`), above the
        other terminals': its minimal automaton is a trie of its spellings (linear in them,
        built directly), and split, every word would be a terminal of its own, each with a
        token index, every one of them tried at every mask where the list may start (an enum
        of 420 time zones: 417 terminals, and two refused automata of 10,000 states first)."""
        return min(8 * self.limits.max_terminal_states, self.limits.max_dfa_states)

    def terminal_for(
        self, program: bytes, splittable: bool, budget: int | None, subset_slack: int
    ) -> int | None:
        """The terminal symbol for a regex program (see :meth:`try_terminal`), or None."""
        # The budget (and so the cache key) depends on splittability: a rule reference to an
        # atomic part may fail under the split budget and still fit under the hard one.
        must_fit = budget is None and not splittable
        if budget is None:
            budget = self.limits.max_terminal_states if splittable else self.limits.max_dfa_states
        subset_cap = self.subset_cap(budget, subset_slack)
        key = (budget, subset_cap, program)
        if key in self.terminal_of_program:
            t = self.terminal_of_program[key]
            return None if t is None else -(t + 1)
        dfa = self.build_in_time(program, budget, subset_cap)
        if dfa is None:
            if must_fit:
                raise LimitExceeded(
                    f"a regular part of the grammar needs more than {budget} automaton states",
                    limit="max_dfa_states",
                )
            self.terminal_of_program[key] = None
            return None
        t = self.add_terminal(dfa, dfa.dfa.num_states)
        self.terminal_of_program[key] = t
        return -(t + 1)

    def subset_cap(self, budget: int, subset_slack: int) -> int:
        """How many states the subset construction may pass through for a DFA of ``budget``."""
        return max(budget, min(budget * subset_slack, self.limits.max_dfa_states))

    def build_in_time(self, program: bytes, budget: int, subset_cap: int) -> Any:
        """``self.build`` within the compile's deadline (checked before each build)."""
        if time.monotonic() > self.deadline:
            raise LimitExceeded(
                f"compiling the grammar took more than {self.limits.max_compile_seconds} s",
                limit="max_compile_seconds",
            )
        return self.build(program, budget, subset_cap)

    def try_counted(
        self, expr: Expr, prefix: tuple[Expr, ...] = (), suffix: tuple[Expr, ...] = ()
    ) -> int | None:
        """A counted terminal ``prefix expr suffix`` for a regular repetition ``expr``, or None."""
        while isinstance(expr, Ref):
            expr = self.rule_body(expr.name)
        if any(self.has_counted(e) for e in (*prefix, *suffix)):
            return None  # neighbours with a counted automaton of their own have no program
        if isinstance(expr, CountedAutomaton):
            return self.try_counted_units(expr, prefix, suffix)
        if self.has_counted(expr):
            return None
        if self.build_counted is None or not isinstance(expr, Repeat) or expr.max == 0:
            return None
        if self.too_large_to_try(sum(self.nfa_size(e) for e in (*prefix, expr.item, *suffix)), 1):
            return None  # not even its program: nested arrays double it at every level
        item = self.program(expr.item)
        before = self.program(Seq(prefix)) if prefix else None
        after = self.program(Seq(suffix)) if suffix else None
        key = ("counted", expr.min, expr.max, item, before, after)
        build_counted = self.build_counted
        return self.counted_symbol(key, lambda: build_counted(before, item, expr.min, expr.max, after))

    def try_counted_units(
        self, expr: CountedAutomaton, prefix: tuple[Expr, ...], suffix: tuple[Expr, ...]
    ) -> int | None:
        """A counted terminal ``prefix expr suffix`` for a counted automaton, or None."""
        if self.build_units is None:
            return None
        accepting = tuple(accept for accept, _ in expr.units)
        edges = tuple(
            (s, t, self.program(label)) for s, (_, row) in enumerate(expr.units) for label, t in row
        )
        before = self.program(Seq(prefix)) if prefix else None
        after = self.program(Seq(suffix)) if suffix else None
        key = ("units", expr.min, expr.max, accepting, edges, before, after)
        build_units = self.build_units
        return self.counted_symbol(
            key, lambda: build_units(before, (accepting, edges), expr.min, expr.max, after)
        )

    def counted_symbol(self, key: tuple[Any, ...], build: Callable[[], Any]) -> int | None:
        """The terminal symbol of the counted terminal ``build`` makes (remembered by ``key``),
        or None when it makes none."""
        if key in self.terminal_of_program:
            t = self.terminal_of_program[key]
            return None if t is None else -(t + 1)
        counted = build()
        if counted is None:
            self.terminal_of_program[key] = None
            return None
        t = self.add_terminal(counted, counted.loop.num_states)
        self.terminal_of_program[key] = t
        return -(t + 1)

    def program(self, expr: Expr) -> bytes:
        self.keep_alive.append(expr)  # the program memo is keyed by id()
        return _program(expr, self.rules, self.program_memo)

    def counted_run(self, run: list[Expr], at_least: int) -> list[int] | None:
        """Symbols for a run of regular items holding a repetition with a bound of at least
        ``at_least``, with the repetition and its neighbours (the quotes of a JSON string) as
        one counted terminal; None when no such repetition suits a counter."""
        long = [j for j, it in enumerate(run) if _long_repeat(it, self.rules, at_least)]
        if not long:
            return None
        j = long[0]
        attempts = [(tuple(run[:j]), tuple(run[j + 1 :])), ((), tuple(run[j + 1 : j + 2])), ((), ())]
        for prefix, suffix in dict.fromkeys(attempts):
            t = self.try_counted(run[j], prefix, suffix)
            if t is not None:
                before = tuple(run[: j - len(prefix)])
                after = tuple(run[j + 1 + len(suffix) :])
                return [*self.seq_symbols(before), t, *self.seq_symbols(after)]
        return None

    def neighbours_run(self, run: list[Expr]) -> list[int] | None:
        """Symbols for a run too large for one terminal, with its largest item and the items
        beside it as one terminal (a pattern's automaton with the string's quotes), or None.

        A terminal ends wherever its automaton accepts; cut from its quotes, a pattern such as
        ``^\\d+.*$`` would end at almost every byte, and every index entry would need a suffix
        trie of the whole vocabulary."""
        j = max(range(len(run)), key=lambda k: self.nfa_size(run[k]))
        budget = self.group_budget()
        # A word list takes its quotes and neighbours along under its own budget (the whole
        # run, too, when that is the first group: it was tried under the smaller one).
        whole_tried = not self.is_word_list(run[j])
        if not whole_tried:
            budget = max(budget, self.word_list_budget())
        failed_once = False
        for lo, hi in ((j - 1, j + 2), (j, j + 2), (j - 1, j + 1)):
            if lo < 0 or hi > len(run) or (lo == 0 and hi == len(run) and whole_tried):
                continue
            group = run[lo:hi]
            # The last try before pieces that end anywhere: a larger budget and room for the
            # subset construction (see group_slack).
            slack = self.group_slack(group)
            if failed_once and not self.fits_alone(run[j], budget):
                return None
            t = self.try_run_terminal(group, budget, subset_slack=slack)
            if t is not None:
                return [*self.seq_symbols(tuple(run[:lo])), t, *self.seq_symbols(tuple(run[hi:]))]
            failed_once = True
        return None

    def lone_alternation(self, item: Expr) -> int | None:
        """The terminal for a regular alternation that stands alone between seams (a member's
        value: a ``oneOf``, an ``anyOf``, a nullable type), or None (not one, or too large).

        Too large for a terminal's budget, it gets the last try that a run's largest item
        gets with its neighbours (see :meth:`neighbours_run`) before it is split into its
        alternatives: split, each alternative is a terminal of its own, and the mask where
        the value may start walks the vocabulary through every one of them (Github_hard
        o12278: seven pattern automata of about 590 states each, a first mask of 10.9 ms,
        where their union, one automaton of 2,130 states, is walked in 1.6 ms)."""
        expr = item
        while isinstance(expr, Ref):
            expr = self.rule_body(expr.name)
        if not isinstance(expr, Alt) or not self.is_regular(item) or self.has_seam(item):
            return None
        if self.is_word_list(item):
            return None  # a word list has a budget of its own (see _symbols)
        t = self.try_terminal(item)
        if t is not None:
            return t
        budget = self.group_budget()
        if not self.fits_alone(item, budget):
            return None
        return self.try_terminal(item, budget, subset_slack=self.group_slack([item]), size_budget=budget)

    def group_budget(self) -> int:
        """The state budget of the last try before regular items are split into pieces (a
        run's largest item with its neighbours, an alternation alone): above the terminals'."""
        return 4 * self.limits.max_terminal_states

    def group_slack(self, items: list[Expr]) -> int:
        """The subset-construction slack of that last try: room for a construction that may
        overshoot the minimal automaton many times (a `uri-reference` string: 8,000+ states on
        the way to 1,309), unless a large bounded repetition is unrolled in ``items`` (its
        automaton is large anyway, and a counter takes it)."""
        return 1 if any(self.unrolls_large_repeat(it) for it in items) else 8

    def fits_alone(self, item: Expr, budget: int) -> bool:
        """Whether ``item`` on its own fits a neighbours group's budget; builds no terminal.

        No group holding ``item`` fits when ``item`` alone does not, so after one group
        failed this saves building the others (a 505-name enum with its quotes: three
        automata of 10,000 states, each only to be refused). Adding a neighbour never
        shrinks what the builder tracks: each residual language of ``item`` stays a distinct
        residual of ``"item``, ``item"`` and ``"item"`` (so the minimized automaton has at
        least as many states), each subset of ``item``'s NFA positions reached in the subset
        construction is reached, shifted, in the group's, and the NFA only grows. The
        item's own slack is the largest any group of it gets."""
        slack = self.group_slack([item])
        if self.has_counted(item) or self.too_large_to_try(self.nfa_size(item), slack):
            return False
        program = _program(item, self.rules, self.program_memo)
        return self.build_in_time(program, budget, self.subset_cap(budget, slack)) is not None

    def unrolls_large_repeat(self, expr: Expr) -> bool:
        """Whether a bounded repetition in ``expr`` (rules followed) unrolls to more NFA
        positions than a terminal's budget: a string's ``maxLength``, not whitespace's
        ``{0,64}`` indentation."""
        budget = self.limits.max_terminal_states
        todo, seen = [expr], set()
        while todo:
            e = todo.pop()
            if id(e) in seen:
                continue
            seen.add(id(e))
            if isinstance(e, Ref):
                todo.append(self.rule_body(e.name))
            elif isinstance(e, Repeat):
                if e.max is not None and self.nfa_size(e) > budget:
                    return True
                todo.append(e.item)
            elif isinstance(e, (Seq, Alt)):
                todo.extend(e.items)
            elif isinstance(e, Difference):
                todo.extend((e.left, e.right))
        return False

    def special(self, token_id: int) -> int:
        t = self.special_terminal.get(token_id)
        if t is None:
            self.out.terminals.append(token_id)
            t = len(self.out.terminals) - 1
            self.special_terminal[token_id] = t
        return -(t + 1)

    def rule_symbol(self, name: str) -> int:
        nt = self.rule_nt.get(name)
        if nt is None and name in self.recurring:
            nt = self.spliced_rule(name)
        if nt is None:
            nt = self.new_nonterminal(name)
            self.rule_nt[name] = nt
            body = self.rule_body(name)
            self.pending.append((nt, body))
        return nt

    def add_terminal(self, handle: Any, states: int) -> int:
        """Append a DFA or counted terminal of ``states`` automaton states; its terminal index.
        The grammar's automata stay within ``max_total_dfa_states`` together."""
        self.total_states += states
        if self.total_states > self.limits.max_total_dfa_states:
            raise LimitExceeded(
                f"the grammar's automata need more than {self.limits.max_total_dfa_states} states",
                limit="max_total_dfa_states",
            )
        self.out.terminals.append(handle)
        t = len(self.out.terminals) - 1
        self.terminal_of_handle[id(handle)] = t
        return t

    def spliced_rule(self, name: str) -> int | None:
        """The nonterminal of rule ``name`` spliced from a :class:`Fragment` of the rules it
        reaches, or None when some of them are new objects or already lowered here."""
        assert self.fragments is not None
        closure, todo = {name}, [name]
        while todo:
            for ref in _facts(self.rule_body(todo.pop())).refs:
                if ref not in closure:
                    closure.add(ref)
                    todo.append(ref)
        if not closure <= self.recurring or any(n in self.rule_nt for n in closure):
            return None
        names = sorted(closure)
        key = ("fragment", name, tuple((n, id(self.rules[n])) for n in names))

        def make() -> Fragment:
            part = Grammar({n: self.rules[n] for n in names}, start=name)
            lowering = _Lowering(
                part, self.build, self.limits, self.build_counted, self.build_units, self.deadline
            )
            lowered = lowering.run()
            return Fragment(lowered, dict(lowering.rule_nt), tuple(self.rules[n] for n in names))

        fragment = self.fragments(key, make)
        self.splice(fragment)
        return self.rule_nt[name]

    def splice(self, fragment: Fragment) -> None:
        """Add a fragment's nonterminals, terminals and productions to this grammar."""
        lowered = fragment.lowered
        offset = self.out.num_nonterminals
        self.out.nonterminal_names.extend(lowered.nonterminal_names)
        self.out.num_nonterminals += lowered.num_nonterminals
        symbol_of_terminal = []
        for handle in lowered.terminals:
            if isinstance(handle, int):  # a special token id
                symbol_of_terminal.append(self.special(handle))
                continue
            t = self.terminal_of_handle.get(id(handle))
            if t is None:
                # A DfaTokenIndex has its DFA in .dfa, a CountedTerminal its loop in .loop.
                automaton = handle.dfa if hasattr(handle, "dfa") else handle.loop
                t = self.add_terminal(handle, automaton.num_states)
            symbol_of_terminal.append(-(t + 1))

        def moved(symbol: int) -> int:
            return symbol + offset if symbol >= 0 else symbol_of_terminal[-symbol - 1]

        for lhs, *rhs in lowered.productions:
            self.add_production(lhs + offset, [moved(s) for s in rhs])
        for row in lowered.unordered:  # [nt, separator, repeatable or -1, min, max, n, items..., required...]
            n = row[5]
            items = [nt + offset for nt in row[6 : 6 + n]]
            repeatable = row[2] + offset if row[2] >= 0 else -1
            moved_row = [row[0] + offset, row[1] + offset, repeatable, *row[3:6], *items, *row[6 + n :]]
            self.out.unordered.append(moved_row)
        for rule, nt in fragment.rule_nt.items():
            self.rule_nt[rule] = nt + offset

    def symbols(self, expr: Expr) -> list[int]:
        """Symbols whose concatenation is ``expr``'s language (memoized: IR nodes are shared)."""
        hit = self.symbols_memo.get(id(expr))
        if hit is not None:
            return hit
        self.keep_alive.append(expr)
        result = self._symbols(expr)
        self.symbols_memo[id(expr)] = result
        return result

    def _symbols(self, expr: Expr) -> list[int]:
        if isinstance(expr, Seam) or (isinstance(expr, Seq) and not expr.items):
            return []
        regular = self.is_regular(expr)
        if regular and self.has_seam(expr):
            # Not one terminal: cut at the seams. A sequence with seams of its own is cut
            # there; any other node holding one (a declared-order member list, an object
            # nested in a value) is lowered by its structure below, down to the parts that
            # hold none.
            seamed = self.seamed(expr)
            if seamed is not None:
                return self.seq_symbols(seamed.items)
            counted = self.counted_across_seams(expr)
            if counted is not None:
                return counted
            regular = False
        if regular:
            # A long repetition is cheaper with a counter even when its automaton would fit:
            # the unrolled automaton has a state, and so a token-index entry, per position.
            if isinstance(expr, Seq):
                counted = self.counted_run(list(expr.items), self.limits.min_counted_repeat)
                if counted is not None:
                    return counted
            if self.is_word_list(expr):
                # One try, under the word list's budget (it has no repetition for a counter).
                # The trie of every spelling minimizes to a fraction of its states (the
                # escapes of one character merge): the subset construction needs room.
                budget = self.word_list_budget()
                t = self.try_terminal(expr, budget, subset_slack=8, size_budget=budget)
            else:
                counted_first = _long_repeat(expr, self.rules, self.limits.min_counted_repeat)
                t = self.try_counted(expr) if counted_first else None
                if t is None:
                    t = self.try_terminal(expr)
                if t is None and not counted_first:
                    t = self.try_counted(expr)
            if t is not None:
                return [t]
        if isinstance(expr, Seq):
            return self.seq_symbols(expr.items)
        if isinstance(expr, Ref):
            return [self.rule_symbol(expr.name)]
        if isinstance(expr, Special):
            return [self.special(expr.token_id)]
        if isinstance(expr, Unordered):
            return [self.unordered_symbol(expr)]
        if isinstance(expr, Difference):
            raise GrammarSyntaxError(
                "a Difference needs regular operands (no recursive rule, no special token)", source="grammar"
            )
        return [self.expr_symbol(expr)]

    def counted_across_seams(self, expr: Expr) -> list[int] | None:
        """Symbols for a regular ``expr`` holding seams that is, or is a sequence holding, a
        long repetition that suits a counter (an array of up to 100,000 small objects): a
        counted terminal is worth more than what the seams would share, as an unrolled
        repetition needs a parser rule per count. None otherwise."""
        while isinstance(expr, Ref):
            expr = self.rule_body(expr.name)
        at_least = self.limits.min_counted_repeat
        if isinstance(expr, Seq):
            return self.counted_run(list(expr.items), at_least)
        if _long_repeat(expr, self.rules, at_least):
            t = self.try_counted(expr)
            return None if t is None else [t]
        return None

    def seamed(self, expr: Expr) -> Seq | None:
        """The sequence a regular ``expr`` stands for (rules followed: none is recursive) when
        it has a seam, else None."""
        while isinstance(expr, Ref):
            expr = self.rule_body(expr.name)
        if isinstance(expr, Seq) and any(isinstance(it, Seam) for it in expr.items):
            return expr
        return None

    def seq_symbols(self, items: tuple[Expr, ...]) -> list[int]:
        """A sequence: each maximal run of regular items becomes one terminal when it fits.

        Front-ends flatten sequences (``"key" ws ":" ws value``), so without grouping every
        piece of a key would be its own terminal and end at every character. A :class:`Seam`
        ends a run: the runs on either side become separate terminals, each reusable where
        it recurs.

        An item that stands for a sequence with seams (a rule such as a JSON object member)
        is cut at its seams here too, and the run ends after it: in a declared-order member
        list ``ws "," ws member later-members`` the member's ``ws ":" ws value`` is then its
        own terminal, shared by every member and schema with that value, instead of one
        automaton for the comma, the key, the value and every later member together (a
        terminal per member and per list tail, all different: on 600 MaskBench schemas in
        declared order that made the compile time's p99 about 2.2 times and its sum 1.9 times
        what they are with the cut, ``bench/compile_stages.py --property-order declared``).
        Any other regular item holding a seam (an optional member's list tail, an object in
        a value) gets symbols of its own, lowered by its structure (see :meth:`_symbols`).
        """
        out: list[int] = []
        run: list[Expr] = []

        def flush() -> None:
            if run:
                out.extend(self.run_symbols(run))
                run.clear()

        # Items still to place, last first; None marks the end of a seamed item's pieces.
        pending: list[Expr | None] = list(reversed(items))
        while pending:
            it = pending.pop()
            if it is None or isinstance(it, Seam):
                flush()
                continue
            regular = self.is_regular(it)
            if regular and not self.has_seam(it):
                if isinstance(it, Seq) and not (it._lowering_facts or _facts(it)).spelled_out:
                    # A sequence nested in the run (a member's key: see the JSON Schema
                    # front-end's member_rule) is lowered as if flattened, so that a long
                    # repetition in it still finds a counter with its neighbours; one spelled
                    # out (a quoted name) has none, and stays one item.
                    pending.extend(reversed(it.items))
                    continue
                run.append(it)
                continue
            seamed = self.seamed(it) if regular else None
            if seamed is not None:  # its pieces join the run, its seams cut it, and it ends one
                pending.append(None)
                pending.extend(reversed(seamed.items))
            else:  # not regular, or holding seams deeper down: symbols of its own
                flush()
                out.extend(self.symbols(it))
        flush()
        return out

    def run_symbols(self, run: list[Expr]) -> list[int]:
        """Symbols for a maximal run of regular items without seams (see :meth:`seq_symbols`),
        remembered by the items themselves: the same run recurs throughout a grammar (every
        member of every object has the run ``ws ":" ws``; Kubernetes kb_144 lowers 1,348 runs,
        289 of them distinct), and its symbols depend on its items alone. The list returned is
        shared: callers copy it."""
        key = tuple([id(it) for it in run])
        hit = self.run_memo.get(key)
        if hit is None:
            hit = self._run_symbols(run)
            self.run_memo[key] = hit
            self.keep_alive.extend(run)  # the memo is keyed by id()
        return hit

    def _run_symbols(self, run: list[Expr]) -> list[int]:
        if len(run) > 1:
            counted = self.counted_run(run, self.limits.min_counted_repeat)
            if counted is None:
                t = self.try_run_terminal(run)
                if t is not None:
                    return [t]
                # Too large for one automaton: a counter may still keep the run whole,
                # or the largest item may still take its neighbours along.
                counted = self.counted_run(run, 2)
                if counted is None:
                    counted = self.neighbours_run(run)
            if counted is not None:
                return counted
        elif len(run) == 1:
            t = self.lone_alternation(run[0])
            if t is not None:
                return [t]
        out: list[int] = []
        for it in run:
            out.extend(self.symbols(it))
        return out

    def expr_symbol(self, expr: Alt | Repeat | Bytes | Automaton | CountedAutomaton) -> int:
        """A nonterminal for an alternation or repetition (shared when the node is shared)."""
        nt = self.expr_nt.get(id(expr))
        if nt is not None:
            return nt
        self.keep_alive.append(expr)
        if isinstance(expr, Alt):
            nt = self.new_nonterminal("alt")
            self.expr_nt[id(expr)] = nt
            for it in expr.items:
                self.add_production(nt, self.symbols(it))
        elif isinstance(expr, Repeat):
            nt = self.repeat_symbol(expr)
            self.expr_nt[id(expr)] = nt
        elif isinstance(expr, CountedAutomaton):
            raise LimitExceeded(
                "a length-bounded pattern could not be run with a counter (its units are not "
                "prefix-free and disjoint, or its lengths have gaps)",
                limit="max_dfa_states",
            )
        else:  # Bytes and Automaton are regular: they became terminals or raised LimitExceeded
            raise AssertionError("regular leaves are always terminals")
        return nt

    def unordered_symbol(self, expr: Unordered) -> int:
        """A nonterminal without productions, described to the matcher by a row of
        ``LoweredGrammar.unordered``: the matcher tracks which items were written."""
        nt = self.expr_nt.get(id(expr))
        if nt is not None:
            return nt
        self.keep_alive.append(expr)
        nt = self.new_nonterminal("unordered")
        self.expr_nt[id(expr)] = nt
        items = [self.single_nonterminal(it, "item") for it in expr.items]
        separator = self.single_nonterminal(expr.separator, "separator")
        rest = -1 if expr.repeatable is None else self.single_nonterminal(expr.repeatable, "repeatable")
        # The parser counts members in int32 (see ir.MAX_COUNT).
        if expr.min_count > MAX_COUNT:
            raise LimitExceeded(
                f"an object of at least {expr.min_count} members needs too many parser symbols",
                limit="max_productions",
            )
        max_count = native_max_count(expr.max_count)
        row = [nt, separator, rest, expr.min_count, max_count, len(items), *items, *sorted(expr.required)]
        self.out.unordered.append(row)
        return nt

    def single_nonterminal(self, expr: Expr, hint: str) -> int:
        """One nonterminal deriving ``expr`` (a new one unless ``expr`` already lowers to one)."""
        syms = self.symbols(expr)
        if len(syms) == 1 and syms[0] >= 0:
            return syms[0]
        nt = self.new_nonterminal(hint)
        self.add_production(nt, syms)
        return nt

    def repeat_symbol(self, expr: Repeat) -> int:
        item = self.symbols(expr.item)
        if expr.max is None:
            # star ::= star item | ε  (left recursion keeps Earley sets small)
            star = self.new_nonterminal("star")
            self.add_production(star, [star, *item])
            self.add_production(star, [])
            if expr.min == 0:
                return star
            nt = self.new_nonterminal("repeat")
            self.add_production(nt, self.repeated(item, expr.min) + [star])
            return nt
        # upto_k ::= ε | item upto_{k-1}: linear in the bound, no exponential unrolling.
        optional_tail: int | None = None
        for _ in range(expr.max - expr.min):
            nt = self.new_nonterminal("upto")
            self.add_production(nt, [])
            self.add_production(nt, item + ([optional_tail] if optional_tail is not None else []))
            optional_tail = nt
        nt = self.new_nonterminal("repeat")
        rhs = self.repeated(item, expr.min)
        if optional_tail is not None:
            rhs.append(optional_tail)
        self.add_production(nt, rhs)
        return nt

    def repeated(self, item: list[int], count: int) -> list[int]:
        """``item`` ``count`` times over, as one right-hand side (refused, not built, past
        ``max_productions`` symbols: a ``minItems`` of 2^33 would not fit in memory)."""
        if len(item) * count > self.limits.max_productions:
            raise LimitExceeded("a repetition needs too many parser symbols", limit="max_productions")
        return item * count

    def run(self) -> LoweredGrammar:
        self.pending: list[tuple[int, Expr]] = []
        start = self.rule_symbol(self.grammar.start)
        while self.pending:
            nt, body = self.pending.pop()
            whole = self.is_regular(body) and not self.has_seam(body)
            alternatives = body.items if isinstance(body, Alt) and not whole else (body,)
            for alt_expr in alternatives:
                self.add_production(nt, self.symbols(alt_expr))
        self.out.start = start
        return self.out


def grammar_depth(grammar: Grammar, stop_past: int) -> int:
    """A bound on how deep the lowering's recursive walks go. A rule's expressions nest
    ``depth`` deep (see :class:`_NodeFacts`), and a regular part follows the references in it
    into their rules' bodies, so the bound adds, along every chain of references that is not
    recursion, the depths of the bodies on the way. When all the rules' depths added stay
    within ``stop_past`` (no chain can be longer), that sum is the answer; past it, the
    deepest chain of a walk of the rules. Iterative over the rules (a chain of 100,000 rules
    is one list), and cheap: the facts are the nodes' own, derived once. The lowering takes it
    from :func:`analyse_rules`, with the recursive rules of the same walk."""
    return analyse_rules(grammar, stop_past).depth


def _long_repeat(expr: Expr, rules: dict[str, Expr], at_least: int) -> bool:
    """Whether ``expr`` is a repetition long enough to prefer a counted terminal."""
    while isinstance(expr, Ref):
        expr = rules[expr.name]
    if isinstance(expr, CountedAutomaton):
        return True  # only a counter runs it
    return isinstance(expr, Repeat) and (expr.min if expr.max is None else expr.max) >= at_least


def _is_atomic(expr: Expr, rules: dict[str, Expr]) -> bool:
    """A repetition of a single byte set cannot be split into smaller terminals."""
    while isinstance(expr, Ref):
        expr = rules[expr.name]
    return isinstance(expr, Repeat) and isinstance(expr.item, Bytes)


def lower(
    grammar: Grammar,
    build: TerminalBuilder,
    limits: Limits,
    build_counted: CountedBuilder | None = None,
    build_units: UnitsBuilder | None = None,
    deadline: float | None = None,
    fragments: FragmentStore | None = None,
) -> LoweredGrammar:
    """Lower ``grammar``; ``build(program, max_states)`` makes a DFA handle or returns None;
    ``build_counted(item_program, min, max)`` makes a counted-terminal handle or returns None,
    and ``build_units`` the same for a counted automaton. Past ``deadline`` (a
    ``time.monotonic()`` instant; default: ``limits.max_compile_seconds`` from now) it stops
    with :class:`LimitExceeded`. With ``fragments``, rules whose bodies recur across grammars
    (the same objects) are lowered once and spliced (see :class:`Fragment`)."""
    if grammar.start not in grammar.rules:
        raise GrammarSyntaxError(f"start rule {grammar.start!r} is not defined", source="grammar")
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20_000))
    try:
        return _Lowering(grammar, build, limits, build_counted, build_units, deadline, fragments).run()
    finally:
        sys.setrecursionlimit(old)
