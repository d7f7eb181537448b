"""Token bitmasks: allocate them, read them, and apply them to logits (numpy or torch).

A bitmask row has one bit per vocabulary token, packed into int32 words: token ``i`` is
allowed when bit ``i % 32`` (least significant first) of word ``i // 32`` is set. That is
the layout :meth:`tokensieve.Matcher.fill_bitmask` writes and XGrammar uses, so masks can be
shared with other tools.

:func:`apply_bitmask` works in place on numpy arrays and torch tensors. The torch path uses
only vectorized tensor operations, so the same code runs on CUDA tensors without copying
logits to the host. torch is imported only when a tensor is passed in: importing
:mod:`tokensieve` never imports torch.

Models often have more logit columns than tokenizer entries (embedding rows padded to a
multiple of 64 or 128); those padding columns are never valid tokens and are always masked.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import VocabularyMismatch

__all__ = ["allocate_bitmask", "apply_bitmask", "bitmask_words", "unpack_bitmask"]

_BITS = 32
_INT32 = np.dtype(np.int32)


def bitmask_words(vocab_size: int) -> int:
    """Number of int32 words one bitmask row needs for ``vocab_size`` tokens."""
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, (int, np.integer)) or vocab_size <= 0:
        raise ValueError(f"vocab_size must be a positive int, got {vocab_size!r}")
    return (int(vocab_size) + _BITS - 1) // _BITS


def allocate_bitmask(batch_size: int, vocab_size: int) -> np.ndarray:
    """A new ``(batch_size, ceil(vocab_size / 32))`` int32 bitmask with every token allowed.

    Starting from "all allowed" means a row that no matcher fills constrains nothing, which
    is what a batch mixing constrained and free rows wants.
    """
    # Plain ints take a short path: a fresh request finds the caches cold, and there each
    # line of Python costs (the checks and the call to bitmask_words were 20 us of 64 with a
    # full collection just before, measured as bench/compare.py's worker runs).
    if type(batch_size) is int and type(vocab_size) is int and batch_size > 0 and vocab_size > 0:
        words = (vocab_size + _BITS - 1) // _BITS  # bitmask_words' formula, without its call
    else:
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        words = bitmask_words(vocab_size)
    # empty + fill rather than np.full, whose generic copy path costs a fifth more (about
    # 10 us of a 16 KiB row with cold caches); a dtype object, not the type to convert.
    bitmask = np.empty((int(batch_size), words), _INT32)
    bitmask.fill(-1)
    return bitmask


def unpack_bitmask(bitmask: np.ndarray, vocab_size: int) -> np.ndarray:
    """The bitmask as booleans: shape ``(..., vocab_size)``, ``True`` where a token is allowed."""
    bitmask = _check_numpy_bitmask(bitmask)
    if bitmask.shape[-1] * _BITS < vocab_size:
        raise VocabularyMismatch(
            f"bitmask has {bitmask.shape[-1]} words ({bitmask.shape[-1] * _BITS} tokens), "
            f"fewer than the vocabulary's {vocab_size} tokens"
        )
    return _unpack_numpy(bitmask)[..., :vocab_size]


def apply_bitmask(
    logits: Any,
    bitmask: Any,
    *,
    vocab_size: int | None = None,
    fill: float = -math.inf,
    indices: Sequence[int] | None = None,
) -> None:
    """Set every disallowed logit to ``fill`` (``-inf`` by default), in place.

    ``logits`` is a float numpy array or torch tensor of shape ``(width,)`` or
    ``(batch, width)``; ``bitmask`` an int32 array or tensor of shape ``(words,)`` or
    ``(batch, words)`` (a numpy bitmask may be applied to torch logits on any device).

    ``vocab_size`` is the number of real tokens. Columns at or beyond it are padding and
    are always masked; logits narrower than the vocabulary raise :class:`VocabularyMismatch`.
    When omitted, the vocabulary is taken to span the bitmask's words (capped at the logits
    width).

    ``indices`` restricts the update to those batch rows (row ``r`` of ``logits`` uses row
    ``r`` of ``bitmask``); other rows are left untouched.
    """
    if is_torch_tensor(logits):
        _apply_torch(logits, bitmask, vocab_size=vocab_size, fill=fill, indices=indices)
    elif isinstance(logits, np.ndarray):
        _apply_numpy(logits, bitmask, vocab_size=vocab_size, fill=fill, indices=indices)
    else:
        raise TypeError(f"logits must be a numpy array or a torch tensor, got {type(logits).__name__}")


# ----------------------------------------------------------------------------- shared checks


def is_torch_tensor(value: Any) -> bool:
    """Whether ``value`` is a torch tensor, without importing torch."""
    # Look torch up only if the caller already imported it: a numpy user never pays for torch.
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _check_shapes(
    logits_shape: tuple[int, ...], mask_shape: tuple[int, ...], vocab_size: int | None
) -> tuple[int, int]:
    """Validate shapes; return ``(batch, vocab)`` for the 2-D views the appliers use."""
    if len(logits_shape) not in (1, 2):
        raise ValueError(f"logits must have shape (width,) or (batch, width), got {tuple(logits_shape)}")
    if len(mask_shape) not in (1, 2):
        raise ValueError(f"bitmask must have shape (words,) or (batch, words), got {tuple(mask_shape)}")
    batch = logits_shape[0] if len(logits_shape) == 2 else 1
    mask_batch = mask_shape[0] if len(mask_shape) == 2 else 1
    if batch != mask_batch:
        raise ValueError(f"logits have {batch} rows but the bitmask has {mask_batch}")
    width, words = logits_shape[-1], mask_shape[-1]
    if vocab_size is None:
        # The last word may be partly unused; the logits must at least reach into it.
        if width <= (words - 1) * _BITS:
            raise VocabularyMismatch(
                f"logits have {width} columns but the bitmask covers {words} words "
                f"(more than {(words - 1) * _BITS} tokens)"
            )
        return batch, min(width, words * _BITS)
    if words != bitmask_words(vocab_size):
        raise VocabularyMismatch(
            f"bitmask has {words} words per row; a vocabulary of {vocab_size} tokens needs "
            f"{bitmask_words(vocab_size)}"
        )
    if width < vocab_size:
        raise VocabularyMismatch(
            f"logits have {width} columns, fewer than the vocabulary's {vocab_size} tokens"
        )
    return batch, int(vocab_size)


def _check_indices(indices: Sequence[int] | None, batch: int) -> list[int] | None:
    if indices is None:
        return None
    rows = [int(i) for i in indices]
    bad = [i for i in rows if not 0 <= i < batch]
    if bad:
        raise IndexError(f"indices {bad} out of range for a batch of {batch}")
    return rows


# ----------------------------------------------------------------------------- numpy


def _check_numpy_bitmask(bitmask: Any) -> np.ndarray:
    if not isinstance(bitmask, np.ndarray):
        raise TypeError(f"bitmask must be a numpy int32 array here, got {type(bitmask).__name__}")
    if bitmask.dtype != np.int32:
        raise TypeError(f"bitmask must have dtype int32, got {bitmask.dtype}")
    return bitmask


def _unpack_numpy(bitmask: np.ndarray) -> np.ndarray:
    # Viewing little-endian int32 words as bytes puts token i at byte i // 8, bit i % 8.
    words = np.ascontiguousarray(bitmask, dtype="<i4")
    return np.unpackbits(words.view(np.uint8), axis=-1, bitorder="little").astype(bool)


def _apply_numpy(
    logits: np.ndarray, bitmask: Any, *, vocab_size: int | None, fill: float, indices: Sequence[int] | None
) -> None:
    if not np.issubdtype(logits.dtype, np.floating):
        raise TypeError(f"logits must be a floating-point array, got dtype {logits.dtype}")
    if is_torch_tensor(bitmask):
        bitmask = bitmask.detach().cpu().numpy()  # a torch int32 tensor becomes an int32 array
    bitmask = _check_numpy_bitmask(bitmask)
    batch, vocab = _check_shapes(logits.shape, bitmask.shape, vocab_size)
    rows2d = logits[None, :] if logits.ndim == 1 else logits  # a view: writes reach the caller
    masks2d = bitmask[None, :] if bitmask.ndim == 1 else bitmask
    rows = _check_indices(indices, batch)
    selected = range(batch) if rows is None else rows
    for r in selected:
        allowed = _unpack_numpy(masks2d[r])[:vocab]
        np.copyto(rows2d[r, :vocab], fill, where=~allowed, casting="unsafe")
        rows2d[r, vocab:] = fill


# ----------------------------------------------------------------------------- torch


def _apply_torch(
    logits: Any, bitmask: Any, *, vocab_size: int | None, fill: float, indices: Sequence[int] | None
) -> None:
    import torch

    if not torch.is_floating_point(logits):
        raise TypeError(f"logits must be a floating-point tensor, got dtype {logits.dtype}")
    if isinstance(bitmask, np.ndarray):
        bitmask = torch.from_numpy(_check_numpy_bitmask(bitmask))
    elif not isinstance(bitmask, torch.Tensor):
        raise TypeError(f"bitmask must be an int32 numpy array or torch tensor, got {type(bitmask).__name__}")
    if bitmask.dtype != torch.int32:
        raise TypeError(f"bitmask must have dtype int32, got {bitmask.dtype}")
    batch, vocab = _check_shapes(tuple(logits.shape), tuple(bitmask.shape), vocab_size)
    rows = _check_indices(indices, batch)

    view = logits.unsqueeze(0) if logits.dim() == 1 else logits  # shares storage with the caller
    masks = (bitmask.unsqueeze(0) if bitmask.dim() == 1 else bitmask).to(logits.device)
    if rows is not None:
        index = torch.tensor(rows, dtype=torch.long, device=logits.device)
        masks = masks.index_select(0, index)
    # (batch, words, 1) >> (32,) & 1 -> (batch, words * 32) allowed flags, little-endian bit order.
    shifts = torch.arange(_BITS, dtype=torch.int32, device=logits.device)
    allowed = ((masks.unsqueeze(-1) >> shifts) & 1).reshape(masks.shape[0], -1)[:, :vocab].bool()
    if rows is None:
        view[:, :vocab].masked_fill_(~allowed, fill)
        view[:, vocab:] = fill
    else:
        # Advanced indexing copies, so edit the selected rows and write them back.
        sub = view.index_select(0, index)
        sub[:, :vocab].masked_fill_(~allowed, fill)
        sub[:, vocab:] = fill
        view.index_copy_(0, index, sub)
