"""``_core.CountedTerminal``: the pieces it refuses, with the reason, and its loop automaton."""

from __future__ import annotations

import numpy as np
import pytest

from tokensieve import _core
from tokensieve.compiler.lower import regex_program
from tokensieve.compiler.native_vocab import native_vocabulary
from tokensieve.ir import Alt, Bytes, Expr, Repeat, literal
from tokensieve.vocabulary import Vocabulary

VOCAB = native_vocabulary(
    Vocabulary([b"a", b"b", b"ab", b'"', b"<eos>"], eos_token_ids=[4], special_token_ids=[4])
)


def dfa(expr: Expr) -> object:
    return _core.build_dfa(np.asarray(regex_program(expr), dtype=np.int32), 100_000, 10_000)


def test_quoted_item_loop() -> None:
    counted = _core.CountedTerminal(dfa(literal('"')), dfa(literal("ab")), 1, 3, dfa(literal('"')), VOCAB)
    # B, the prefix's start, the item's two non-accepting states (its start is copied into B),
    # the suffix's start and end
    assert counted.loop.num_states == 6
    assert (counted.min, counted.max) == (1, 3)


@pytest.mark.parametrize(
    ("prefix", "item", "bounds", "suffix", "reason"),
    [
        (None, Repeat(Bytes.of([(97, 97)]), 0, 2), (0, 5), None, "must not match the empty string"),
        (None, Alt((literal("a"), literal("ab"))), (0, 5), None, "item must be prefix-free"),
        (Alt((literal("a"), literal("ab"))), literal("b"), (0, 5), None, "prefix must be prefix-free"),
        (None, literal("a"), (0, 5), literal("ab"), "start with a common byte"),
        (None, literal("a"), (3, 2), None, "bad bounds"),
        (None, literal("a"), (0, 0), None, "bad bounds"),
    ],
)
def test_refused_pieces(
    prefix: Expr | None, item: Expr, bounds: tuple[int, int], suffix: Expr | None, reason: str
) -> None:
    with pytest.raises(ValueError, match=reason):
        _core.CountedTerminal(
            None if prefix is None else dfa(prefix),
            dfa(item),
            bounds[0],
            bounds[1],
            None if suffix is None else dfa(suffix),
            VOCAB,
        )
