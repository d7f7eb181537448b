"""Choosing the next token from (already masked) logits: greedy, or temperature / top-k / top-p sampling.

Sampling runs in numpy on one row at a time. Masked logits are ``-inf``, so they get zero
probability under every setting; a row with no finite logit at all is a bug upstream and
raises rather than picking an arbitrary token.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import NoTokenAllowed

__all__ = ["SamplingParams", "sample"]


@dataclass(frozen=True)
class SamplingParams:
    """``temperature=0`` is greedy decoding. ``top_k=0`` and ``top_p=1`` disable those filters."""

    temperature: float = 0.0
    top_p: float = 1.0
    top_k: int = 0
    seed: int | None = None

    def __post_init__(self) -> None:
        if not self.temperature >= 0.0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if isinstance(self.top_k, bool) or not isinstance(self.top_k, int) or self.top_k < 0:
            raise ValueError(f"top_k must be an int >= 0, got {self.top_k!r}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    def rng(self) -> np.random.Generator:
        """A fresh generator: the same seed replays the same choices."""
        return np.random.default_rng(self.seed)


def sample(logits: np.ndarray, params: SamplingParams, rng: np.random.Generator) -> int:
    """The next token id for one row of logits (shape ``(width,)``)."""
    finite = np.isfinite(logits)
    if not finite.any():
        raise NoTokenAllowed("every logit is masked: no token can be sampled")
    if params.greedy:
        return int(np.argmax(np.where(finite, logits, -np.inf)))

    candidates = np.flatnonzero(finite)
    scores = logits[candidates].astype(np.float64) / params.temperature
    if 0 < params.top_k < candidates.size:
        keep = np.argpartition(-scores, params.top_k - 1)[: params.top_k]
        candidates, scores = candidates[keep], scores[keep]
    # Sort by score (ties by token id) so that top-p and the draw do not depend on input order.
    order = np.lexsort((candidates, -scores))
    candidates, scores = candidates[order], scores[order]
    probs = np.exp(scores - scores[0])
    probs /= probs.sum()
    if params.top_p < 1.0:
        # Keep the smallest prefix whose mass reaches top_p (always at least one token).
        cutoff = int(np.searchsorted(np.cumsum(probs), params.top_p, side="left")) + 1
        candidates, probs = candidates[:cutoff], probs[:cutoff] / probs[:cutoff].sum()
    return int(candidates[rng.choice(candidates.size, p=probs)])
