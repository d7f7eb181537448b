"""Result objects and backend selection."""

from __future__ import annotations

import pytest

from tokensieve.generation import GenerationResult, Timings, resolve_backend


def test_overlap_is_the_hidden_fraction_of_mask_time() -> None:
    assert Timings(mask_s=0.0).overlap == 0.0
    assert Timings(mask_s=2.0, mask_wait_s=0.5).overlap == pytest.approx(0.75)
    assert Timings(mask_s=1.0, mask_wait_s=1.0).overlap == 0.0


def test_result_properties() -> None:
    timings = Timings(total_s=2.0)
    done = GenerationResult(
        text="{}", token_ids=[1, 2, 3, 4], stop_reason="eos", prompt_tokens=5, timings=timings
    )
    assert done.completion_tokens == 4 and done.tokens_per_s == 2.0 and done.valid
    done.validation_errors.append("bad")
    assert not done.valid
    cut = GenerationResult(
        text="{", token_ids=[1], stop_reason="truncated", prompt_tokens=5, timings=Timings()
    )
    assert not cut.valid and cut.tokens_per_s == 0.0


def test_backend_selection_errors(backend) -> None:
    assert resolve_backend(None, backend) is backend
    with pytest.raises(ValueError, match="not both"):
        resolve_backend("model.gguf", backend)
    with pytest.raises(ValueError, match="backend must be"):
        resolve_backend(None, "vllm")
    with pytest.raises(FileNotFoundError, match="never downloads"):
        resolve_backend("org/some-model", "transformers")
