"""Matcher behaviour beyond mask equality: errors, limits, EOS, specials, threads, batching."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

import numpy as np
import pytest

import tokensieve as ts
from tokensieve.ir import Bytes, Grammar, Ref, Repeat, Special, alt, literal, seq

TOKENS = [b"a", b"b", b"ab", b"(", b")", b"{", b"}", b'"', b"x", b"<eos>", b"<sp>", b"<pad>"]
EOS, SP, PAD = 9, 10, 11
T = TypeVar("T")


@pytest.fixture(scope="module")
def vocab() -> ts.Vocabulary:
    return ts.Vocabulary(TOKENS, eos_token_ids=[EOS], special_token_ids=[EOS, SP, PAD])


@pytest.fixture(scope="module")
def compiler(vocab: ts.Vocabulary) -> ts.Compiler:
    return ts.Compiler(vocab)


def parens() -> Grammar:
    g = Grammar()
    g.add("root", alt(seq(literal("("), Ref("root"), literal(")")), literal("x")))
    return g


def allowed(m: ts.Matcher) -> set[bytes]:
    return {TOKENS[i] for i in m.allowed_tokens()}


def test_eos_only_when_accepting(compiler: ts.Compiler) -> None:
    m = ts.Matcher(compiler.grammar(parens()))
    assert b"<eos>" not in allowed(m)
    assert not m.accept_token(EOS)
    assert m.accept_bytes(b"(x")
    assert not m.is_accepting()
    assert m.accept_token(4)
    assert m.is_accepting() and allowed(m) == {b"<eos>"}
    assert m.accept_token(EOS) and m.is_terminated()


def test_after_termination(compiler: ts.Compiler) -> None:
    m = ts.Matcher(compiler.grammar(parens()))
    assert m.accept_bytes(b"x") and m.accept_token(EOS)
    with pytest.raises(ts.MatcherStateError):
        m.accept_token(8)
    assert allowed(m) == {b"<eos>"}  # a finished row in a batch stays finished
    m.rollback(1)
    assert not m.is_terminated() and m.is_accepting()


def test_special_tokens_only_where_the_grammar_names_them(compiler: ts.Compiler) -> None:
    g = Grammar()
    g.add("root", seq(literal("a"), Special(SP), literal("b")))
    m = ts.Matcher(compiler.grammar(g))
    assert allowed(m) == {b"a"}  # not "ab": the special token must come between
    assert m.accept_token(0)
    assert allowed(m) == {b"<sp>"}
    assert not m.accept_token(PAD)
    assert m.accept_token(SP)
    assert allowed(m) == {b"b"}


def test_special_token_text_never_matches_bytes(compiler: ts.Compiler) -> None:
    g = Grammar()
    g.add("root", Repeat(Bytes.of([(0, 255)]), 0, None))
    m = ts.Matcher(compiler.grammar(g))
    got = allowed(m)
    assert b"<sp>" not in got and b"<pad>" not in got and b"<eos>" in got


def test_no_token_allowed_is_an_error(vocab: ts.Vocabulary, compiler: ts.Compiler) -> None:
    g = Grammar()
    g.add("root", literal("zz"))  # no token spells 'z'
    m = ts.Matcher(compiler.grammar(g))
    with pytest.raises(ts.NoTokenAllowed):
        m.fill_bitmask(ts.allocate_bitmask(1, vocab.size))


def test_bitmask_too_narrow(compiler: ts.Compiler) -> None:
    m = ts.Matcher(compiler.grammar(parens()))
    with pytest.raises(ts.VocabularyMismatch):
        m.fill_bitmask(np.zeros((1, 0), dtype=np.int32))


def test_bitmask_row_out_of_range(vocab: ts.Vocabulary, compiler: ts.Compiler) -> None:
    m = ts.Matcher(compiler.grammar(parens()))
    with pytest.raises(ValueError):
        m.fill_bitmask(ts.allocate_bitmask(1, vocab.size), row=3)


def test_bad_token_and_rollback_arguments(compiler: ts.Compiler) -> None:
    m = ts.Matcher(compiler.grammar(parens()))
    with pytest.raises(ValueError):
        m.accept_token(10_000)
    with pytest.raises(ValueError):
        m.rollback(1)


def test_rejected_input_leaves_state_unchanged(compiler: ts.Compiler) -> None:
    m = ts.Matcher(compiler.grammar(parens()))
    assert m.accept_bytes(b"((")
    before = allowed(m)
    assert not m.accept_bytes(b"x)x")  # all or nothing
    assert not m.accept_token(4)
    assert allowed(m) == before and m.num_history == 1


def test_mask_work_limit(vocab: ts.Vocabulary) -> None:
    # A highly ambiguous grammar with a tiny work budget: a named error, never a hang.
    g = Grammar()
    g.add("root", alt(seq(Ref("root"), Ref("root")), literal("a"), literal("ab"), literal("b")))
    compiler = ts.Compiler(vocab, limits=ts.Limits(max_mask_work=50, max_accept_work=50))
    m = ts.Matcher(compiler.grammar(g))
    with pytest.raises(ts.LimitExceeded) as info:
        for _ in range(40):
            m.accept_token(0)
            m.allowed_tokens()
    assert info.value.limit in {"max_mask_work", "max_accept_work"}


def test_limits_other_than_the_terminal_cache_s_reach_the_matcher(vocab: ts.Vocabulary) -> None:
    # compile_grammar takes the cache's native limits only when they are the grammar's own:
    # a tighter budget given beside a default-limits cache still bounds the matcher.
    from tokensieve.compiler.compiled import TerminalCache, compile_grammar

    g = Grammar()
    g.add("root", alt(seq(Ref("root"), Ref("root")), literal("a"), literal("ab"), literal("b")))
    cache = TerminalCache(vocab, ts.Limits())
    tight = ts.Limits(max_mask_work=50, max_accept_work=50)
    m = ts.Matcher(compile_grammar(g, vocab, tight, "grammar", cache))
    with pytest.raises(ts.LimitExceeded):
        for _ in range(40):
            m.accept_token(0)
            m.allowed_tokens()
    roomy = ts.Matcher(compile_grammar(g, vocab, ts.Limits(), "grammar", cache))  # equal, not the same
    for _ in range(5):
        roomy.accept_token(0)
        roomy.allowed_tokens()


def test_huge_repetition_runs_with_a_counter(vocab: ts.Vocabulary) -> None:
    g = Grammar()
    g.add("root", Repeat(Bytes.of([(97, 98)]), 0, 10_000_000))
    compiled = ts.Compiler(vocab).grammar(g)
    assert compiled.stats.counted_terminals == 1
    assert compiled.stats.dfa_states < 10  # one item's automaton, not ten million copies
    m = ts.Matcher(compiled)
    assert m.accept_bytes(b"ab" * 1000) and m.is_accepting()


def test_huge_repetition_without_a_counter_hits_a_limit(vocab: ts.Vocabulary) -> None:
    g = Grammar()
    # "a" is a prefix of "ab": no counter can tell where an item ends, so the repetition is unrolled
    g.add("root", Repeat(alt(literal("a"), literal("ab")), 0, 10_000_000))
    with pytest.raises(ts.LimitExceeded):
        ts.Compiler(vocab).grammar(g)


def test_empty_language(compiler: ts.Compiler) -> None:
    g = Grammar()
    g.add("root", seq(literal("a"), Ref("root")))  # no finite string
    with pytest.raises(ts.EmptyLanguageError):
        compiler.grammar(g)


def test_jump_forward(compiler: ts.Compiler) -> None:
    g = Grammar()
    g.add("root", seq(literal('{"name": "'), Repeat(Bytes.of([(97, 98)]), 1, None), literal('"}')))
    m = ts.Matcher(compiler.grammar(g))
    assert m.jump_forward() == b'{"name": "'
    assert m.num_history == 0  # unchanged
    assert m.accept_bytes(b'{"name": "ab')
    assert m.jump_forward() == b""  # a or b or the closing quote
    assert m.accept_bytes(b'"')
    assert m.jump_forward() == b"}"


def test_fork_is_independent(compiler: ts.Compiler) -> None:
    m = ts.Matcher(compiler.grammar(parens()))
    assert m.accept_bytes(b"(")
    f = m.fork()
    assert f.accept_bytes(b"x)")
    assert f.is_accepting() and not m.is_accepting()
    assert allowed(m) == {b"(", b"x"}


def test_threads_share_one_grammar() -> None:
    vocab = ts.Vocabulary.from_tokenizer_json(
        __import__("tests.paths", fromlist=["TOKENIZERS"]).TOKENIZERS / "hf/gpt2-50k.tokenizer.json"
    )
    grammar = ts.Compiler(vocab).json()
    pieces = [b'{"a', b'": [1, ', b'"x', b'y", ', b'{"b": ', b"tr", b"ue}]}"]

    def masks() -> list[bytes]:
        m = ts.Matcher(grammar)
        out = []
        for p in pieces:
            out.append(m.allowed_tokens().tobytes())
            assert m.accept_bytes(p)
        return out

    expected = masks()
    results = in_threads(masks, 8)
    assert len(results) == 8 and all(r == expected for r in results)


def in_threads(work: Callable[[], T], n: int) -> list[T]:
    """``work()`` run in ``n`` threads at once; the results of those that returned."""
    results: list[T] = []
    threads = [threading.Thread(target=lambda: results.append(work())) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


CALLS = r"""
root  ::= expr (" " expr)*
expr  ::= ident | ident "(" ws (args ws)? ")"
args  ::= expr (ws "," ws expr)*
ident ::= [a-z_]+
ws    ::= " "*
"""


def test_threads_share_head_indexes() -> None:
    """Threads walking one grammar build and share its head indexes (head_index.hpp) with the
    mask cache off, so every mask walks; their masks equal those of walks without indexes."""
    vocab = ts.Vocabulary.from_tokenizer_json(
        __import__("tests.paths", fromlist=["TOKENIZERS"]).TOKENIZERS / "hf/gpt2-50k.tokenizer.json"
    )
    indexed = ts.Compiler(vocab, limits=ts.Limits(mask_cache_bytes=1)).ebnf(CALLS)
    stepped = ts.Compiler(vocab, limits=ts.Limits(mask_cache_bytes=1, min_head_index_nodes=10**9)).ebnf(CALLS)
    pieces = [b"f(", b"x", b", g(", b"a_b", b" ", b", c)", b") ", b"h"] * 2

    def masks(grammar: ts.CompiledGrammar) -> list[bytes]:
        m = ts.Matcher(grammar)
        out = []
        for p in pieces:
            out.append(m.allowed_tokens().tobytes())
            assert m.accept_bytes(p)
        return out

    expected = masks(stepped)
    results = in_threads(lambda: masks(indexed), 6)
    assert len(results) == 6 and all(r == expected for r in results)
    assert indexed._native.memory_bytes() > stepped._native.memory_bytes()  # indexes were built


def test_fill_bitmasks_in_parallel(vocab: ts.Vocabulary, compiler: ts.Compiler) -> None:
    grammar = compiler.grammar(parens())
    matchers = [ts.Matcher(grammar) for _ in range(4)]
    for i, m in enumerate(matchers):
        assert m.accept_bytes(b"(" * i)
    batch = ts.allocate_bitmask(4, vocab.size)
    ts.fill_bitmasks(matchers, batch)
    for i, m in enumerate(matchers):
        row = ts.allocate_bitmask(1, vocab.size)
        m.fill_bitmask(row)
        assert (row[0] == batch[i]).all()


def test_compiler_cache(vocab: ts.Vocabulary) -> None:
    compiler = ts.Compiler(vocab)
    a = compiler.regex("a+b")
    b = compiler.regex("a+b")
    assert a is b and compiler.cache_hits == 1
    assert compiler.regex("b+") is not a


def test_compile_time_and_size_limits(vocab: ts.Vocabulary) -> None:
    with pytest.raises(ts.LimitExceeded) as info:
        ts.Compiler(vocab, limits=ts.Limits(max_compile_seconds=1e-9)).json()
    assert info.value.limit == "max_compile_seconds"
    with pytest.raises(ts.LimitExceeded) as info:
        ts.Compiler(vocab, limits=ts.Limits(max_total_dfa_states=3)).json()
    assert info.value.limit == "max_total_dfa_states"
