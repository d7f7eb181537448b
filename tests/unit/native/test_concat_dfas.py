"""Joining DFAs end to end (``_core.concat_dfas``, cpp/src/dfa.cpp ``concatenate``).

The terminal cache builds an object member's terminal, "whitespace, colon, whitespace, value",
by joining the DFA of its head to the value's instead of determinizing the whole sequence
again. Two things must hold: a join, when it is made, is *the* DFA that ``build_dfa`` makes of
the sequence's program, state for state (so nothing downstream can tell them apart); and a join
is refused exactly when a seam is not deterministic (some string ending a piece can go on, in
that piece, with a byte that begins the next one).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokensieve as ts
from tokensieve import _core
from tokensieve.compiler.compiled import TerminalCache
from tokensieve.program import OP_ALT, OP_BYTES, OP_REPEAT, OP_SEQ, words

BIG = 1_000_000


def _build(program: bytes) -> object:
    return _core.build_dfa(np.frombuffer(program, dtype=np.int32), BIG, BIG)


def _same(a: object, b: object) -> bool:
    return a.num_classes == b.num_classes and a.to_ranges() == b.to_ranges()  # type: ignore[attr-defined]


def _byte(lo: int, hi: int | None = None) -> bytes:
    return words(OP_BYTES, 1, lo, lo if hi is None else hi)


# Small regular expressions over a few bytes, so that seams collide often: a space, 'a'..'c'
# and ':'; sequences, alternations (the empty one too) and bounded and unbounded repeats.
_ATOMS = st.sampled_from([_byte(32), _byte(97), _byte(98), _byte(97, 99), _byte(58), words(OP_SEQ, 0)])


def _extend(children: st.SearchStrategy[bytes]) -> st.SearchStrategy[bytes]:
    seq = st.lists(children, min_size=1, max_size=3).map(lambda xs: words(OP_SEQ, len(xs)) + b"".join(xs))
    alt = st.lists(children, min_size=0, max_size=3).map(lambda xs: words(OP_ALT, len(xs)) + b"".join(xs))
    rep = st.tuples(st.integers(0, 2), st.sampled_from([-1, 0, 1, 3]), children).map(
        lambda t: words(OP_REPEAT, t[0], t[1] if t[1] < 0 else t[0] + t[1]) + t[2]
    )
    return st.one_of(seq, alt, rep)


_PROGRAMS = st.recursive(_ATOMS, _extend, max_leaves=6)


def _rows(dfa: object) -> tuple[list[set[int]], list[bool]]:
    """Per state, the bytes with an edge, and whether it accepts."""
    begin, lo, hi, _target, accepting = dfa.to_ranges()  # type: ignore[attr-defined]
    out = []
    for s in range(len(accepting)):
        out.append({b for e in range(begin[s], begin[s + 1]) for b in range(lo[e], hi[e] + 1)})
    return out, [bool(a) for a in accepting]


def _seam_collides(pieces: list[object]) -> bool:
    """Whether some state ending a piece has an edge on a byte that can begin what follows it
    (the next piece, and past nullable pieces the ones after)."""
    for k, piece in enumerate(pieces):
        out, accepting = _rows(piece)
        follow: set[int] = set()
        for later in pieces[k + 1 :]:
            later_out, _ = _rows(later)
            follow |= later_out[0]
            if not later.nullable:  # type: ignore[attr-defined]
                break
        if any(accepting[s] and out[s] & follow for s in range(len(out))):
            return True
    return False


@settings(max_examples=400, deadline=None)
@given(st.lists(_PROGRAMS, min_size=1, max_size=3))
def test_a_join_is_the_sequence_dfa_or_refused_at_a_colliding_seam(programs: list[bytes]) -> None:
    pieces = [_build(p) for p in programs]
    whole = _build(words(OP_SEQ, len(programs)) + b"".join(programs))
    joined = _core.concat_dfas(pieces, BIG)
    if any(p.is_empty for p in pieces):  # type: ignore[attr-defined]
        assert joined is not None and joined.is_empty and whole.is_empty
    elif joined is None:
        assert _seam_collides(pieces)
    else:
        assert _same(joined, whole)
        assert not _seam_collides(pieces)


def test_the_member_terminal_of_an_object_is_joined() -> None:
    """Whitespace, colon, whitespace, then a value: the head is shared by every member."""
    ws = words(OP_REPEAT, 0, 64) + _byte(32)
    head = ws + _byte(58) + ws
    enum = words(OP_ALT, 2) + words(OP_SEQ, 2) + _byte(97) + _byte(98) + words(OP_SEQ, 1) + _byte(99)
    number = words(OP_REPEAT, 1, -1) + _byte(48, 57)
    joined = _core.concat_dfas([_build(words(OP_SEQ, 3) + head), _build(enum)], BIG)
    assert joined is not None and _same(joined, _build(words(OP_SEQ, 4) + head + enum))
    joined = _core.concat_dfas([_build(words(OP_SEQ, 3) + head), _build(number)], BIG)
    assert joined is not None and _same(joined, _build(words(OP_SEQ, 4) + head + number))
    assert joined.matches(b"  :  123") and not joined.matches(b"  :  ")


def test_refusals_and_bad_arguments() -> None:
    spaces = _build(words(OP_REPEAT, 0, 3) + _byte(32))
    space_then_a = _build(words(OP_SEQ, 2) + _byte(32) + _byte(97))
    assert _core.concat_dfas([spaces, space_then_a], BIG) is None  # a space: more spaces, or the next piece?
    assert _core.concat_dfas([], BIG) is None
    a = _build(_byte(97))
    assert a.num_states == 2
    assert _core.concat_dfas([a, a, a], 5) is None  # six states to lay out, five allowed
    assert _core.concat_dfas([a, a, a], 6) is not None
    with pytest.raises(TypeError):
        _core.concat_dfas([a, None], BIG)  # type: ignore[list-item]


def test_the_terminal_cache_joins_a_head_met_before() -> None:
    vocab = ts.Vocabulary([b" ", b":", b"a", b"1", b"<eos>"], eos_token_ids=[4], special_token_ids=[4])
    cache = TerminalCache(vocab, ts.Limits())
    ws = words(OP_REPEAT, 0, 8) + _byte(32)
    head = ws + _byte(58) + ws
    first = words(OP_SEQ, 4) + head + words(OP_REPEAT, 1, -1) + _byte(97)
    second = words(OP_SEQ, 4) + head + words(OP_REPEAT, 1, -1) + _byte(48, 57)
    assert cache.get(first, 1000, 1000) is not None
    assert ("dfa", words(OP_SEQ, 3) + head, 1000) not in cache._entries  # met once: built whole
    index = cache.get(second, 1000, 1000)
    assert index is not None
    assert ("dfa", words(OP_SEQ, 3) + head, 1000) in cache._entries  # met again: joined
    assert _same(cache._dfa(second, 1000), _build(second))
