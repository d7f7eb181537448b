"""The llama.cpp backend and logits processor (needs the optional llama-cpp-python package).

llama-cpp-python only ships as a source package that takes minutes to build, so these
tests skip where it is not installed; see ``tokensieve.integrations.llama_cpp`` for the
build flags.
"""

from __future__ import annotations

import importlib
import importlib.util
import json

import jsonschema
import pytest

COLOR = {
    "type": "object",
    "properties": {"color": {"enum": ["red", "green", "blue"]}},
    "required": ["color"],
    "additionalProperties": False,
}


def test_missing_package_gives_an_actionable_import_error() -> None:
    if importlib.util.find_spec("llama_cpp") is not None:
        pytest.skip("llama-cpp-python is installed")
    with pytest.raises(ImportError, match="pip install llama-cpp-python"):
        importlib.import_module("tokensieve.integrations.llama_cpp")


@pytest.fixture(scope="module")
def llama_backend():
    pytest.importorskip("llama_cpp")
    from tokensieve.models import default_model_path

    try:
        default_model_path()
    except FileNotFoundError as err:
        pytest.skip(str(err))
    from tokensieve.integrations.llama_cpp import load_backend

    return load_backend()


def test_generate_with_the_llama_cpp_backend(llama_backend) -> None:
    from tokensieve.generation import generate

    result = generate(
        "What color is the sky?",
        schema=COLOR,
        backend=llama_backend,
        system="Reply with JSON only.",
        max_tokens=16,
    )
    jsonschema.validate(json.loads(result.text), COLOR)
    assert result.valid


def test_logits_processor_in_create_completion(llama_backend) -> None:
    import llama_cpp

    from tokensieve.integrations.llama_cpp import LlamaCppLogitsProcessor

    grammar = llama_backend.compiler.json_schema(COLOR, whitespace="compact")
    processor = LlamaCppLogitsProcessor(grammar)
    prompt = llama_backend.llama.detokenize(
        llama_backend.prompt_tokens("What color is grass?", chat=True), special=True
    ).decode()
    out = llama_backend.llama.create_completion(
        prompt, max_tokens=16, temperature=0.0, logits_processor=llama_cpp.LogitsProcessorList([processor])
    )
    jsonschema.validate(json.loads(out["choices"][0]["text"]), COLOR)


def test_one_sequence_at_a_time(llama_backend) -> None:
    with pytest.raises(ValueError, match="one sequence"):
        llama_backend.start(2)
