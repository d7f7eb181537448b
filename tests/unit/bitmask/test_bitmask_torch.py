"""apply_bitmask on torch tensors (CPU; the code path is the one CUDA tensors take)."""

from __future__ import annotations

import numpy as np
import pytest

from tokensieve.bitmask import apply_bitmask
from tokensieve.errors import VocabularyMismatch

from .reference import expected, pack

torch = pytest.importorskip("torch")


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(99)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_torch_matches_numpy_reference(rng: np.random.Generator, dtype: str) -> None:
    allowed = rng.random((3, 100)) < 0.4
    base = rng.standard_normal((3, 128)).astype(np.float32)
    logits = torch.tensor(base, dtype=getattr(torch, dtype))
    want = expected(logits.float().numpy(), allowed, -np.inf)
    apply_bitmask(logits, pack(allowed), vocab_size=100)
    assert np.array_equal(logits.float().numpy(), want)


def test_torch_bitmask_tensor_and_finite_fill(rng: np.random.Generator) -> None:
    allowed = rng.random(50) < 0.5
    logits = torch.tensor(rng.standard_normal(50).astype(np.float32))
    want = expected(logits.numpy().copy(), allowed, -7.0)
    apply_bitmask(logits, torch.from_numpy(pack(allowed)[0]), fill=-7.0)
    assert np.array_equal(logits.numpy(), want)


def test_torch_strided_view_is_updated_in_place(rng: np.random.Generator) -> None:
    allowed = rng.random((2, 64)) < 0.5
    big = torch.tensor(rng.standard_normal((2, 5, 64)).astype(np.float32))
    last = big[:, -1, :]
    want = expected(last.numpy().copy(), allowed, -np.inf)
    apply_bitmask(last, pack(allowed))
    assert np.array_equal(big[:, -1, :].numpy(), want)


def test_torch_indices(rng: np.random.Generator) -> None:
    allowed = rng.random((3, 64)) < 0.5
    logits = torch.tensor(rng.standard_normal((3, 64)).astype(np.float32))
    before = logits.clone()
    apply_bitmask(logits, pack(allowed), indices=[1])
    assert torch.equal(logits[0], before[0]) and torch.equal(logits[2], before[2])
    assert np.array_equal(logits[1].numpy(), expected(before[1].numpy(), allowed[1], -np.inf))


def test_torch_logits_with_torch_bitmask_into_numpy(rng: np.random.Generator) -> None:
    allowed = rng.random((1, 40)) < 0.5
    logits = rng.standard_normal((1, 40)).astype(np.float32)
    want = expected(logits, allowed, -np.inf)
    apply_bitmask(logits, torch.from_numpy(pack(allowed)))
    assert np.array_equal(logits, want)


def test_torch_errors() -> None:
    logits = torch.zeros(2, 64)
    with pytest.raises(VocabularyMismatch):
        apply_bitmask(torch.zeros(1, 50), np.zeros((1, 2), dtype=np.int32), vocab_size=60)
    with pytest.raises(TypeError):
        apply_bitmask(logits, torch.zeros(2, 2, dtype=torch.int64))
    with pytest.raises(TypeError):
        apply_bitmask(torch.zeros(2, 64, dtype=torch.int32), np.zeros((2, 2), dtype=np.int32))
    with pytest.raises(TypeError):
        apply_bitmask(logits, [[0, 0], [0, 0]])
    with pytest.raises(ValueError, match="rows"):
        apply_bitmask(logits, np.zeros((1, 2), dtype=np.int32))
