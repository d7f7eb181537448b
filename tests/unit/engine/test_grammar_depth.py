"""Deep grammars end in a clear error, never in a crash or an exhausted memory.

The lowering walks expressions recursively, and the installed package runs it compiled to C
(mypyc), where recursion is bounded by the native stack, not by Python's recursion limit.
``Limits.max_grammar_depth`` bounds the walk before it starts (``lower.grammar_depth``);
parsers' own recursion (a schema nested past what ``json`` handles) becomes an error too.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokensieve as ts
from tokensieve.compiler.lower import _facts, analyse_rules, grammar_depth
from tokensieve.ir import Alt, Bytes, Grammar, Ref, Seq

VOCAB = ts.Vocabulary(
    [b"a", b"b", b"c", b"[", b"]", b",", b'"', b"<eos>"], eos_token_ids=[7], special_token_ids=[7]
)
A, B, C = Bytes(((97, 97),)), Bytes(((98, 98),)), Bytes(((99, 99),))


def _nested(levels: int) -> Grammar:
    """``levels`` of ``(e r | b)`` around ``a``, with ``r`` a recursive rule: 2 nodes a level."""
    e = A
    for _ in range(levels):
        e = Alt((Seq((e, Ref("r"))), B))
    return Grammar({"root": e, "r": Alt((Seq((C, Ref("r"))), Seq(())))})


def _chain(length: int) -> Grammar:
    """``r0 -> a r1 -> a r2 ...``: no rule is recursive, so the lowering follows every reference."""
    rules = {f"r{i}": Seq((A, Ref(f"r{i + 1}"))) for i in range(length)}
    rules[f"r{length}"] = B
    rules["root"] = Ref("r0")
    return Grammar(rules)


def test_depth_counts_nesting_and_chains_of_references_but_not_recursion() -> None:
    assert grammar_depth(_nested(10), 10**9) == grammar_depth(_nested(20), 10**9) - 20
    deep = grammar_depth(_chain(300), 0)  # stop_past 0: the exact walk, not the sum of depths
    assert deep == grammar_depth(_chain(200), 0) + 2 * 100  # a Seq and a Ref per rule
    recursive = Grammar({"root": Seq((A, Ref("root"))), "x": Ref("root")})
    assert grammar_depth(recursive, 0) <= 3


@st.composite
def _rule_graphs(draw: st.DrawFn) -> dict[str, list[str]]:
    """Rules by name with the names each refers to (some missing, some repeated, self loops)."""
    count = draw(st.integers(1, 10))
    names = [f"r{i}" for i in range(count)]
    refs = st.lists(st.sampled_from([*names, "undefined"]), max_size=4)
    return {name: draw(refs) for name in names}


def _grammar_of(graph: dict[str, list[str]]) -> Grammar:
    return Grammar({name: Seq((A, *(Ref(r) for r in refs))) for name, refs in graph.items()})


@settings(max_examples=300, deadline=None)
@given(_rule_graphs())
def test_the_walk_finds_exactly_the_rules_that_reach_themselves(graph: dict[str, list[str]]) -> None:
    def reaches_itself(start: str) -> bool:
        seen, todo = set(), [r for r in graph[start] if r in graph]
        while todo:
            name = todo.pop()
            if name == start:
                return True
            if name not in seen:
                seen.add(name)
                todo.extend(r for r in graph[name] if r in graph)
        return False

    assert analyse_rules(_grammar_of(graph), 0).recursive == {n for n in graph if reaches_itself(n)}


@settings(max_examples=300, deadline=None)
@given(_rule_graphs())
def test_without_recursion_the_bound_is_the_deepest_chain(graph: dict[str, list[str]]) -> None:
    grammar = _grammar_of(graph)
    analysis = analyse_rules(grammar, 0)
    if analysis.recursive:
        return
    depth = {name: _facts(body).depth for name, body in grammar.rules.items()}

    def chain(name: str) -> int:  # acyclic: plain recursion ends
        return depth[name] + max((chain(r) for r in graph[name] if r in graph), default=0)

    assert analysis.depth == max(chain(name) for name in graph)
    assert analyse_rules(grammar, 10**9).depth == sum(depth.values())  # within stop_past: the sum


def test_facts_of_a_very_deep_expression_need_no_stack() -> None:
    e = A
    for _ in range(200_000):  # far deeper than any stack would allow by recursion
        e = Seq((e, B))
    assert _facts(e).depth == 200_001


@pytest.mark.parametrize("grammar", [_nested(5_000), _chain(5_000)], ids=["nested", "chain"])
def test_a_grammar_past_the_depth_limit_is_refused(grammar: Grammar) -> None:
    with pytest.raises(ts.LimitExceeded) as info:
        ts.Compiler(VOCAB).grammar(grammar)
    assert info.value.limit == "max_grammar_depth"


def test_a_grammar_within_the_limit_compiles_and_the_limit_is_a_knob() -> None:
    ts.Compiler(VOCAB).grammar(_nested(900))
    ts.Compiler(VOCAB).grammar(_chain(900))
    with pytest.raises(ts.LimitExceeded):
        ts.Compiler(VOCAB, limits=ts.Limits(max_grammar_depth=100)).grammar(_chain(900))


def test_a_schema_too_deep_for_json_is_an_unsupported_schema() -> None:
    schema: dict[str, object] = {"type": "string"}
    for _ in range(5_000):
        schema = {"type": "array", "items": schema}
    with pytest.raises(ts.UnsupportedSchemaError, match="nests too deeply"):
        ts.Compiler(VOCAB).json_schema(schema)


def test_nested_arrays_compile_in_linear_space() -> None:
    # "[ item (, item)* ]" holds the item twice: a program (or a counted terminal's item
    # program) made of the whole nest doubles at every level. Before the size check in
    # try_counted, 20 levels needed more than 8 GiB.
    schema: dict[str, object] = {"type": "string"}
    for _ in range(40):
        schema = {"type": "array", "items": schema}
    grammar = ts.Compiler(VOCAB).json_schema(schema)
    assert grammar.stats.dfa_states < 100_000
