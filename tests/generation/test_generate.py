"""End to end with the embedded SmolLM2-135M on CPU: outputs have the requested shape.

Every generation is kept to a few tokens so the module stays fast on two cores.
"""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

import tokensieve as ts
from tokensieve.generation import generate

SYSTEM = "Reply with JSON only."

SCHEMAS = {
    "nested object": (
        "Extract: Bob is 30.",
        {
            "type": "object",
            "properties": {
                "person": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "maxLength": 12},
                        "age": {"type": "integer", "minimum": 0, "maximum": 120},
                    },
                    "required": ["name", "age"],
                    "additionalProperties": False,
                }
            },
            "required": ["person"],
            "additionalProperties": False,
        },
    ),
    "enum": (
        "What color is the sky?",
        {
            "type": "object",
            "properties": {"color": {"enum": ["red", "green", "blue"]}},
            "required": ["color"],
            "additionalProperties": False,
        },
    ),
    "bounded array": (
        "List two small numbers.",
        {
            "type": "array",
            "items": {"type": "integer", "minimum": 0, "maximum": 9},
            "minItems": 2,
            "maxItems": 3,
        },
    ),
    "recursive ref": (
        "List the colors red and blue.",
        {
            "$defs": {
                "item": {
                    "anyOf": [
                        {"type": "string", "maxLength": 10},
                        {"type": "array", "items": {"$ref": "#/$defs/item"}, "maxItems": 3},
                    ]
                }
            },
            "type": "array",
            "items": {"$ref": "#/$defs/item"},
            "maxItems": 3,
        },
    ),
    "formats": (
        "Server 10.0.0.1 failed on 2024-03-05. Give the day.",
        {
            "type": "object",
            "properties": {"day": {"type": "string", "format": "date"}},
            "required": ["day"],
            "additionalProperties": False,
        },
    ),
}


def check_json(result: ts.generation.GenerationResult, schema: dict) -> None:
    assert result.stop_reason in ("eos", "complete"), result
    value = json.loads(result.text)
    assert value == result.value
    jsonschema.validate(value, schema, format_checker=jsonschema.FormatChecker())
    assert result.validation_errors == [] and result.valid


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_schema_output_parses_and_validates(backend, name: str) -> None:
    prompt, schema = SCHEMAS[name]
    result = generate(
        prompt, schema=schema, backend=backend, system=SYSTEM, whitespace="compact", max_tokens=48
    )
    check_json(result, schema)


def test_default_prompt_and_whitespace_give_valid_json(backend) -> None:
    # No system override: the schema itself is described to the model; default whitespace.
    prompt, schema = SCHEMAS["enum"]
    check_json(generate(prompt, schema=schema, backend=backend, max_tokens=24), schema)


def test_regex_output_matches(backend) -> None:
    pattern = r"[0-9]{3}-[0-9]{4}"
    result = generate(
        "Bob's phone number is 555-1234. What is it?", regex=pattern, backend=backend, max_tokens=12
    )
    assert re.fullmatch(pattern, result.text) and result.stop_reason == "complete"
    assert result.value is None


def test_ebnf_output_matches(backend) -> None:
    grammar = r"""
        root   ::= answer " because " reason
        answer ::= "yes" | "no"
        reason ::= [a-z ]{1,24}
    """
    result = generate("Is water wet?", grammar=grammar, backend=backend, max_tokens=16)
    assert re.fullmatch(r"(yes|no) because [a-z ]{1,24}", result.text), result.text


def test_choices(backend) -> None:
    result = generate(
        "Is the sky blue? Answer yes or no.", choices=["yes", "no"], backend=backend, max_tokens=4
    )
    assert result.text in ("yes", "no")


def test_max_tokens_too_small_raises_truncated(backend) -> None:
    _, schema = SCHEMAS["nested object"]
    with pytest.raises(ts.Truncated) as info:
        generate("Extract: Bob is 30.", schema=schema, backend=backend, system=SYSTEM, max_tokens=3)
    assert info.value.text and len(info.value.tokens) == 3
    assert '{"person"'.startswith(info.value.text.replace(" ", "").replace("\n", "")[:9])


def test_truncated_result_on_request(backend) -> None:
    _, schema = SCHEMAS["nested object"]
    result = generate(
        "Extract: Bob is 30.",
        schema=schema,
        backend=backend,
        system=SYSTEM,
        max_tokens=3,
        on_truncate="return",
    )
    assert result.stop_reason == "truncated" and not result.valid and result.value is None
    assert result.completion_tokens == 3


def test_function_calling_picks_a_tool_with_valid_arguments(backend) -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather in a city",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string", "maxLength": 20}},
                    "required": ["city"],
                    "additionalProperties": False,
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "add",
                "description": "Add two integers",
                "parameters": {
                    "type": "object",
                    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                    "required": ["a", "b"],
                    "additionalProperties": False,
                },
            },
        },
    ]
    result = generate(
        "What is the weather in Paris?",
        tools=tools,
        tool_choice="required",
        backend=backend,
        whitespace="compact",
        max_tokens=40,
    )
    assert result.tool_calls is not None and len(result.tool_calls) == 1
    call = result.tool_calls[0]
    assert call.name == "get_weather"
    jsonschema.validate(call.arguments, tools[0]["function"]["parameters"])
    assert result.value == [{"name": call.name, "arguments": call.arguments}] and result.valid


def test_sampling_with_a_seed_is_reproducible(backend) -> None:
    def run(seed: int) -> str:
        return generate(
            "Name a fruit.",
            regex=r"[a-z]{2,10}",
            backend=backend,
            temperature=1.0,
            top_p=0.95,
            seed=seed,
            max_tokens=6,
        ).text

    first = run(11)
    assert run(11) == first
    assert re.fullmatch(r"[a-z]{2,10}", first)


def test_jump_forward_output_equals_plain_greedy_output(backend) -> None:
    prompt, schema = SCHEMAS["nested object"]
    kwargs = dict(schema=schema, backend=backend, system=SYSTEM, whitespace="compact", max_tokens=40)
    fast = generate(prompt, jump_forward=True, **kwargs)
    plain = generate(prompt, jump_forward=False, **kwargs)
    assert fast.text == plain.text
    assert fast.jump_forward_tokens > 0 and plain.jump_forward_tokens == 0
    assert fast.timings.forward_passes < plain.timings.forward_passes


def test_overlap_changes_nothing_but_timing(backend) -> None:
    prompt, schema = SCHEMAS["enum"]
    kwargs = dict(schema=schema, backend=backend, system=SYSTEM, max_tokens=16)
    on = generate(prompt, overlap=True, **kwargs)
    off = generate(prompt, overlap=False, **kwargs)
    assert on.text == off.text
    assert on.timings.mask_s > 0 and 0.0 <= on.timings.overlap <= 1.0
    assert off.timings.overlap == 0.0  # nothing hidden without the worker thread


def test_batch_rows_match_single_generation(backend) -> None:
    prompts = ["What color is grass?", "What color is the sky at night, in one word?"]
    _, schema = SCHEMAS["enum"]
    kwargs = dict(schema=schema, backend=backend, system=SYSTEM, whitespace="compact", max_tokens=16)
    batch = generate(prompts, **kwargs)
    assert isinstance(batch, list) and len(batch) == 2
    for prompt, row in zip(prompts, batch, strict=True):
        assert row.text == generate(prompt, **kwargs).text
        check_json(row, schema)


def test_unconstrained_generation_stops_at_max_tokens_without_error(backend) -> None:
    result = generate("Tell me a story.", backend=backend, max_tokens=5)
    assert result.completion_tokens <= 5 and result.stop_reason in ("eos", "max_tokens")


def test_argument_errors(backend) -> None:
    with pytest.raises(ValueError, match="at most one constraint"):
        generate("x", regex="a", choices=["a"], backend=backend)
    with pytest.raises(ValueError, match="on_truncate"):
        generate("x", backend=backend, on_truncate="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="prompt"):
        generate([], backend=backend)
    with pytest.raises(ValueError, match="max_tokens"):
        generate("x", backend=backend, max_tokens=0)
