"""Prompts: chat templates, the default system message, and tools rendered by the template."""

from __future__ import annotations

import pytest

from tokensieve.generation.api import _build_constraint, _prompt_ids, _split_batch
from tokensieve.generation.backends import TransformersBackend

from ..paths import TOKENIZERS

transformers = pytest.importorskip("transformers")

TOOLS = [
    {"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}}
]
TOOL_TEMPLATE = (
    "{% if tools %}TOOLS:{% for t in tools %}{{ t.function.name }};{% endfor %}\n{% endif %}"
    "{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}<assistant>"
)


@pytest.fixture(scope="module")
def tokenizer():
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_file=str(TOKENIZERS / "hf" / "smollm2-49k.tokenizer.json")
    )
    tok.chat_template = TOOL_TEMPLATE
    return tok


def rendered(backend: TransformersBackend, ids: list[int]) -> str:
    return backend.tokenizer.decode(ids)


def test_template_that_renders_tools_gets_them(backend, tokenizer) -> None:
    tool_backend = TransformersBackend(backend.model, tokenizer, vocabulary=backend.vocabulary)
    assert tool_backend.supports_tools_in_template
    constraint = _build_constraint(
        tool_backend,
        schema=None,
        regex=None,
        grammar=None,
        choices=None,
        json_any=False,
        tools=TOOLS,
        tool_choice="required",
        parallel_tool_calls=False,
        whitespace=None,
        strict=False,
        property_order="declared",
    )
    text = rendered(
        tool_backend, _prompt_ids(tool_backend, "hi", chat=True, system=None, constraint=constraint)
    )
    assert text == "TOOLS:ping;<user>hi\n<assistant>"  # no system message: the template shows the tools


def test_template_without_tools_gets_them_in_the_system_message(backend) -> None:
    assert not backend.supports_tools_in_template  # SmolLM2's ChatML template ignores tools
    constraint = _build_constraint(
        backend,
        schema=None,
        regex=None,
        grammar=None,
        choices=None,
        json_any=False,
        tools=TOOLS,
        tool_choice="required",
        parallel_tool_calls=False,
        whitespace=None,
        strict=False,
        property_order="declared",
    )
    text = rendered(backend, _prompt_ids(backend, "hi", chat=True, system=None, constraint=constraint))
    assert text.startswith("<|im_start|>system\nYou have access to these tools:\n")
    assert '"name": "ping"' in text and text.endswith("<|im_start|>assistant\n")


def test_schema_is_described_unless_a_system_message_is_given(backend) -> None:
    schema = {"type": "integer"}
    constraint = _build_constraint(
        backend,
        schema=schema,
        regex=None,
        grammar=None,
        choices=None,
        json_any=False,
        tools=None,
        tool_choice="auto",
        parallel_tool_calls=False,
        whitespace=None,
        strict=False,
        property_order="declared",
    )
    default = rendered(backend, _prompt_ids(backend, "n?", chat=True, system=None, constraint=constraint))
    assert '{"type": "integer"}' in default
    custom = rendered(
        backend, _prompt_ids(backend, "n?", chat=True, system="Be brief.", constraint=constraint)
    )
    assert "Be brief." in custom and '"integer"' not in custom
    messages = [{"role": "system", "content": "Mine."}, {"role": "user", "content": "n?"}]
    own = rendered(backend, _prompt_ids(backend, messages, chat=True, system=None, constraint=constraint))
    assert own.count("system") == 1 and "Mine." in own
    raw = rendered(backend, _prompt_ids(backend, "1 + 1 =", chat=False, system=None, constraint=constraint))
    assert raw == "1 + 1 ="


def test_batches_are_told_apart_from_message_lists() -> None:
    chat = [{"role": "user", "content": "a"}]
    assert _split_batch("a") == (["a"], False)
    assert _split_batch(chat) == ([chat], False)
    assert _split_batch(["a", "b"]) == (["a", "b"], True)
    assert _split_batch([chat, chat]) == ([chat, chat], True)
    for bad in ([], [1, 2], ["a", chat[0]], 5):
        with pytest.raises(ValueError):
            _split_batch(bad)
