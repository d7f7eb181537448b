"""Byte automata: intersection, difference, minimization and the way back to the IR."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.differential.test_random_grammars import automata, byte_sets
from tests.oracle import Oracle
from tokensieve.frontends.json_schema.automata import (
    DFA,
    _SizedLru,
    dfa_from_expr,
    utf8_strings,
)
from tokensieve.frontends.json_schema.digits import fixed_width
from tokensieve.frontends.json_schema.nfa import NFA, Fragment
from tokensieve.frontends.regex import parse_regex
from tokensieve.ir import Alt, Automaton, Bytes, Expr, Grammar, Repeat, Seam, Seq

WORDS = ["".join(p) for n in range(5) for p in itertools.product("ab", repeat=n)]


def _accepts(dfa: DFA, word: str) -> bool:
    return dfa.accepts(word.encode())


def test_operations_match_set_semantics() -> None:
    x = dfa_from_expr(parse_regex("a*b?"))
    y = dfa_from_expr(parse_regex("(ab|ba)*"))
    for w in WORDS:
        in_x, in_y = _accepts(x, w), _accepts(y, w)
        assert _accepts(x.intersect(y), w) == (in_x and in_y)
        assert _accepts(x.union(y), w) == (in_x or in_y)
        assert _accepts(x.minus(y), w) == (in_x and not in_y)
        assert _accepts(x.complement(), w) == (not in_x)


def test_minimization_merges_equivalent_states() -> None:
    # (a|b)*a(a|b) needs 4 states when minimal, whatever the construction.
    assert dfa_from_expr(parse_regex("(a|b)*a(a|b)")).size == 4
    assert dfa_from_expr(parse_regex("x{0,50}")).size == 51


def test_back_to_ir_expression_and_automaton() -> None:
    dfa = dfa_from_expr(parse_regex("(a|b)*abb")).intersect(dfa_from_expr(parse_regex("a.{0,5}")))
    for expr in (dfa.labeled().to_expr(), dfa.labeled().to_automaton()):
        oracle = Oracle(Grammar({"root": expr}))
        for w in WORDS + ["aabb", "abbabb", "aaabb"]:
            assert oracle.is_complete(w.encode()) == _accepts(dfa, w), w


def test_complement_stays_within_utf8() -> None:
    dfa = utf8_strings().minus(dfa_from_expr(parse_regex("é")))
    assert _accepts(dfa, "e") and not _accepts(dfa, "é")
    assert not any(lo <= 0xC0 <= hi for lo, hi, _ in dfa.trans[0])  # never an overlong lead byte


def test_fixed_width_digit_ranges_are_exact() -> None:
    for lo, hi in [(0, 999), (7, 7), (13, 987), (100, 199), (5, 1234)]:
        width = len(str(hi))
        seqs = fixed_width(lo, hi, width)
        covered = set()
        for digits in seqs:
            for combo in itertools.product(*(range(a, b + 1) for a, b in digits)):
                covered.add(int("".join(map(str, combo))))
        assert covered == set(range(lo, hi + 1))


def test_automata_are_remembered_per_expression_value() -> None:
    expr = parse_regex("[a-z]{3}")
    first = dfa_from_expr(expr)
    assert dfa_from_expr(expr) is first
    assert dfa_from_expr(parse_regex("[a-z]{3}")) is first  # another object, equal: shared
    assert dfa_from_expr(parse_regex("[a-z]{4}")) is not first
    with pytest.raises(OverflowError):  # the remembered automaton still obeys the limit
        dfa_from_expr(expr, max_states=2)


def test_linear_rules_get_distinct_names() -> None:
    grammar = Grammar()
    graph = dfa_from_expr(parse_regex("(ab|c)+")).labeled()
    first, second = graph.to_rules(grammar, "x"), graph.to_rules(grammar, "x")
    assert first != second
    names = [n for n in grammar.rules if n.startswith("x")]
    assert len(names) == 2 * (len(graph.accept) + 1)  # one rule per state, one for the language
    for ref in (first, second):
        grammar.rules["root"] = ref
        oracle = Oracle(grammar)
        assert oracle.is_complete(b"abcab") and not oracle.is_complete(b"abb")


def _random_dfa(rng: random.Random, size: int) -> DFA:
    """A random partial DFA over a few byte ranges (many states equivalent or dead)."""
    trans = []
    for _ in range(size):
        row = []
        for lo, hi in ((0x61, 0x61), (0x62, 0x63), (0x64, 0x64), (0x80, 0xBF)):
            if rng.random() < 0.6:
                row.append((lo, hi, rng.randrange(size)))
        trans.append(row)
    return DFA(trans, [rng.random() < 0.3 for _ in range(size)])


def _moore_classes(dfa: DFA) -> int:
    """Classes of the reachable, co-reachable states by naive signature refinement."""
    reach, todo = {0}, [0]
    while todo:
        for _, _, t in dfa.trans[todo.pop()]:
            if t not in reach:
                reach.add(t)
                todo.append(t)
    live = {s for s in reach if dfa.accept[s]}
    changed = True
    while changed:
        changed = False
        for s in reach - live:
            if any(t in live for _, _, t in dfa.trans[s]):
                live.add(s)
                changed = True
    if 0 not in live:
        return 1
    cls = {s: int(dfa.accept[s]) for s in live}
    while True:
        sigs = {s: (cls[s], tuple((lo, hi, cls[t]) for lo, hi, t in dfa.trans[s] if t in live)) for s in live}
        numbering = {sig: i for i, sig in enumerate(sorted(set(sigs.values())))}
        new = {s: numbering[sigs[s]] for s in live}
        if len(set(new.values())) == len(set(cls.values())):
            return len(set(new.values()))
        cls = new


def test_minimization_matches_naive_refinement_on_partial_automata() -> None:
    rng = random.Random(7)
    for _ in range(300):
        dfa = _random_dfa(rng, rng.randint(1, 14))
        minimal = dfa.minimize()
        assert minimal.size == _moore_classes(dfa)
        words = ["".join(p) for n in range(4) for p in itertools.product("abcdé", repeat=n)]
        assert [_accepts(minimal, w) for w in words] == [_accepts(dfa, w) for w in words]


def test_results_are_the_dfa_their_expression_builds_again() -> None:
    # DFA.to_ir remembers its automaton for the returned expression; that is only exact if
    # one language has one DFA here (minimal, numbered breadth-first, bytes ascending).
    rng = random.Random(11)
    for _ in range(200):
        x = _random_dfa(rng, rng.randint(1, 10)).minimize()
        y = _random_dfa(rng, rng.randint(1, 10)).minimize()
        for result in (x.minus(y), x.intersect(y), x.union(y)):
            rebuilt = dfa_from_expr(result.labeled().to_automaton())  # a fresh expression object
            assert (rebuilt.trans, rebuilt.accept) == (result.trans, result.accept)
            expr = result.to_ir(Grammar(), "t")
            assert dfa_from_expr(expr) is result


def test_replayed_nfa_fragments_equal_fresh_ones() -> None:
    # LabeledGraph.to_automaton replays one recorded fragment per label; the NFA must be the
    # one add() builds, state numbers and edge order included (also for self-loops).
    labels = [parse_regex(p) for p in ("a(b|cd)*e?", "[x-z]{2,4}", "(ab)+|c", "")]
    labels.append(dfa_from_expr(labels[0]).labeled().to_automaton())
    calls = [(0, 1), (1, 1), (2, 0), (1, 2), (0, 0)]
    fresh, replayed = NFA(), NFA()
    for nfa in (fresh, replayed):
        for _ in range(3):
            nfa.state()
    fragments: dict[int, Fragment] = {}
    for label in labels:
        for start, end in calls:
            fresh.add(label, start, end)
            replayed.add_copy(label, start, end, fragments)
    assert (replayed.edges, replayed.eps) == (fresh.edges, fresh.eps)


def _nfa_dfa(expr: Expr) -> DFA:
    """The DFA of an expression through the Python Thompson NFA (the way dfa_from_expr built
    it before the native builder): an independent construction to check it against."""
    nfa = NFA()
    start, final = nfa.state(), nfa.state()
    nfa.add(expr, start, final)
    return DFA.from_nfa(nfa, start, final)


@pytest.mark.parametrize(
    "pattern",
    [
        "^(?:\\S+\\s+){0,49}\\S+$",  # a word count: the native builder determinizes the item first
        "^(?:[^\\s@]+@[^\\s@]+,\\s*){0,9}[^@]+$",
        "(?:é|ë|ü|ö|å|[0-9]{1,3}|x[a-f]*|y[g-k]+){4,}z",
        "(?:\\w+\\W+){5,8}",  # unanchored: inside the any-text pads
        "^(?:\\d{1,3}\\.){3}\\d{1,3}$",
    ],
)
def test_native_build_is_the_nfa_construction_s_automaton(pattern: str) -> None:
    expr = parse_regex(pattern, search=True)
    direct = dfa_from_expr(expr)
    plain = _nfa_dfa(expr)
    assert (direct.trans, direct.accept) == (plain.trans, plain.accept)  # minimal, numbered alike


# Byte sets and small automata (the Automaton node: OP_AUTOMATON in the program), as the
# differential grammar tests draw them, plus the empty string spelled both ways.
_LEAVES = st.one_of(byte_sets(), byte_sets(), automata(), st.just(Seam()), st.just(Seq(())))


def _composites(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    return st.one_of(
        st.lists(children, min_size=0, max_size=3).map(lambda items: Seq(tuple(items))),
        st.lists(children, min_size=1, max_size=3).map(lambda items: Alt(tuple(items))),
        st.tuples(children, st.integers(0, 2), st.one_of(st.none(), st.integers(0, 3))).map(
            lambda t: Repeat(t[0], t[1], None if t[2] is None else t[1] + t[2])
        ),
    )


@settings(max_examples=300, deadline=None)
@given(st.recursive(_LEAVES, _composites, max_leaves=12))
@example(Seq((Bytes(((97, 97),)), Repeat(Repeat(Bytes(((97, 98),)), 0, 3), 1, 4))))  # its copies: refused
def test_native_build_equals_the_nfa_construction_on_random_expressions(expr: Expr) -> None:
    direct = dfa_from_expr(expr)
    plain = _nfa_dfa(expr)
    assert (direct.trans, direct.accept) == (plain.trans, plain.accept)
    # An expression holding an automaton (as the front-end's operations give back) too.
    automaton = direct.labeled().to_automaton()
    assert isinstance(automaton, Automaton)
    wrapped = Seq((automaton, Repeat(automaton, 0, 2)))
    try:
        again = dfa_from_expr(wrapped)
    except OverflowError:
        # Copies of an automaton whose strings may end where the next copy's begin pass through
        # far more subset-construction states than their minimal DFA has (a[ab]{0,12} three
        # times: 196 states, 40,000-80,000 on the way), and the front-end refuses those past its
        # state limit with this error, as designed; the direct build above was compared.
        return
    plain_again = _nfa_dfa(wrapped)
    assert (again.trans, again.accept) == (plain_again.trans, plain_again.accept)


def test_sized_lru_evicts_least_recently_used_until_the_sizes_fit() -> None:
    cache = _SizedLru(budget=10)
    cache.put("a", "A", 4)
    cache.put("b", "B", 4)
    assert cache.get("a") == "A"  # "a" is now the most recently used
    cache.put("c", "C", 4)  # 12 > 10: "b" goes, not "a"
    assert "b" not in cache and "a" in cache and "c" in cache and cache.total == 8
    cache.put("a", "A2", 1)  # replacing an entry counts its new size only
    assert cache.get("a") == "A2" and cache.total == 5
    cache.put("big", "BIG", 50)  # alone over the budget: stays, everything else goes
    assert len(cache) == 1 and cache.get("big") == "BIG" and cache.total == 50


def test_dfa_to_automaton_is_the_labeled_graph_s_automaton() -> None:
    # DFA.to_automaton skips the Thompson NFA LabeledGraph.to_automaton builds; the automaton
    # must be the same, numbering included, for minimal DFAs and for raw ones (unreachable
    # states, any numbering).
    rng = random.Random(5)
    for _ in range(300):
        dfa = _random_dfa(rng, rng.randint(1, 12))
        for d in (dfa, dfa.minimize()):
            assert d.to_automaton() == d.labeled()._through_nfa()


def _same_language(a: Expr, b: Expr) -> bool:
    da, db = dfa_from_expr(a), dfa_from_expr(b)  # minimal and numbered alike: equal iff same language
    return da.trans == db.trans and da.accept == db.accept


def test_laid_out_labels_give_the_nfa_route_s_language() -> None:
    """``LabeledGraph.to_automaton`` lays each label's DFA out once per (label, target) when
    every label is non-empty and prefix-free (one character's JSON spellings are): random
    graphs over such labels, sharing labels and targets, accept what the Thompson-NFA route
    accepts. A label with the empty word or with a word that extends another is left to
    that route."""
    from tokensieve.frontends.json_schema.labeled import LabeledGraph
    from tokensieve.frontends.json_schema.strings import escaped_chars

    labels = [
        escaped_chars(((0x22, 0x22), (0x41, 0x5A))),  # quote (escaped) and capitals
        escaped_chars(((0x00, 0x1F),)),  # control characters: \b, \n..., \u00XX
        escaped_chars(((0xE9, 0xE9), (0x4E2D, 0x4E2D), (0x1F600, 0x1F600))),  # 2, 3 and 4 bytes
        parse_regex("ab|c(de)*f"),  # prefix-free, with a loop that re-enters no start
        Bytes(((0x30, 0x39),)),
    ]
    rng = random.Random(13)
    for _ in range(60):
        n = rng.randint(1, 8)
        edges = [
            {t: rng.choice(labels) for t in rng.sample(range(n), rng.randint(0, min(n, 3)))} for _ in range(n)
        ]
        accept = [rng.random() < 0.4 for _ in range(n)]
        graph = LabeledGraph(edges, accept)
        laid = graph._laid_out()
        assert laid is not None
        assert _same_language(laid, graph._through_nfa())
    for bad in (parse_regex("a|ab"), parse_regex("a?"), Repeat(Bytes(((0x61, 0x61),)), 0, None)):
        graph = LabeledGraph([{1: bad}, {}], [False, True])
        assert graph._laid_out() is None
        assert _same_language(graph.to_automaton(), graph._through_nfa())


def test_large_graphs_become_automata_without_state_elimination() -> None:
    """Past MAX_ELIMINATION_EDGES edges a graph is not eliminated (its expression would not
    fit anyway): ``to_ir`` gives the automaton, with the same language, and a graph just
    under the bound is still eliminated into an expression."""
    from tokensieve.frontends.json_schema.labeled import MAX_ELIMINATION_EDGES
    from tokensieve.frontends.json_schema.numbers import _multiple_dfa

    # Numerals that are multiples of 37: 37 residues with ten digit edges each, and a cycle
    # through all of them (state elimination would blow up on it).
    dfa = _multiple_dfa("37", False)
    graph = dfa.labeled()
    assert sum(len(row) for row in graph.edges) > MAX_ELIMINATION_EDGES
    assert graph.to_expr() is None
    ir = dfa.to_ir(Grammar(), "m")
    assert isinstance(ir, Automaton)
    back = dfa_from_expr(ir)
    for n in [0, 37, 74, 370, 999, 1, 38, 100, -37, -38]:
        assert _accepts(back, str(n)) == (n % 37 == 0), n
    small = dfa_from_expr(parse_regex("(ab|ba)*c"))
    assert small.labeled().to_expr() is not None


def test_regular_ir_is_the_labeled_graph_s_expression_or_its_automaton() -> None:
    """``_regular_ir`` reads each automaton's label rows once for both forms, and sends a graph
    past MAX_ELIMINATION_EDGES edges straight to its automaton: the result must be what the
    labeled graph gives (its expression when state elimination fits, else the automaton), on
    both sides of the bound."""
    from tokensieve.frontends.json_schema.automata import _regular_ir
    from tokensieve.frontends.json_schema.labeled import MAX_ELIMINATION_EDGES

    rng = random.Random(11)
    sizes = []
    for size in [1, 2, 3, 5, 8, 12, 20, 40, 80, 120]:
        for _ in range(6):
            dfa = _random_dfa(rng, size).minimize()
            graph = dfa.labeled()
            sizes.append(sum(len(row) for row in graph.edges))
            expected = graph.to_expr()
            assert _regular_ir(dfa) == (expected if expected is not None else dfa.to_automaton())
    assert min(sizes) <= MAX_ELIMINATION_EDGES < max(sizes)


def _finite_words_by_paths(dfa: DFA, limit: int) -> list[bytes] | None:
    """The words of ``dfa`` spelled out path by path (the definition finite_words keeps)."""
    words: list[bytes] = []
    stack: list[tuple[int, bytes, frozenset[int]]] = [(0, b"", frozenset([0]))]
    while stack:
        s, word, path = stack.pop()
        if dfa.accept[s]:
            words.append(word)
            if len(words) > limit:
                return None
        for lo, hi, t in dfa.trans[s]:
            if t in path or hi - lo > limit:
                return None
            for b in range(lo, hi + 1):
                stack.append((t, word + bytes([b]), path | {t}))
    return sorted(words)


def test_finite_words_match_the_words_spelled_out_path_by_path() -> None:
    # Random acyclic and cyclic automata, raw and minimal, with limits below and above their
    # word counts: the same words, and None in the same cases.
    rng = random.Random(7)
    outcomes = set()
    for _ in range(400):
        size = rng.randint(1, 9)
        trans = []
        for s in range(size):
            row = []
            for lo, hi in ((0x61, 0x61), (0x62, 0x63), (0x64, 0x64)):
                acyclic = rng.random() < 0.9
                if rng.random() < 0.5 and (not acyclic or s + 1 < size):
                    row.append((lo, hi, rng.randrange(s + 1, size) if acyclic else rng.randrange(size)))
            trans.append(row)
        dfa = DFA(trans, [rng.random() < 0.4 for _ in range(size)])
        for d in (dfa, dfa.minimize()):
            for limit in (0, 1, 3, 10, 64):
                expected = _finite_words_by_paths(d, limit)
                assert d.finite_words(limit) == expected
                outcomes.add(expected is None)
    assert outcomes == {True, False}
    names = dfa_from_expr(parse_regex("alpha|beta|gamma|b"))
    assert names.finite_words(4) == [b"alpha", b"b", b"beta", b"gamma"]
    assert names.finite_words(3) is None
    assert dfa_from_expr(parse_regex("a[b-z]")).finite_words(10) is None  # an edge of 25 bytes


def test_native_label_groups_are_the_rows_grouped_in_python() -> None:
    """A DFA that came out of a native operation reads its label rows from the native side's
    grouping (distinct byte sets as one node each) and its content key as bytes: the rows
    must be what grouping its Python rows gives (targets in the order of their lowest byte,
    the empty language included), and the keys equal exactly for equal automata."""
    from tokensieve.frontends.json_schema.automata import _labels_by_target

    rng = random.Random(17)
    keys: dict[object, tuple[tuple[tuple[int, int, int], ...], ...]] = {}
    empty = 0
    for _ in range(400):
        dfa = _random_dfa(rng, rng.randint(1, 10)).minimize()
        assert dfa._native_rows
        expected = [_labels_by_target(row) for row in dfa.trans]
        assert dfa.label_rows() == expected
        key, groups = dfa.content_key()
        assert isinstance(key, bytes) and groups is not None
        assert dfa.label_rows(groups) == expected
        content = (dfa.trans, dfa.accept)
        assert keys.setdefault(key, content) == content  # one key, one automaton
        # Numbered as a walk numbers them: the automaton is the groups as they are, the
        # automaton the walk over the rows builds.
        assert groups.walk_numbered
        assert dfa.to_automaton() == dfa.to_automaton(expected) == DFA(dfa.trans, dfa.accept).to_automaton()
        empty += dfa.is_empty()
    assert empty and len(keys) > 100
    raw = _random_dfa(rng, 6)  # rows made in Python: grouped in Python, keyed by their tuples
    assert not raw._native_rows and raw.content_key()[1] is None
