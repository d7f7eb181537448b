"""Tests of the reference oracle itself (tests/oracle.py).

Regular IR is checked against Python's ``re``: each random expression is written as a
bytes regex for the language and, independently, as a regex for its *prefix closure*;
``is_complete`` must agree with the first and ``is_viable_prefix`` with the second.
Context-free grammars are checked against brute-force definitions of their languages.
"""

from __future__ import annotations

import itertools
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.oracle import Oracle
from tokensieve.ir import (
    EMPTY,
    NOTHING,
    Alt,
    Bytes,
    Expr,
    Grammar,
    Ref,
    Repeat,
    Seq,
    Special,
    alt,
    literal,
    seq,
)

ALPHABET = b"abc"

# ----------------------------------------------------------------------------- IR -> Python regex


def _class(expr: Bytes) -> str:
    if not expr.ranges:
        return "(?!)"
    return "[" + "".join(f"\\x{lo:02x}-\\x{hi:02x}" for lo, hi in expr.ranges) + "]"


def _is_empty(expr: Expr) -> bool:
    """The language of a regular expr is empty (no Ref in these tests)."""
    if isinstance(expr, Bytes):
        return not expr.ranges
    if isinstance(expr, Seq):
        return any(_is_empty(it) for it in expr.items)
    if isinstance(expr, Alt):
        return all(_is_empty(it) for it in expr.items)
    if isinstance(expr, Repeat):
        return expr.min > 0 and _is_empty(expr.item)
    raise TypeError(expr)


def full_regex(expr: Expr) -> str:
    if isinstance(expr, Bytes):
        return _class(expr)
    if isinstance(expr, Seq):
        return "(?:" + "".join(full_regex(it) for it in expr.items) + ")"
    if isinstance(expr, Alt):
        return "(?:" + "|".join(full_regex(it) for it in expr.items) + ")" if expr.items else "(?!)"
    if isinstance(expr, Repeat):
        hi = "" if expr.max is None else str(expr.max)
        return f"(?:{full_regex(expr.item)}){{{expr.min},{hi}}}"
    raise TypeError(expr)


def prefix_regex(expr: Expr) -> str:
    """A regex for the prefixes of the words of ``expr`` (the empty string included)."""
    if _is_empty(expr):
        return "(?!)"
    if isinstance(expr, Bytes):
        return f"(?:{_class(expr)})?"
    if isinstance(expr, Seq):
        options = [
            "".join(full_regex(it) for it in expr.items[:i]) + prefix_regex(expr.items[i])
            for i in range(len(expr.items))
        ]
        return "(?:" + "|".join(options) + ")" if options else "(?:)"
    if isinstance(expr, Alt):
        return "(?:" + "|".join(prefix_regex(it) for it in expr.items if not _is_empty(it)) + ")"
    if isinstance(expr, Repeat):
        if expr.max == 0 or _is_empty(expr.item):
            return "(?:)"
        hi = "" if expr.max is None else str(expr.max - 1)
        return f"(?:(?:{full_regex(expr.item)}){{0,{hi}}}{prefix_regex(expr.item)})"
    raise TypeError(expr)


# ----------------------------------------------------------------------------- strategies

_byte_sets = st.lists(st.sampled_from(list(ALPHABET)), max_size=3).map(
    lambda bs: Bytes.of((b, b) for b in bs)
)


def _extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    bounds = st.tuples(st.integers(0, 2), st.one_of(st.none(), st.integers(0, 2))).map(
        lambda mn: (mn[0], None if mn[1] is None else mn[0] + mn[1])
    )
    return st.one_of(
        st.lists(children, max_size=3).map(lambda xs: Seq(tuple(xs))),
        st.lists(children, max_size=3).map(lambda xs: Alt(tuple(xs))),
        st.tuples(children, bounds).map(lambda t: Repeat(t[0], t[1][0], t[1][1])),
    )


regular_exprs = st.recursive(_byte_sets, _extend, max_leaves=8)
small_words = st.binary(max_size=6).map(lambda b: bytes(ALPHABET[x % 3] for x in b))
inputs = st.lists(small_words, max_size=6)


def _sample(expr: Expr, draw: st.DrawFn) -> bytes | None:
    """A random word of ``expr`` (None if the draw hits an empty language)."""
    if isinstance(expr, Bytes):
        members = [b for lo, hi in expr.ranges for b in range(lo, hi + 1)]
        return bytes([draw(st.sampled_from(members))]) if members else None
    if isinstance(expr, Seq):
        parts = [_sample(it, draw) for it in expr.items]
        return None if any(p is None for p in parts) else b"".join(parts)  # type: ignore[arg-type]
    if isinstance(expr, Alt):
        return _sample(draw(st.sampled_from(expr.items)), draw) if expr.items else None
    if isinstance(expr, Repeat):
        hi = expr.min + 2 if expr.max is None else expr.max
        parts = [_sample(expr.item, draw) for _ in range(draw(st.integers(expr.min, hi)))]
        return None if any(p is None for p in parts) else b"".join(parts)  # type: ignore[arg-type]
    raise TypeError(expr)


@settings(max_examples=300, deadline=None)
@given(expr=regular_exprs, extra=inputs, data=st.data())
def test_regular_ir_agrees_with_python_re(expr: Expr, extra: list[bytes], data: st.DataObject) -> None:
    oracle = Oracle(Grammar({"root": expr}))
    full = re.compile(full_regex(expr).encode())
    prefix = re.compile(prefix_regex(expr).encode())
    words = [w for w in (_sample(expr, data.draw) for _ in range(3)) if w is not None]
    candidates = {b""} | set(extra) | {w[:i] for w in words for i in range(len(w) + 1)}
    candidates |= {w + b"a" for w in words}
    for text in candidates:
        assert oracle.is_complete(text) == bool(full.fullmatch(text)), text
        assert oracle.is_viable_prefix(text) == bool(prefix.fullmatch(text)), text
    assert oracle.is_empty_language == _is_empty(expr)


# ----------------------------------------------------------------------------- context-free grammars


def _all_strings(alphabet: bytes, max_len: int) -> list[bytes]:
    return [bytes(t) for n in range(max_len + 1) for t in itertools.product(alphabet, repeat=n)]


def _balanced_depths(text: bytes) -> list[int]:
    depth, out = 0, []
    for b in text:
        depth += 1 if b == ord("(") else -1
        out.append(depth)
    return out


def test_balanced_parentheses_left_recursive() -> None:
    # S -> S S | ( S ) | ε : ambiguous, left recursive and nullable.
    nested = seq(literal("("), Ref("root"), literal(")"))
    g = Grammar({"root": alt(seq(Ref("root"), Ref("root")), nested, EMPTY)})
    oracle = Oracle(g)
    for text in _all_strings(b"()", 8):
        depths = _balanced_depths(text)
        viable = all(d >= 0 for d in depths)
        assert oracle.is_viable_prefix(text) == viable, text
        assert oracle.is_complete(text) == (viable and (not depths or depths[-1] == 0)), text


def test_anbn() -> None:
    g = Grammar({"root": alt(EMPTY, seq(literal("a"), Ref("root"), literal("b")))})
    oracle = Oracle(g)
    for text in _all_strings(b"ab", 8):
        m = re.fullmatch(rb"(a*)(b*)", text)
        viable = m is not None and len(m.group(2)) <= len(m.group(1))
        complete = m is not None and len(m.group(2)) == len(m.group(1))
        assert oracle.is_viable_prefix(text) == viable, text
        assert oracle.is_complete(text) == complete, text


def test_nullable_chain_and_right_recursion() -> None:
    # A -> B B a | ε ; B -> A | ε : everything nullable, language a*.
    g = Grammar(
        {
            "root": Ref("A"),
            "A": alt(seq(Ref("B"), Ref("B"), literal("a")), EMPTY),
            "B": alt(Ref("A"), EMPTY),
        },
    )
    oracle = Oracle(g)
    for text in _all_strings(b"ab", 5):
        assert oracle.is_complete(text) == (b"b" not in text), text
        assert oracle.is_viable_prefix(text) == (b"b" not in text), text


def test_unproductive_branches_are_not_viable() -> None:
    # "a" X never terminates: "a" must not be a viable prefix.
    g = Grammar({"root": alt(seq(literal("a"), Ref("X")), literal("b")), "X": seq(literal("a"), Ref("X"))})
    oracle = Oracle(g)
    assert not oracle.is_viable_prefix(b"a")
    assert oracle.is_complete(b"b")
    assert Oracle(Grammar({"root": NOTHING})).is_empty_language
    assert not Oracle(Grammar({"root": NOTHING})).is_viable_prefix(b"")


def test_special_tokens_match_only_by_id() -> None:
    g = Grammar({"root": seq(literal("x"), Special(7), literal("y"))})
    oracle = Oracle(g)
    assert oracle.is_complete([b"x", 7, b"y"])
    assert not oracle.is_viable_prefix([b"x", 8])
    assert oracle.expected_specials(b"x") == {7}
    vocab = [b"x", b"y", b"<7>", b"xy", b""]
    # token 2 is special 7's stand-in text: allowed after "x" by id, never as text
    specials = {2}
    g7 = Grammar({"root": seq(literal("x"), Special(2), literal("y"))})
    o7 = Oracle(g7)
    assert o7.mask(b"x", vocab, special_ids=specials, eos_ids=[4]) == {2}
    assert o7.mask([b"x", 2], vocab, special_ids=specials, eos_ids=[4]) == {1}
    assert o7.mask([b"x", 2, b"y"], vocab, special_ids=specials, eos_ids=[4]) == {4}


@settings(max_examples=40, deadline=None)
@given(expr=regular_exprs, prefix=small_words)
def test_mask_equals_per_token_check(expr: Expr, prefix: bytes) -> None:
    oracle = Oracle(Grammar({"root": expr}))
    vocab = _all_strings(ALPHABET, 3)  # 40 tokens, id 0 is the empty token
    eos = len(vocab)
    expected: set[int] = set()
    if oracle.is_viable_prefix(prefix):
        expected = {i for i, t in enumerate(vocab) if t and oracle.is_viable_prefix(prefix + t)}
        if oracle.is_complete(prefix):
            expected.add(eos)
    assert oracle.mask(prefix, vocab, eos_ids=[eos]) == expected
