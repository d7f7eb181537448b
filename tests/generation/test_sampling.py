"""Sampling: greedy, temperature, top-k, top-p, seeds, and masked logits."""

from __future__ import annotations

import numpy as np
import pytest

from tokensieve.errors import NoTokenAllowed
from tokensieve.generation.sampling import SamplingParams, sample


def draws(logits: np.ndarray, params: SamplingParams, n: int) -> np.ndarray:
    rng = params.rng()
    return np.array([sample(logits, params, rng) for _ in range(n)])


def test_greedy_picks_the_largest_allowed_logit() -> None:
    logits = np.array([1.0, 5.0, -np.inf, 3.0], dtype=np.float32)
    assert sample(logits, SamplingParams(), np.random.default_rng(0)) == 1
    logits[1] = -np.inf
    assert sample(logits, SamplingParams(), np.random.default_rng(0)) == 3


def test_masked_tokens_are_never_sampled() -> None:
    logits = np.zeros(50, dtype=np.float32)
    logits[::2] = -np.inf
    picked = draws(logits, SamplingParams(temperature=2.0, seed=1), 300)
    assert (picked % 2 == 1).all()


def test_top_k_one_and_tiny_top_p_are_greedy() -> None:
    logits = np.random.default_rng(3).standard_normal(100).astype(np.float32)
    best = int(np.argmax(logits))
    assert set(draws(logits, SamplingParams(temperature=1.0, top_k=1, seed=0), 50)) == {best}
    assert set(draws(logits, SamplingParams(temperature=1.0, top_p=1e-6, seed=0), 50)) == {best}


def test_top_k_keeps_only_the_k_best() -> None:
    logits = np.arange(10, dtype=np.float32)
    picked = draws(logits, SamplingParams(temperature=5.0, top_k=3, seed=2), 300)
    assert set(picked) == {7, 8, 9}


def test_top_p_keeps_the_smallest_prefix_reaching_p() -> None:
    # probabilities 0.5, 0.25, 0.125, 0.125: top_p=0.7 keeps the first two.
    logits = np.log(np.array([0.5, 0.25, 0.125, 0.125]))
    picked = draws(logits, SamplingParams(temperature=1.0, top_p=0.7, seed=4), 400)
    assert set(picked) == {0, 1}


def test_frequencies_follow_the_softmax() -> None:
    logits = np.log(np.array([0.6, 0.3, 0.1]))
    picked = draws(logits, SamplingParams(temperature=1.0, seed=5), 3000)
    freq = np.bincount(picked, minlength=3) / picked.size
    assert np.allclose(freq, [0.6, 0.3, 0.1], atol=0.04)


def test_same_seed_same_draws_and_other_seed_differs() -> None:
    logits = np.zeros(1000, dtype=np.float32)
    a = draws(logits, SamplingParams(temperature=1.0, seed=7), 20)
    b = draws(logits, SamplingParams(temperature=1.0, seed=7), 20)
    c = draws(logits, SamplingParams(temperature=1.0, seed=8), 20)
    assert a.tolist() == b.tolist() and a.tolist() != c.tolist()


def test_everything_masked_raises() -> None:
    with pytest.raises(NoTokenAllowed):
        sample(np.full(5, -np.inf), SamplingParams(), np.random.default_rng(0))


@pytest.mark.parametrize(
    "kwargs", [{"temperature": -1.0}, {"top_p": 0.0}, {"top_p": 1.5}, {"top_k": -1}, {"top_k": 2.5}]
)
def test_bad_parameters_raise(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        SamplingParams(**kwargs)
