"""tokensieve adapter: JSON Schema with ``property_order="any"`` and the default whitespace policy.

``property_order="any"`` is the spec-compliant setting (objects are unordered; 2.4% of the
valid MaskBench instances list properties out of declaration order). The default whitespace
policy accepts ``json.dumps`` separators. One :class:`tokensieve.Compiler` lives for the whole
worker, as in a server: its grammar cache never hits here (every schema differs), but
terminal automata it already built are shared with later grammars.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

import tokensieve as ts

from ..common import LLAMA3_TOKENIZER, bit_set


class TokensieveSession:
    def __init__(self, grammar: Any, vocab_size: int, eos: tuple[int, ...]) -> None:
        self._matcher = ts.Matcher(grammar)
        self._mask = ts.allocate_bitmask(1, vocab_size)
        self._row = self._mask[0]
        self._eos = eos

    def fill(self) -> None:
        self._matcher.fill_bitmask(self._mask, 0)

    def allowed(self, token: int) -> bool:
        return bit_set(self._row, token)

    def eos_allowed(self) -> bool:
        return any(bit_set(self._row, t) for t in self._eos)

    def accept(self, token: int) -> bool:
        return self._matcher.accept_token(token)

    def error(self) -> str | None:
        return None  # tokensieve raises instead of entering an error state


class TokensieveEngine:
    name = "tokensieve"

    def __init__(self) -> None:
        self.vocab = ts.Vocabulary.from_tokenizer_json(str(LLAMA3_TOKENIZER))
        self.compiler = ts.Compiler(self.vocab)

    def version(self) -> str:
        try:
            return version("tokensieve")
        except PackageNotFoundError:  # the dev build runs from src/ without being installed
            return ts.__version__ + " (dev tree)"

    def settings(self) -> str:
        return 'compiler.json_schema(schema, property_order="any"), default whitespace policy; one Compiler'

    def compile(self, kind: str, source: str) -> Any:
        if kind == "json_schema":
            return self.compiler.json_schema(source, property_order="any")
        if kind == "json":
            return self.compiler.json()
        if kind == "gbnf":
            return self.compiler.ebnf(source)
        raise ValueError(f"unsupported grammar kind {kind!r}")

    def memory_bytes(self, compiled: Any) -> int | None:
        # The compile-time size, like the peers' figures (``memory_bytes`` is the live one,
        # which grows with the grammar's mask cache as masks are served).
        return int(compiled.stats.memory_bytes)

    def session(self, compiled: Any) -> TokensieveSession:
        return TokensieveSession(compiled, self.vocab.size, tuple(self.vocab.eos_token_ids))


def make_engine() -> TokensieveEngine:
    return TokensieveEngine()
