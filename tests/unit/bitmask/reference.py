"""Reference bitmask packing shared by the bitmask tests."""

from __future__ import annotations

import math

import numpy as np


def pack(allowed: np.ndarray) -> np.ndarray:
    """Reference packing, one bit at a time: token i -> bit i % 32 of word i // 32."""
    allowed = np.atleast_2d(allowed)
    words = np.zeros((allowed.shape[0], math.ceil(allowed.shape[1] / 32)), dtype=np.int64)
    for r, c in zip(*np.nonzero(allowed), strict=True):
        words[r, c // 32] |= 1 << (c % 32)
    # Reinterpret the unsigned 32-bit pattern as int32 (bit 31 is the sign bit).
    return words.astype(np.uint32).view(np.int32)


def expected(logits: np.ndarray, allowed: np.ndarray, fill: float) -> np.ndarray:
    out = np.full_like(logits, fill)
    vocab = allowed.shape[-1]
    out[..., :vocab] = np.where(allowed, logits[..., :vocab], fill)
    return out
