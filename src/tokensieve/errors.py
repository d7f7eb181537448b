"""The error tree. Every error tokensieve raises on purpose is a :class:`TokensieveError`::

    TokensieveError
    ├── GrammarSyntaxError        malformed EBNF/GBNF or regex       .line .column (1-based)
    ├── UnsupportedSchemaError    a JSON Schema keyword not enforced  .keyword .pointer
    │   └── UnsatisfiableSchemaError  the schema admits no value     .pointer
    ├── EmptyLanguageError        a grammar/regex that matches nothing
    ├── LimitExceeded             a resource limit was hit            .limit
    ├── TokenizerLoadError        a tokenizer file could not be read  .path
    ├── VocabularyMismatch        logits/bitmask/vocabulary sizes disagree
    ├── NoTokenAllowed            the matcher reached a state with no allowed token
    ├── MatcherStateError         the matcher was misused (e.g. accept after EOS)
    └── Truncated                 generation hit max_tokens first     .text .tokens

Locations are attributes, not only part of the message, so tools can point at them.
"""

from __future__ import annotations

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
]


class TokensieveError(Exception):
    """Root of every error tokensieve raises on purpose."""


class GrammarSyntaxError(TokensieveError, ValueError):
    """A grammar or regular expression could not be parsed.

    ``line`` and ``column`` are 1-based; ``source`` names what was parsed ("ebnf", "regex").
    """

    def __init__(self, message: str, *, line: int = 1, column: int = 1, source: str = "grammar") -> None:
        self.message = message
        self.line = line
        self.column = column
        self.source = source
        super().__init__(f"{source} error at line {line}, column {column}: {message}")


class UnsupportedSchemaError(TokensieveError, ValueError):
    """A JSON Schema keyword that tokensieve cannot enforce exactly.

    ``keyword`` is the keyword's name and ``pointer`` the JSON pointer of the schema
    object that holds it (``""`` is the root).
    """

    def __init__(self, message: str, *, keyword: str | None = None, pointer: str = "") -> None:
        self.message = message
        self.keyword = keyword
        self.pointer = pointer
        where = f" at {pointer!r}" if pointer else " at the schema root"
        kw = f"keyword {keyword!r}" if keyword else "schema"
        super().__init__(f"{kw}{where}: {message}")


class UnsatisfiableSchemaError(UnsupportedSchemaError):
    """The schema (or a required part of it) admits no JSON value at all."""


class EmptyLanguageError(TokensieveError, ValueError):
    """A grammar or regex whose language is empty: no output could ever be complete."""


class LimitExceeded(TokensieveError):
    """A resource limit was hit; ``limit`` names the field of :class:`tokensieve.Limits`."""

    def __init__(self, message: str, *, limit: str = "") -> None:
        self.limit = limit
        super().__init__(message)


class TokenizerLoadError(TokensieveError, ValueError):
    """A tokenizer file is missing, malformed or of an unknown format; ``path`` names it."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


class VocabularyMismatch(TokensieveError, ValueError):
    """Logits, bitmask or grammar were built for a different vocabulary size."""


class NoTokenAllowed(TokensieveError):
    """The matcher is in a state where no token (not even EOS) is allowed."""


class MatcherStateError(TokensieveError):
    """The matcher was used in a way its state does not permit (e.g. after termination)."""


class Truncated(TokensieveError):
    """Generation reached ``max_tokens`` before the grammar accepted the output.

    ``text`` is the partial output and ``tokens`` its token ids.
    """

    def __init__(self, message: str, *, text: str = "", tokens: list[int] | None = None) -> None:
        self.text = text
        self.tokens = list(tokens or [])
        super().__init__(message)
