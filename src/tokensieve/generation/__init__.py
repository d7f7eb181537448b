"""Constrained generation with a model: :func:`generate`, backends, and function calling.

Reading order: :mod:`.api` (``generate``: arguments -> grammar, prompt, results),
:mod:`.loop` (the decode loop and mask/forward overlap), :mod:`.forcing` (jump-forward),
:mod:`.sampling`, :mod:`.backends` (transformers, llama.cpp), :mod:`.tools` (function
calling grammars), :mod:`.result`.
"""

from .api import generate, resolve_backend
from .backends import Backend, LlamaCppBackend, Session, TransformersBackend
from .result import GenerationResult, StopReason, Timings, ToolCall
from .sampling import SamplingParams
from .tools import Tool, parse_tools, tool_call_grammar

__all__ = [
    "Backend",
    "GenerationResult",
    "LlamaCppBackend",
    "SamplingParams",
    "Session",
    "StopReason",
    "Timings",
    "Tool",
    "ToolCall",
    "TransformersBackend",
    "generate",
    "parse_tools",
    "resolve_backend",
    "tool_call_grammar",
]
