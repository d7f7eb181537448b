"""Bitmask helpers: layout, application to numpy arrays and torch tensors, and argument errors."""

from __future__ import annotations

import numpy as np
import pytest

from tokensieve.bitmask import allocate_bitmask, apply_bitmask, bitmask_words, unpack_bitmask
from tokensieve.errors import VocabularyMismatch

from .reference import expected, pack


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


# ----------------------------------------------------------------------------- allocation and layout


def test_allocate_shape_dtype_and_all_allowed() -> None:
    mask = allocate_bitmask(3, 100)
    assert mask.shape == (3, 4) and mask.dtype == np.int32
    assert unpack_bitmask(mask, 100).all()


@pytest.mark.parametrize(
    "batch, vocab", [(1, 32), (2, 33), (np.int64(2), 33), (2, np.int32(33)), (1, 128256)]
)
def test_allocate_takes_python_and_numpy_ints_alike(batch: int, vocab: int) -> None:
    mask = allocate_bitmask(batch, vocab)
    assert mask.shape == (int(batch), bitmask_words(int(vocab))) and mask.dtype == np.int32
    assert mask.flags.c_contiguous and (mask == -1).all()


@pytest.mark.parametrize(
    "batch, vocab", [(0, 10), (1, 0), (-1, 5), (1.5, 10), (True, 10), (1, True), (1, -3), (1, 2.0)]
)
def test_allocate_rejects_bad_sizes(batch: object, vocab: object) -> None:
    with pytest.raises(ValueError):
        allocate_bitmask(batch, vocab)  # type: ignore[arg-type]


def test_bitmask_words() -> None:
    assert [bitmask_words(n) for n in (1, 31, 32, 33, 49152, 128256)] == [1, 1, 1, 2, 1536, 4008]


def test_bit_order_is_little_endian_within_words() -> None:
    mask = np.zeros((1, 2), dtype=np.int32)
    mask[0, 0] = np.uint32(1 << 31).view(np.int32) | 1  # tokens 0 and 31
    mask[0, 1] = 1 << 2  # token 34
    assert np.flatnonzero(unpack_bitmask(mask, 40)[0]).tolist() == [0, 31, 34]


def test_unpack_matches_reference_packing(rng: np.random.Generator) -> None:
    allowed = rng.random((4, 1000)) < 0.3
    assert np.array_equal(unpack_bitmask(pack(allowed), 1000), allowed)


def test_unpack_rejects_short_bitmask_and_wrong_dtype() -> None:
    with pytest.raises(VocabularyMismatch):
        unpack_bitmask(np.zeros((1, 2), dtype=np.int32), 65)
    with pytest.raises(TypeError):
        unpack_bitmask(np.zeros((1, 2), dtype=np.int64), 10)


# ----------------------------------------------------------------------------- numpy


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_numpy_batch_masks_exactly(rng: np.random.Generator, dtype: type) -> None:
    allowed = rng.random((3, 77)) < 0.5
    logits = rng.standard_normal((3, 77)).astype(dtype)
    want = expected(logits, allowed, -np.inf)
    apply_bitmask(logits, pack(allowed))
    assert np.array_equal(logits, want)


def test_numpy_one_dimensional_and_finite_fill(rng: np.random.Generator) -> None:
    allowed = rng.random(70) < 0.5
    logits = rng.standard_normal(70).astype(np.float32)
    want = expected(logits, allowed, -1e4)
    apply_bitmask(logits, pack(allowed)[0], fill=-1e4)
    assert np.array_equal(logits, want)


def test_numpy_padding_columns_are_masked(rng: np.random.Generator) -> None:
    # A 70-token vocabulary whose model has 128 logit columns: columns 70.. are padding,
    # even where the bitmask's unused high bits happen to be set.
    allowed = rng.random((2, 70)) < 0.5
    mask = pack(allowed)
    mask[:, -1] |= np.int32(-1) << 6  # garbage in the unused bits of the last word
    logits = rng.standard_normal((2, 128)).astype(np.float32)
    want = expected(logits, allowed, -np.inf)
    apply_bitmask(logits, mask, vocab_size=70)
    assert np.array_equal(logits, want)


def test_numpy_without_vocab_size_masks_columns_beyond_the_bitmask(rng: np.random.Generator) -> None:
    logits = rng.standard_normal((1, 100)).astype(np.float32)
    mask = np.full((1, 2), -1, dtype=np.int32)  # 64 tokens allowed
    apply_bitmask(logits, mask)
    assert np.isfinite(logits[0, :64]).all() and np.isneginf(logits[0, 64:]).all()


def test_numpy_indices_touch_only_those_rows(rng: np.random.Generator) -> None:
    allowed = rng.random((4, 40)) < 0.5
    logits = rng.standard_normal((4, 40)).astype(np.float32)
    before = logits.copy()
    apply_bitmask(logits, pack(allowed), indices=[0, 2])
    full = expected(before, allowed, -np.inf)
    assert np.array_equal(logits[[0, 2]], full[[0, 2]])
    assert np.array_equal(logits[[1, 3]], before[[1, 3]])


def test_numpy_non_contiguous_rows_are_updated_in_place(rng: np.random.Generator) -> None:
    allowed = rng.random((2, 40)) < 0.5
    big = rng.standard_normal((2, 3, 40)).astype(np.float32)
    last = big[:, -1, :]  # a strided view, like the last position of (batch, seq, vocab)
    want = expected(last.copy(), allowed, -np.inf)
    apply_bitmask(last, pack(allowed))
    assert np.array_equal(big[:, -1, :], want)


def test_numpy_errors() -> None:
    logits = np.zeros((2, 64), dtype=np.float32)
    with pytest.raises(VocabularyMismatch):  # logits narrower than the vocabulary
        apply_bitmask(np.zeros((1, 50), dtype=np.float32), np.zeros((1, 2), dtype=np.int32), vocab_size=60)
    with pytest.raises(VocabularyMismatch):  # logits do not reach the bitmask's last word
        apply_bitmask(np.zeros((1, 32), dtype=np.float32), np.zeros((1, 2), dtype=np.int32))
    with pytest.raises(VocabularyMismatch):  # bitmask sized for another vocabulary
        apply_bitmask(logits, np.zeros((2, 3), dtype=np.int32), vocab_size=64)
    with pytest.raises(TypeError):
        apply_bitmask(logits, np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(TypeError):
        apply_bitmask(np.zeros((2, 64), dtype=np.int32), np.zeros((2, 2), dtype=np.int32))
    with pytest.raises(ValueError, match="rows"):
        apply_bitmask(logits, np.zeros((3, 2), dtype=np.int32))
    with pytest.raises(ValueError, match="shape"):
        apply_bitmask(np.zeros((1, 1, 64), dtype=np.float32), np.zeros((1, 2), dtype=np.int32))
    with pytest.raises(IndexError):
        apply_bitmask(logits, np.zeros((2, 2), dtype=np.int32), indices=[2])
    with pytest.raises(TypeError):
        apply_bitmask([[0.0] * 64], np.zeros((1, 2), dtype=np.int32))


def test_importing_tokensieve_and_generation_never_imports_torch() -> None:
    import subprocess
    import sys

    code = (
        "import sys, numpy as np, tokensieve, tokensieve.generation;"
        "tokensieve.apply_bitmask(np.zeros(40, dtype=np.float32), tokensieve.allocate_bitmask(1, 40)[0]);"
        "sys.exit(int('torch' in sys.modules))"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
