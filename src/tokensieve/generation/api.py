"""``tokensieve.generate``: a prompt and a constraint in, output of exactly that shape out.

This module turns user-facing arguments (a schema, a regex, an EBNF grammar, choices, any
JSON, tools) into a compiled grammar for the backend's vocabulary, prompts into token ids,
runs :func:`.loop.decode`, and turns token ids back into text, values and tool calls,
validated where a schema applies.
"""

from __future__ import annotations

import json as jsonlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import Truncated
from .backends import Backend, Message, TransformersBackend
from .loop import DecodeOptions, RowOutput, decode
from .result import GenerationResult, Timings
from .sampling import SamplingParams
from .tools import Tool, parse_tool_calls, parse_tools, tool_call_grammar, tools_system_prompt

__all__ = ["generate", "resolve_backend"]

Prompt = str | Sequence[Message]


def generate(
    prompt: Prompt | Sequence[Prompt],
    *,
    schema: Any = None,
    regex: str | None = None,
    grammar: Any = None,
    choices: Sequence[str] | None = None,
    json: bool = False,
    tools: Sequence[Mapping[str, Any]] | None = None,
    tool_choice: Any = "auto",
    parallel_tool_calls: bool = False,
    model: str | os.PathLike[str] | None = None,
    backend: str | Backend = "transformers",
    chat: bool = True,
    system: str | None = None,
    max_tokens: int = 256,
    temperature: float = 0.0,
    top_p: float = 1.0,
    top_k: int = 0,
    seed: int | None = None,
    jump_forward: bool = True,
    overlap: bool = True,
    on_truncate: Literal["raise", "return"] = "raise",
    whitespace: Any = None,
    strict: bool = False,
    property_order: Literal["declared", "any"] = "declared",
) -> GenerationResult | list[GenerationResult]:
    """Generate text constrained to a language, with a local model.

    **Prompt.** A string (one user message), a list of chat messages, or a list of either
    for a batch (one result per prompt). With ``chat`` (the default) prompts go through the
    model's chat template; ``system`` sets the system message (by default, a schema or the
    tools are described there).

    **Constraint**, at most one of: ``schema`` (JSON Schema: dict, JSON text, Pydantic model),
    ``regex``, ``grammar`` (GBNF/EBNF text, or a grammar compiled for this model),
    ``choices`` (a list of strings), ``json=True`` (any JSON value), ``tools`` (OpenAI-style,
    with ``tool_choice`` and ``parallel_tool_calls``). None of them: free generation.
    ``whitespace``, ``strict`` and ``property_order`` are passed to the JSON front-ends.

    **Model.** ``model`` is a local GGUF file or checkpoint folder (``None``: the embedded
    SmolLM2-135M-Instruct); ``backend`` is ``"transformers"``, ``"llama_cpp"`` or a
    :class:`~tokensieve.generation.Backend` instance. Models load once per process.

    **Decoding.** ``temperature=0`` is greedy; otherwise ``top_p``/``top_k`` sampling,
    reproducible with ``seed``. ``jump_forward`` appends grammar-forced text without forward
    passes; ``overlap`` computes masks during the forward pass.

    **Stopping.** A row stops when the model emits EOS (allowed only where the output is
    complete), when the grammar allows nothing more, or after ``max_tokens`` completion
    tokens. If that happens before the output is complete, :class:`~tokensieve.Truncated`
    is raised (with the partial text), unless ``on_truncate="return"``, which returns a
    result whose ``stop_reason`` is ``"truncated"``.
    """
    if on_truncate not in ("raise", "return"):
        raise ValueError(f"on_truncate must be 'raise' or 'return', got {on_truncate!r}")
    prompts, batched = _split_batch(prompt)
    engine = resolve_backend(model, backend)
    constraint = _build_constraint(
        engine,
        schema=schema,
        regex=regex,
        grammar=grammar,
        choices=choices,
        json_any=json,
        tools=tools,
        tool_choice=tool_choice,
        parallel_tool_calls=parallel_tool_calls,
        whitespace=whitespace,
        strict=strict,
        property_order=property_order,
    )
    prompt_ids = [_prompt_ids(engine, p, chat=chat, system=system, constraint=constraint) for p in prompts]
    options = DecodeOptions(
        max_tokens=max_tokens,
        sampling=SamplingParams(temperature=temperature, top_p=top_p, top_k=top_k, seed=seed),
        jump_forward=jump_forward,
        overlap=overlap,
    )
    matchers = [constraint.matcher() for _ in prompts]
    outputs, timings = decode(engine, prompt_ids, matchers, options)
    results = [
        _result(engine, out, len(ids), timings, constraint)
        for out, ids in zip(outputs, prompt_ids, strict=True)
    ]
    if on_truncate == "raise":
        for res in results:
            if res.stop_reason == "truncated":
                raise Truncated(
                    f"max_tokens={max_tokens} reached before the output was complete "
                    "(raise max_tokens, or pass on_truncate='return' to get the partial result)",
                    text=res.text,
                    tokens=res.token_ids,
                )
    return results if batched else results[0]


def resolve_backend(
    model: str | os.PathLike[str] | None = None, backend: str | Backend = "transformers"
) -> Backend:
    """The backend to run: ``backend`` itself if it is one, else a cached one loading ``model``."""
    if isinstance(backend, Backend):
        if model is not None:
            raise ValueError("pass either a Backend instance or a model path, not both")
        return backend
    if backend == "transformers":
        return TransformersBackend.from_pretrained(None if model is None else os.fspath(model))
    if backend in ("llama_cpp", "llama.cpp", "llamacpp"):
        from ..integrations.llama_cpp import load_backend

        return load_backend(None if model is None else os.fspath(model))
    raise ValueError(f"backend must be 'transformers', 'llama_cpp' or a Backend instance, got {backend!r}")


# ----------------------------------------------------------------------------- prompts


def _split_batch(prompt: Any) -> tuple[list[Prompt], bool]:
    """``(prompts, batched)``: a string or a message list is one prompt; a list of those, a batch."""
    if isinstance(prompt, str):
        return [prompt], False
    if not isinstance(prompt, Sequence) or not prompt:
        raise ValueError("prompt must be a string, a list of chat messages, or a non-empty list of those")
    if all(isinstance(p, Mapping) for p in prompt):
        return [prompt], False
    if all(
        isinstance(p, str) or (isinstance(p, Sequence) and p and all(isinstance(m, Mapping) for m in p))
        for p in prompt
    ):
        return list(prompt), True
    raise ValueError("a batch must be a list of strings or of chat message lists")


def _prompt_ids(
    backend: Backend, prompt: Prompt, *, chat: bool, system: str | None, constraint: _Constraint
) -> list[int]:
    if not chat:
        return backend.prompt_tokens(prompt, chat=False)
    messages: list[Message] = (
        [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)
    )
    has_system = any(m.get("role") == "system" for m in messages)
    instructions = system if system is not None else constraint.instructions(backend)
    if instructions and not has_system:
        messages = [{"role": "system", "content": instructions}, *messages]
    tools = constraint.tool_definitions if constraint.tools else None
    return backend.prompt_tokens(messages, chat=True, tools=tools)


# ----------------------------------------------------------------------------- constraints


@dataclass
class _Constraint:
    """What the output must look like, compiled, plus what is needed to read it back."""

    compiled: Any = None  # a CompiledGrammar, or None for free text
    json_output: bool = False
    schema: Any = None
    tools: list[Tool] | None = None
    tool_definitions: Sequence[Mapping[str, Any]] = ()
    tool_choice: Any = "auto"
    parallel_tool_calls: bool = False

    def matcher(self) -> Any:
        if self.compiled is None:
            return None
        import tokensieve

        return tokensieve.Matcher(self.compiled)

    def instructions(self, backend: Backend) -> str | None:
        """The default system message for this constraint."""
        if self.tools:
            if backend.supports_tools_in_template:
                return None
            return tools_system_prompt(self.tools, self.tool_choice, self.parallel_tool_calls)
        if self.schema is not None:
            described = _schema_text(self.schema)
            return (
                f"Reply with only a JSON value that conforms to this JSON Schema:\n{described}"
                if described
                else "Reply with only a JSON value."
            )
        if self.json_output:
            return "Reply with only a JSON value."
        return None


def _build_constraint(
    backend: Backend,
    *,
    schema: Any,
    regex: str | None,
    grammar: Any,
    choices: Sequence[str] | None,
    json_any: bool,
    tools: Sequence[Mapping[str, Any]] | None,
    tool_choice: Any,
    parallel_tool_calls: bool,
    whitespace: Any,
    strict: bool,
    property_order: Literal["declared", "any"],
) -> _Constraint:
    given = {
        name: value
        for name, value in (
            ("schema", schema),
            ("regex", regex),
            ("grammar", grammar),
            ("choices", choices),
            ("tools", tools),
        )
        if value is not None
    }
    if json_any:
        given["json"] = True
    if len(given) > 1:
        raise ValueError(f"pass at most one constraint; got {', '.join(sorted(given))}")
    compiler = backend.compiler
    if schema is not None:
        compiled = compiler.json_schema(
            schema, whitespace=whitespace, strict=strict, property_order=property_order
        )
        return _Constraint(compiled, json_output=True, schema=schema)
    if regex is not None:
        return _Constraint(compiler.regex(regex))
    if grammar is not None:
        if isinstance(grammar, str):
            return _Constraint(compiler.ebnf(grammar))
        vocab = getattr(grammar, "vocab", None)
        if vocab is not None and vocab != backend.vocabulary:
            from ..errors import VocabularyMismatch

            raise VocabularyMismatch(
                "the compiled grammar was built for another vocabulary than this model's"
            )
        return _Constraint(grammar)
    if choices is not None:
        return _Constraint(compiler.choice(list(choices)))
    if json_any:
        return _Constraint(compiler.json(whitespace=whitespace), json_output=True)
    if tools is not None:
        parsed = parse_tools(tools)
        if tool_choice == "none":
            return _Constraint(tools=None)
        ir_grammar = tool_call_grammar(
            parsed, tool_choice, parallel_tool_calls=parallel_tool_calls, whitespace=whitespace, strict=strict
        )
        return _Constraint(
            compiler.grammar(ir_grammar),
            tools=parsed,
            tool_definitions=list(tools),
            tool_choice=tool_choice,
            parallel_tool_calls=parallel_tool_calls,
        )
    return _Constraint()


def _schema_text(schema: Any) -> str | None:
    if isinstance(schema, str):
        return schema
    if isinstance(schema, (Mapping, bool)):
        return jsonlib.dumps(schema, ensure_ascii=False)
    to_schema = getattr(schema, "model_json_schema", None)  # Pydantic models
    if callable(to_schema):
        return jsonlib.dumps(to_schema(), ensure_ascii=False)
    return None


# ----------------------------------------------------------------------------- results


def _result(
    backend: Backend, out: RowOutput, prompt_tokens: int, timings: Timings, c: _Constraint
) -> GenerationResult:
    table = backend.token_bytes
    text = b"".join(table[t] for t in out.tokens).decode("utf-8", errors="replace")
    result = GenerationResult(
        text=text,
        token_ids=list(out.tokens),
        stop_reason=out.stop_reason or "truncated",
        prompt_tokens=prompt_tokens,
        timings=timings,
        jump_forward_tokens=out.jump_forward_tokens,
    )
    if result.stop_reason == "truncated":
        return result
    if c.json_output:
        try:
            result.value = jsonlib.loads(text)
        except ValueError as err:
            result.validation_errors.append(f"output is not valid JSON: {err}")
            return result
        if c.schema is not None:
            import tokensieve

            result.validation_errors.extend(tokensieve.validate(c.schema, result.value))
    elif c.tools:
        try:
            calls = parse_tool_calls(text, c.tools)
        except ValueError as err:
            result.validation_errors.append(f"malformed tool call: {err}")
            return result
        if calls is not None:
            import tokensieve

            result.tool_calls = calls
            result.value = [{"name": call.name, "arguments": call.arguments} for call in calls]
            by_name = {t.name: t for t in c.tools}
            for call in calls:
                for message in tokensieve.validate(dict(by_name[call.name].parameters), call.arguments):
                    result.validation_errors.append(f"{call.name}: {message}")
    return result
