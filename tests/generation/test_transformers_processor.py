"""The LogitsProcessor inside Hugging Face ``model.generate``: batches with different grammars, beams."""

from __future__ import annotations

import json

import jsonschema
import numpy as np
import pytest

import tokensieve as ts
from tokensieve.errors import VocabularyMismatch

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

from tokensieve.integrations.transformers import TokensieveLogitsProcessor  # noqa: E402

COLOR = {
    "type": "object",
    "properties": {"color": {"enum": ["red", "green", "blue"]}},
    "required": ["color"],
    "additionalProperties": False,
}
PAIR = {
    "type": "array",
    "items": {"type": "integer", "minimum": 0, "maximum": 9},
    "minItems": 2,
    "maxItems": 2,
}


def chat_inputs(backend, prompts: list[str]) -> dict:
    tok = backend.tokenizer
    texts = [
        tok.apply_chat_template(
            [{"role": "system", "content": "Reply with JSON only."}, {"role": "user", "content": p}],
            tokenize=False,
            add_generation_prompt=True,
        )
        for p in prompts
    ]
    tok.padding_side = "left"
    return tok(texts, return_tensors="pt", padding=True, add_special_tokens=False)


def completions(backend, inputs: dict, output: torch.Tensor) -> list[str]:
    eos = set(backend.vocabulary.eos_token_ids)
    texts = []
    for row in output[:, inputs["input_ids"].shape[1] :].tolist():
        ids = [t for t in row if t not in eos]
        texts.append(b"".join(backend.vocabulary.token_bytes(t) for t in ids).decode())
    return texts


def test_batch_of_two_with_different_schemas(backend) -> None:
    grammars = [
        backend.compiler.json_schema(COLOR, whitespace="compact"),
        backend.compiler.json_schema(PAIR, whitespace="compact"),
    ]
    inputs = chat_inputs(backend, ["What color is the sky?", "Give two digits."])
    processor = TokensieveLogitsProcessor(grammars)
    output = backend.model.generate(
        **inputs,
        logits_processor=transformers.LogitsProcessorList([processor]),
        max_new_tokens=10,
        do_sample=False,
        eos_token_id=list(backend.vocabulary.eos_token_ids),
        pad_token_id=backend.tokenizer.pad_token_id or backend.vocabulary.eos_token_ids[0],
    )
    first, second = completions(backend, inputs, output)
    jsonschema.validate(json.loads(first), COLOR)
    jsonschema.validate(json.loads(second), PAIR)


def test_beam_search_forks_matchers(backend) -> None:
    grammar = backend.compiler.json_schema(COLOR, whitespace="compact")
    inputs = chat_inputs(backend, ["What color is grass?"])
    processor = TokensieveLogitsProcessor(grammar, num_beams=2)
    output = backend.model.generate(
        **inputs,
        logits_processor=transformers.LogitsProcessorList([processor]),
        max_new_tokens=10,
        num_beams=2,
        num_return_sequences=2,
        do_sample=False,
        eos_token_id=list(backend.vocabulary.eos_token_ids),
        pad_token_id=backend.vocabulary.eos_token_ids[0],
    )
    for text in completions(backend, inputs, output):
        jsonschema.validate(json.loads(text), COLOR)


def test_padded_logits_and_free_rows(backend) -> None:
    # A model whose logits are wider than the vocabulary: padding columns are masked; a
    # ``None`` grammar leaves its row untouched.
    grammar = backend.compiler.choice(["yes", "no"])
    processor = TokensieveLogitsProcessor([grammar, None])
    size = backend.vocabulary.size
    scores = torch.zeros(2, size + 64)
    out = processor(torch.zeros(2, 3, dtype=torch.long), scores)
    allowed = np.flatnonzero(torch.isfinite(out[0]).numpy())
    assert allowed.tolist() == ts.Matcher(grammar).allowed_tokens().tolist()
    assert 0 < allowed.size and allowed.max() < size
    assert torch.isfinite(out[1]).all()


def test_processor_argument_errors(backend) -> None:
    grammar = backend.compiler.choice(["yes", "no"])
    with pytest.raises(ValueError):
        TokensieveLogitsProcessor([])
    with pytest.raises(ValueError):
        TokensieveLogitsProcessor(grammar, num_beams=0)
    with pytest.raises(ValueError, match="rows"):
        TokensieveLogitsProcessor([grammar, grammar])(torch.zeros(3, 2, dtype=torch.long), torch.zeros(3, 10))
    with pytest.raises(VocabularyMismatch):
        TokensieveLogitsProcessor(grammar)(torch.zeros(1, 2, dtype=torch.long), torch.zeros(1, 10))
