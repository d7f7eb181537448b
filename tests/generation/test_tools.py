"""Function calling: tool definitions, the call grammar (checked with the reference oracle), parsing."""

from __future__ import annotations

import json

import pytest

from tokensieve.generation.result import ToolCall
from tokensieve.generation.tools import (
    Tool,
    parse_tool_calls,
    parse_tools,
    tool_call_grammar,
    tools_system_prompt,
)

from ..oracle import Oracle

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"enum": ["C", "F"]}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}
ADD = {
    "type": "function",
    "function": {
        "name": "add",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
            "additionalProperties": False,
        },
    },
}
TOOLS = [WEATHER, ADD]


def call(name: str, arguments: dict) -> bytes:
    return json.dumps({"name": name, "arguments": arguments}).encode()


def test_parse_tools_reads_openai_and_bare_forms() -> None:
    tools = parse_tools([WEATHER, {"name": "ping"}])
    assert [t.name for t in tools] == ["get_weather", "ping"]
    assert tools[0].description == "Current weather in a city"
    assert tools[1].parameters == {"type": "object", "properties": {}}


@pytest.mark.parametrize(
    "bad",
    [
        [],
        "get_weather",
        [{"type": "retrieval"}],
        [{"function": {"description": "no name"}}],
        [{"name": "x", "parameters": "nope"}],
        [WEATHER, WEATHER],
    ],
)
def test_parse_tools_rejects_bad_definitions(bad: object) -> None:
    with pytest.raises(ValueError):
        parse_tools(bad)  # type: ignore[arg-type]


def test_required_admits_exactly_valid_calls() -> None:
    oracle = Oracle(tool_call_grammar(TOOLS, "required"))
    assert oracle.is_complete(call("get_weather", {"city": "Paris"}))
    assert oracle.is_complete(call("get_weather", {"city": "Paris", "unit": "C"}))
    assert oracle.is_complete(call("add", {"a": 1, "b": -2}))
    assert oracle.is_complete(b'{"name":"add","arguments":{"a":1,"b":2}}')
    assert not oracle.is_viable_prefix(call("add", {"a": "one", "b": 2}))  # argument of the wrong type
    assert not oracle.is_viable_prefix(call("get_weather", {"town": "Paris"}))  # unknown argument
    assert not oracle.is_viable_prefix(call("remove", {}))  # unknown tool
    assert not oracle.is_complete(call("get_weather", {}))  # missing required argument
    assert not oracle.is_viable_prefix(b"Sure!")  # no free text when a call is required
    assert not oracle.is_viable_prefix(b"[")  # no list without parallel calls


def test_auto_also_admits_plain_text_but_not_text_that_looks_like_json() -> None:
    oracle = Oracle(tool_call_grammar(TOOLS, "auto"))
    assert oracle.is_complete(b"It is sunny in Paris.")
    assert oracle.is_complete(call("add", {"a": 1, "b": 2}))
    assert not oracle.is_viable_prefix(b"{not a call")
    assert not oracle.is_viable_prefix(b" leading space")


@pytest.mark.parametrize("choice", ["add", {"type": "function", "function": {"name": "add"}}])
def test_named_choice_admits_only_that_tool(choice: object) -> None:
    oracle = Oracle(tool_call_grammar(TOOLS, choice))
    assert oracle.is_complete(call("add", {"a": 1, "b": 2}))
    assert not oracle.is_viable_prefix(b'{"name": "get_weather"')


def test_unknown_named_choice_and_bad_choice_raise() -> None:
    with pytest.raises(ValueError, match="not among"):
        tool_call_grammar(TOOLS, "multiply")
    with pytest.raises(ValueError, match="tool_choice"):
        tool_call_grammar(TOOLS, 42)


def test_parallel_calls_are_a_non_empty_array() -> None:
    oracle = Oracle(tool_call_grammar(TOOLS, "required", parallel_tool_calls=True))
    both = b"[" + call("add", {"a": 1, "b": 2}) + b", " + call("get_weather", {"city": "Oslo"}) + b"]"
    assert oracle.is_complete(both)
    assert oracle.is_complete(b"[" + call("add", {"a": 1, "b": 2}) + b"]")
    assert not oracle.is_complete(b"[]")
    assert not oracle.is_viable_prefix(call("add", {"a": 1, "b": 2}))


def test_same_rule_names_in_two_tools_do_not_clash() -> None:
    # Both argument schemas use a $defs entry called "item"; renaming keeps them apart.
    def tool(name: str, item_type: str) -> dict:
        return {
            "name": name,
            "parameters": {
                "type": "object",
                "properties": {"x": {"$ref": "#/$defs/item"}},
                "required": ["x"],
                "additionalProperties": False,
                "$defs": {"item": {"type": item_type}},
            },
        }

    oracle = Oracle(tool_call_grammar([tool("f", "integer"), tool("g", "string")], "required"))
    assert oracle.is_complete(call("f", {"x": 1}))
    assert oracle.is_complete(call("g", {"x": "1"}))
    assert not oracle.is_viable_prefix(call("f", {"x": "1"}))
    assert not oracle.is_viable_prefix(call("g", {"x": 1}))


def test_parse_tool_calls() -> None:
    tools = parse_tools(TOOLS)
    assert parse_tool_calls("Just text.", tools) is None
    assert parse_tool_calls(call("add", {"a": 1, "b": 2}).decode(), tools) == [
        ToolCall("add", {"a": 1, "b": 2})
    ]
    many = "[" + call("add", {"a": 1, "b": 2}).decode() + "]"
    assert parse_tool_calls(many, tools) == [ToolCall("add", {"a": 1, "b": 2})]
    with pytest.raises(ValueError):
        parse_tool_calls('{"name": "nope", "arguments": {}}', tools)
    with pytest.raises(ValueError):
        parse_tool_calls('{"name": "add"', tools)


def test_system_prompt_lists_every_tool() -> None:
    text = tools_system_prompt([Tool("add", "Adds", {"type": "object"})], "required", False)
    assert '"name": "add"' in text and "Answer by calling" in text
