"""tokensieve: exact token masks for structured generation with LLMs.

Quick tour::

    import tokensieve as ts
    vocab = ts.Vocabulary.from_tokenizer_json("tokenizer.json")
    compiler = ts.Compiler(vocab)
    grammar = compiler.json_schema({"type": "object", "properties": {"name": {"type": "string"}}})
    matcher = ts.Matcher(grammar)
    bitmask = ts.allocate_bitmask(1, vocab.size)
    matcher.fill_bitmask(bitmask, row=0)
    ts.apply_bitmask(logits, bitmask)           # numpy array or torch tensor, in place
    matcher.accept_token(next_token)

Heavy integrations (torch, transformers, llama.cpp, the server) are imported only when used.
"""

from __future__ import annotations

from typing import Any

from .bitmask import allocate_bitmask, apply_bitmask, unpack_bitmask
from .compiler import CompiledGrammar, Compiler, GrammarStats
from .errors import (
    EmptyLanguageError,
    GrammarSyntaxError,
    LimitExceeded,
    MatcherStateError,
    NoTokenAllowed,
    TokenizerLoadError,
    TokensieveError,
    Truncated,
    UnsatisfiableSchemaError,
    UnsupportedSchemaError,
    VocabularyMismatch,
)
from .frontends.whitespace import WhitespacePolicy
from .limits import Limits
from .matcher import Matcher, fill_bitmasks
from .vocabulary import Vocabulary

__version__ = "0.1.0"

__all__ = [
    "CompiledGrammar",
    "Compiler",
    "EmptyLanguageError",
    "GrammarStats",
    "GrammarSyntaxError",
    "Limits",
    "LimitExceeded",
    "Matcher",
    "MatcherStateError",
    "NoTokenAllowed",
    "TokenizerLoadError",
    "TokensieveError",
    "Truncated",
    "UnsatisfiableSchemaError",
    "UnsupportedSchemaError",
    "Vocabulary",
    "VocabularyMismatch",
    "WhitespacePolicy",
    "__version__",
    "allocate_bitmask",
    "apply_bitmask",
    "fill_bitmasks",
    "generate",
    "unpack_bitmask",
    "validate",
]


def validate(schema: Any, value: Any) -> list[str]:
    """Semantic validation of ``value`` against a JSON Schema (``jsonschema``, formats checked).

    Returns the list of error messages; empty means valid. Run it after generation for the
    checks a grammar cannot make (and for keywords relaxed at compile time).
    """
    from .frontends.json_schema import validate as _validate

    return _validate(schema, value)


def __getattr__(name: str) -> Any:
    # The generation loop pulls in the sampling code; load it on first use only.
    if name == "generate":
        from .generation import generate

        return generate
    raise AttributeError(f"module 'tokensieve' has no attribute {name!r}")
