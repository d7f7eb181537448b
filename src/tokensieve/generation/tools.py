"""Function calling: OpenAI-style ``tools`` and ``tool_choice`` turned into a grammar, and back.

A call is written as one JSON object, name first so the model commits to a tool before
writing its arguments::

    {"name": "get_weather", "arguments": {"city": "Paris"}}

The grammar admits only calls to the offered tools, each with arguments valid under that
tool's ``parameters`` schema (built by the JSON Schema front-end, one sub-grammar per tool
with its rules renamed apart, combined at the IR level). ``tool_choice``:

- ``"required"``: exactly one call (or, with ``parallel_tool_calls``, a JSON array of one
  or more calls);
- ``"auto"``: a call as above, or a plain-text answer. Plain text may not start with ``{``,
  ``[`` or whitespace, so the two are told apart by the first character;
- a tool name, ``{"type": "function", "function": {"name": ...}}``: a call to that tool;
- ``"none"``: no constraint at all (plain text).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import ir
from ..frontends.whitespace import WhitespacePolicy, whitespace_expr
from .result import ToolCall

__all__ = ["Tool", "parse_tool_calls", "parse_tools", "tool_call_grammar", "tools_system_prompt"]


@dataclass(frozen=True)
class Tool:
    """One callable function: its name, description and JSON Schema for the arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any]


def parse_tools(tools: Sequence[Mapping[str, Any]]) -> list[Tool]:
    """Read OpenAI-style tool definitions (``{"type": "function", "function": {...}}``).

    The bare inner form ``{"name": ..., "parameters": ...}`` is accepted too. A tool without
    ``parameters`` takes an empty object.
    """
    if isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence) or not tools:
        raise ValueError("tools must be a non-empty list of tool definitions")
    parsed: list[Tool] = []
    for i, entry in enumerate(tools):
        if not isinstance(entry, Mapping):
            raise ValueError(f"tools[{i}] must be an object, got {type(entry).__name__}")
        if entry.get("type", "function") != "function":
            raise ValueError(
                f"tools[{i}]: only tools of type 'function' are supported, got {entry.get('type')!r}"
            )
        fn = entry.get("function", entry)
        if not isinstance(fn, Mapping):
            raise ValueError(f"tools[{i}].function must be an object")
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"tools[{i}] needs a non-empty string 'name'")
        params = fn.get("parameters", {"type": "object", "properties": {}})
        if not isinstance(params, Mapping):
            raise ValueError(f"tools[{i}] ({name}): 'parameters' must be a JSON Schema object")
        parsed.append(Tool(name, str(fn.get("description", "")), params))
    names = [t.name for t in parsed]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"tool names must be unique; repeated: {', '.join(duplicates)}")
    return parsed


def _selected(tools: list[Tool], tool_choice: Any) -> tuple[list[Tool], bool]:
    """The tools a call may name, and whether plain text is allowed instead."""
    if tool_choice == "auto":
        return tools, True
    if tool_choice == "required":
        return tools, False
    name = tool_choice
    if isinstance(tool_choice, Mapping):
        name = (tool_choice.get("function") or {}).get("name")
    if isinstance(name, str):
        for tool in tools:
            if tool.name == name:
                return [tool], False
        raise ValueError(f"tool_choice names {name!r}, which is not among the tools")
    raise ValueError(
        "tool_choice must be 'auto', 'required', 'none', a tool name or "
        f"{{'type': 'function', 'function': {{'name': ...}}}}, got {tool_choice!r}"
    )


def tool_call_grammar(
    tools: Sequence[Mapping[str, Any]] | list[Tool],
    tool_choice: Any = "auto",
    *,
    parallel_tool_calls: bool = False,
    whitespace: WhitespacePolicy | str | int | None = None,
    strict: bool = False,
) -> ir.Grammar:
    """The grammar of the model's answer for these tools (see the module docstring).

    ``tool_choice="none"`` has no grammar; callers skip constraining instead.
    """
    from ..frontends.json_schema import json_schema_to_grammar

    if all(isinstance(t, Tool) for t in tools):
        tool_list: list[Tool] = list(tools)  # type: ignore[arg-type]
    else:
        tool_list = parse_tools(tools)  # type: ignore[arg-type]
    chosen, text_allowed = _selected(tool_list, tool_choice)
    policy = WhitespacePolicy.coerce(whitespace)
    ws = whitespace_expr(policy)

    def tok(text: str) -> ir.Expr:
        return ir.literal(text)

    grammar = ir.Grammar(start="root")
    calls: list[ir.Expr] = []
    for i, tool in enumerate(chosen):
        sub = json_schema_to_grammar(dict(tool.parameters), whitespace=policy, strict=strict)
        arguments = _merge_renamed(grammar, sub, prefix=f"tool{i}_")
        calls.append(
            ir.seq(
                tok("{"),
                ws,
                tok('"name"'),
                ws,
                tok(":"),
                ws,
                tok(json.dumps(tool.name, ensure_ascii=False)),
                ws,
                tok(","),
                ws,
                tok('"arguments"'),
                ws,
                tok(":"),
                ws,
                arguments,
                ws,
                tok("}"),
            )
        )
    call = grammar.add("call", ir.alt(*calls))
    answer: ir.Expr = call
    if parallel_tool_calls:
        more = ir.Repeat(ir.seq(ws, tok(","), ws, call), 0, None)
        answer = ir.seq(tok("["), ws, call, more, ws, tok("]"))
    if text_allowed:
        answer = ir.alt(answer, _plain_text())
    grammar.add("root", answer)
    return grammar


def _plain_text() -> ir.Expr:
    """Any text whose first character is not ``{``, ``[`` or whitespace (see module docstring)."""
    excluded = sorted(ord(c) for c in "{[ \t\r\n")
    first: list[tuple[int, int]] = []
    lo = 0
    for cp in excluded:
        if cp > lo:
            first.append((lo, cp - 1))
        lo = cp + 1
    first.append((lo, 0x10FFFF))
    return ir.seq(ir.codepoints(first), ir.Repeat(ir.codepoints([(0, 0x10FFFF)]), 0, None))


def _merge_renamed(into: ir.Grammar, sub: ir.Grammar, *, prefix: str) -> ir.Expr:
    """Copy ``sub``'s rules into ``into`` under ``prefix``; return a reference to its start rule."""
    names = {name: prefix + name for name in sub.rules}
    clash = sorted(set(names.values()) & set(into.rules))
    if clash:
        raise ValueError(f"rule names already used: {', '.join(clash)}")
    for name, body in sub.rules.items():
        into.add(names[name], _rename(body, names))
    return ir.Ref(names[sub.start])


def _rename(expr: ir.Expr, names: Mapping[str, str]) -> ir.Expr:
    if isinstance(expr, ir.Ref):
        return ir.Ref(names[expr.name])
    if isinstance(expr, ir.Seq):
        return ir.Seq(tuple(_rename(e, names) for e in expr.items))
    if isinstance(expr, ir.Alt):
        return ir.Alt(tuple(_rename(e, names) for e in expr.items))
    if isinstance(expr, ir.Repeat):
        return ir.Repeat(_rename(expr.item, names), expr.min, expr.max)
    if isinstance(expr, ir.Difference):
        return ir.Difference(_rename(expr.left, names), _rename(expr.right, names))
    if isinstance(expr, ir.Unordered):
        rest = None if expr.repeatable is None else _rename(expr.repeatable, names)
        return ir.Unordered(
            tuple(_rename(e, names) for e in expr.items),
            _rename(expr.separator, names),
            expr.required,
            rest,
            expr.min_count,
            expr.max_count,
        )
    return expr  # Bytes, Special, Automaton, Seam, CountedAutomaton (front-end units): no rule names


def parse_tool_calls(text: str, tools: Sequence[Tool]) -> list[ToolCall] | None:
    """The calls in a generated answer, or ``None`` when the answer is plain text.

    Raises ``ValueError`` when the text looks like a call but is not one (a truncated output).
    """
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return None
    value = json.loads(stripped)
    items = value if isinstance(value, list) else [value]
    known = {t.name for t in tools}
    calls = []
    for item in items:
        if not isinstance(item, dict) or set(item) != {"name", "arguments"}:
            raise ValueError(f"not a tool call: {item!r}")
        if item["name"] not in known:
            raise ValueError(f"call to unknown tool {item['name']!r}")
        calls.append(ToolCall(item["name"], item["arguments"]))
    return calls


def tools_system_prompt(tools: Sequence[Tool], tool_choice: Any, parallel_tool_calls: bool) -> str:
    """Instructions for models whose chat template does not render tools itself."""
    listing = "\n".join(
        json.dumps(
            {"name": t.name, "description": t.description, "parameters": t.parameters}, ensure_ascii=False
        )
        for t in tools
    )
    shape = '{"name": <tool name>, "arguments": <arguments object>}'
    if parallel_tool_calls:
        shape = f"a JSON array of calls, each {shape}"
    how = "You may answer in plain text, or call" if tool_choice == "auto" else "Answer by calling"
    return (
        f"You have access to these tools:\n{listing}\n{how} a tool by replying with {shape} and nothing else."
    )
