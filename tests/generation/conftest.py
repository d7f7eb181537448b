"""Fixtures for the generation tests: the embedded SmolLM2-135M model, loaded once per session."""

from __future__ import annotations

import os

import pytest

# Never reach the Hugging Face Hub from the tests, whatever the environment says.
os.environ["HF_HUB_OFFLINE"] = "1"


@pytest.fixture(scope="session")
def backend():
    """The transformers backend over the embedded default model (skips if it is not installed)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tokensieve.models import default_model_path

    try:
        default_model_path()
    except FileNotFoundError as err:
        pytest.skip(str(err))
    from tokensieve.integrations.transformers import load_backend

    return load_backend()
