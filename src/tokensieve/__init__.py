"""tokensieve: exact token masks for structured generation with LLMs."""
from __future__ import annotations

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

__version__ = "0.1.0"

__all__ = [
    "EmptyLanguageError",
    "GrammarSyntaxError",
    "LimitExceeded",
    "MatcherStateError",
    "NoTokenAllowed",
    "TokenizerLoadError",
    "TokensieveError",
    "Truncated",
    "UnsatisfiableSchemaError",
    "UnsupportedSchemaError",
    "VocabularyMismatch",
    "__version__",
]
