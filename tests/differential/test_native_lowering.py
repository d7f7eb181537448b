"""The native lowering (``compiler/native_lower.py``, ``cpp/src/lowering.cpp``) against the
reference (``compiler/lower.py``): the same terminals (the same terminal-cache entries, in the
same order), productions, nonterminals and unordered rows, or the same error, on random
grammars under default and tight limits and on a slice of the MaskBench dev split."""

from __future__ import annotations

import importlib.machinery
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.differential.test_random_grammars import RULES, SPECIAL, VOCAB, exprs
from tests.paths import DATASETS
from tokensieve import _core, ir
from tokensieve.compiler.compiled import TerminalCache
from tokensieve.compiler.lower import lower
from tokensieve.compiler.native_lower import NATIVE_MIN_RULES, lower_grammar, lower_natively
from tokensieve.errors import GrammarSyntaxError, LimitExceeded
from tokensieve.frontends.json_schema import json_schema_to_grammar
from tokensieve.ir import (
    Alt,
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
    literal,
)
from tokensieve.limits import Limits


def _outcome(run: Callable[[], Any]) -> tuple[Any, ...]:
    """What a lowering made, terminals by identity (both lowerings share one cache), or the
    error it raised."""
    try:
        lowered = run()
    except (LimitExceeded, GrammarSyntaxError) as e:
        return ("raised", type(e).__name__, str(e), getattr(e, "limit", None))
    assert lowered is not None, "the native lowering refused a grammar it should take"
    terminals = [t if isinstance(t, int) else ("handle", id(t)) for t in lowered.terminals]
    return (
        terminals,
        lowered.productions,
        lowered.num_nonterminals,
        lowered.start,
        lowered.nonterminal_names,
        lowered.unordered,
    )


def assert_same_lowering(
    grammar: Grammar, limits: Limits, cache: TerminalCache | None = None
) -> tuple[Any, ...]:
    """The compiler's lowering (native, or the reference where the native one does not take
    the grammar) equals the reference; and the native one takes every grammar but those
    nested too deep for it, which the reference refuses too."""
    cache = cache or TerminalCache(VOCAB, limits)
    args = (cache.get, limits, cache.get_counted, cache.get_counted_units)
    reference = _outcome(lambda: lower(grammar, *args))
    memo = cache.native_terminals  # as the compiler lowers: DFA terminals found there first
    assert _outcome(lambda: lower_grammar(grammar, *args, memo=memo)) == reference
    if reference[-1] != "max_grammar_depth":
        assert _outcome(lambda: lower_natively(grammar, *args)) == reference
        assert _outcome(lambda: lower_natively(grammar, *args, memo=memo)) == reference
    return reference


def differences() -> st.SearchStrategy[Expr]:
    """Differences of regular parts (rules inside may be recursive: then both refuse it)."""
    words = st.sampled_from([literal("a"), literal("ab"), literal("abc"), Repeat(literal("b"), 0, 3)])
    return st.tuples(words, st.one_of(words, st.sampled_from([Ref("r1"), Seam()]))).map(
        lambda t: Difference(Alt((t[0], Repeat(Bytes.of([(ord("a"), ord("c"))]), 1, 4))), t[1])
    )


def counted_automata() -> st.SearchStrategy[Expr]:
    """A unit automaton of one or two states whose units are single letters, with bounds."""

    def build(two_states: bool, lo: int, extra: int | None) -> Expr:
        a, b = Bytes.of([(ord("a"), ord("a"))]), Bytes.of([(ord("b"), ord("b"))])
        if two_states:
            units: tuple[Any, ...] = ((False, ((a, 1),)), (True, ((b, 0),)))
        else:
            units = ((True, ((a, 0), (b, 0))),)
        return CountedAutomaton(units, lo, None if extra is None else lo + extra)

    return st.builds(build, st.booleans(), st.integers(0, 12), st.one_of(st.none(), st.integers(0, 20)))


def rich_exprs() -> st.SearchStrategy[Expr]:
    """The random grammars' expressions, sometimes inside a sequence with a difference, a
    counted automaton or a long repetition (counters, neighbours groups)."""
    extra = st.one_of(differences(), counted_automata(), exprs().map(lambda e: Repeat(e, 0, 12)))
    return st.one_of(
        exprs(),
        st.tuples(exprs(), extra, exprs()).map(lambda t: Seq((literal('"'), *t, literal('"')))),
    )


grammars = st.lists(rich_exprs(), min_size=3, max_size=3).map(
    lambda bodies: Grammar(rules=dict(zip(RULES, bodies, strict=True)), start="r0")
)

# Tight limits make the heuristics split, group, count and refuse.
LIMITS = st.one_of(
    st.just(Limits()),
    st.builds(
        Limits,
        max_terminal_states=st.integers(2, 12),
        max_dfa_states=st.integers(20, 60),
        max_productions=st.integers(5, 200),
        max_total_dfa_states=st.integers(30, 400),
        max_grammar_depth=st.integers(3, 30),
        min_counted_repeat=st.integers(2, 9),
    ),
)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grammar=grammars, limits=LIMITS)
def test_native_lowering_equals_the_reference(grammar: Grammar, limits: Limits) -> None:
    assert_same_lowering(grammar, limits)


def test_every_kind_of_result_and_error_is_exercised() -> None:
    """The examples above are not all trivial: spot checks of each kind of outcome."""
    limits = Limits()
    rich = Grammar(
        {
            "r0": Seq((literal('"'), Repeat(Ref("r1"), 0, 40), literal('"'), Ref("r2"), Special(SPECIAL))),
            "r1": Alt((literal("a"), literal("b"))),
            "r2": Alt((literal("c"), Seq((literal("a"), Ref("r2"))))),  # recursive
        },
        start="r0",
    )
    lowered = assert_same_lowering(rich, limits)
    assert SPECIAL in lowered[0] and lowered[1]
    tiny = Limits(max_productions=2)
    assert assert_same_lowering(rich, tiny)[:2] == (
        "raised",
        "LimitExceeded",
    )
    deep = Grammar({"r0": Seq((Ref("r1"), literal("a"))), "r1": Seq((literal("b"),) * 3)}, start="r0")
    assert assert_same_lowering(deep, Limits(max_grammar_depth=2))[3] == "max_grammar_depth"
    bad = Grammar({"r0": Difference(Ref("r0"), literal("a"))}, start="r0")
    assert assert_same_lowering(bad, limits)[1] == "GrammarSyntaxError"


def test_the_memo_serves_terminals_without_calling_the_builder() -> None:
    limits = Limits()
    cache = TerminalCache(VOCAB, limits)
    calls: list[bytes] = []

    def build(program: bytes, budget: int, cap: int) -> Any:
        calls.append(program)
        return cache.get(program, budget, cap)

    grammar = Grammar(
        {"r0": Seq((literal("ab"), Ref("r1"), Special(SPECIAL))), "r1": literal("c")}, start="r0"
    )
    first = lower_natively(grammar, build, limits, memo=cache.native_terminals)
    assert calls and len(cache.native_terminals) == len(calls)
    made = len(calls)
    again = lower_natively(grammar, build, limits, memo=cache.native_terminals)
    assert len(calls) == made  # every terminal found in the memo
    assert first is not None and again is not None
    assert [id(t) for t in first.terminals] == [id(t) for t in again.terminals]
    assert first.productions == again.productions


def test_grammars_of_many_rules_are_lowered_natively() -> None:
    """Told by the memo: only the native lowering looks terminals up there."""
    limits = Limits()
    cache = TerminalCache(VOCAB, limits)
    n = NATIVE_MIN_RULES
    chain = {f"r{i}": Seq((literal("a"), Ref(f"r{i + 1}"))) for i in range(n - 1)}
    many = Grammar({**chain, f"r{n - 1}": literal("b")}, start="r0")
    few = Grammar({"r0": Seq((literal("a"), Ref("r1"))), "r1": literal("b")}, start="r0")
    assert_same_lowering(many, limits, cache)
    many_memo, few_memo = _core.TerminalMemo(100), _core.TerminalMemo(100)
    lower_grammar(many, cache.get, limits, memo=many_memo)
    lower_grammar(few, cache.get, limits, memo=few_memo)
    assert len(many_memo) > 0 and len(few_memo) == 0


def test_a_node_class_of_its_own_goes_to_the_reference() -> None:
    if str(ir.__file__).endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
        pytest.skip("IR classes compiled by mypyc cannot be subclassed in Python")

    class MySeq(Seq):
        """A node class of a user's own."""

    limits = Limits()
    cache = TerminalCache(VOCAB, limits)
    own = Grammar({"r0": MySeq((literal("a"), literal("b")))}, start="r0")
    assert lower_natively(own, cache.get, limits) is None
    reference = _outcome(lambda: lower(own, cache.get, limits))
    assert _outcome(lambda: lower_grammar(own, cache.get, limits)) == reference


def test_grammars_the_native_lowering_does_not_take_go_to_the_reference() -> None:
    limits = Limits()
    cache = TerminalCache(VOCAB, limits)
    undefined = Grammar({"r0": Alt((literal("a"), Ref("missing")))}, start="r0")
    assert lower_natively(undefined, cache.get, limits) is None
    with pytest.raises(GrammarSyntaxError, match="missing"):
        lower_grammar(undefined, cache.get, limits)
    nested: Expr = literal("a")
    for _ in range(40):
        nested = Seq((nested, literal("b")))
    deep = Grammar({"r0": nested}, start="r0")
    assert lower_natively(deep, cache.get, Limits(max_grammar_depth=30)) is None
    with pytest.raises(LimitExceeded, match="nests more than 30"):
        lower_grammar(deep, cache.get, Limits(max_grammar_depth=30))
    assert lower_natively(deep, cache.get, Limits(max_grammar_depth=50)) is not None
    with pytest.raises(GrammarSyntaxError, match="start rule"):
        lower_natively(Grammar({"r0": literal("a")}, start="nope"), cache.get, limits)


def test_a_rule_name_equal_but_not_identical_is_found() -> None:
    """References name rules by value: a name built anew (not the dict's own key) is found."""
    limits = Limits()
    name = "".join(["r", "1"])
    grammar = Grammar({"r0": Seq((literal("a"), Ref(name))), "r1": literal("b")}, start="".join(["r", "0"]))
    assert lower_natively(grammar, TerminalCache(VOCAB, limits).get, limits) is not None
    assert_same_lowering(grammar, limits)


def _thue_morse(n: int, complement: bool) -> list[int]:
    """The bytes of the Thue-Morse word of length ``n`` over "ab" (or of its complement)."""
    return [ord("ab"[(i.bit_count() + complement) % 2]) for i in range(n)]


def _polynomial_hash(words: list[int], base: int) -> int:
    """The native lowering's hash of a program's words (ProgramText::hash in lowering.hpp)."""
    h = 0
    for w in words:
        h = (h * base + (w & 0xFFFFFFFF)) % 2**64
    return h


def test_programs_whose_hashes_collide_are_told_apart() -> None:
    """The native lowering knows a program by a polynomial hash of its words mod 2^64 and
    their number. Thue-Morse makes programs of equal length and hash for every odd base: 512
    one-byte items spelling the word, and 512 spelling its complement. The terminal memo
    (across grammars) and the lowering's own table (within one) must compare the words."""
    texts = _thue_morse(512, False), _thue_morse(512, True)
    word, other = (Seq(tuple(Bytes(((c, c),)) for c in text)) for text in texts)
    # Their programs: [OP_SEQ, 512] then [OP_BYTES, 1, c, c] per item.
    spelled = [[1, 512] + [w for c in text for w in (0, 1, c, c)] for text in texts]
    assert spelled[0] != spelled[1]
    for base in (3, 0x9E3779B97F4A7C15, 2**64 - 1):
        assert _polynomial_hash(spelled[0], base) == _polynomial_hash(spelled[1], base)
    limits = Limits()
    cache = TerminalCache(VOCAB, limits)
    first = assert_same_lowering(Grammar({"r0": word}, start="r0"), limits, cache)
    second = assert_same_lowering(Grammar({"r0": other}, start="r0"), limits, cache)
    assert first[0] != second[0]  # each its own terminal
    marked = Special(SPECIAL)
    both = Grammar({"r0": Alt((Seq((word, marked)), Seq((other, marked))))}, start="r0")
    assert len(assert_same_lowering(both, limits, cache)[0]) == 3  # the two words and the special token


STRIDE = 12


@pytest.fixture(scope="module")
def maskbench_grammars() -> list[tuple[str, Grammar]]:
    files = sorted((DATASETS / "maskbench" / "dev").glob("*.json"))[::STRIDE]
    if not files:
        pytest.skip("the MaskBench dev split is not here")
    out = []
    for path in files:
        try:
            grammar = json_schema_to_grammar(json.loads(path.read_text())["schema"], property_order="any")
        except Exception:  # schemas the front-end refuses lower nothing
            continue
        out.append((path.stem, grammar))
    return out


def test_maskbench_schemas_lower_the_same(maskbench_grammars: list[tuple[str, Grammar]]) -> None:
    limits = Limits()
    cache = TerminalCache(VOCAB, limits)  # one cache, as the compiler's: entries shared by schemas
    assert len(maskbench_grammars) > 250
    for _name, grammar in maskbench_grammars:
        assert_same_lowering(grammar, limits, cache)
