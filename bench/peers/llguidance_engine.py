"""llguidance adapter: ``LLMatcher.grammar_from_json_schema`` with default options.

llguidance's JSON defaults are already the fair setting: flexible whitespace (any run of
JSON whitespace, so ``json.dumps`` separators pass). It offers no property-order option: listed
properties must come in schema order (its documented departure from JSON Schema), so the few
MaskBench instances with keys out of declaration order count against it. Unknown keywords
are errors (``lenient`` stays off), so it rejects what it cannot enforce, as tokensieve does.

"Compiling" builds one ``LLMatcher`` (that is where llguidance builds its lexer and parser);
each session is a ``deep_copy`` of it, the cheap way llguidance offers to start another
sequence on the same grammar.
"""

from __future__ import annotations

import json
from typing import Any

import llguidance as llg
import numpy as np

from ..common import LLAMA3_EOS, LLAMA3_TOKENIZER, bit_set


class LlguidanceSession:
    def __init__(self, matcher: Any, vocab_size: int) -> None:
        self._matcher = matcher
        self._mask = np.zeros((1, (vocab_size + 31) // 32), dtype=np.int32)
        self._row = self._mask[0]

    def fill(self) -> None:
        llg.numpy.fill_next_token_bitmask(self._matcher, self._mask, 0)

    def allowed(self, token: int) -> bool:
        return bit_set(self._row, token)

    def eos_allowed(self) -> bool:
        return any(bit_set(self._row, t) for t in LLAMA3_EOS)

    def accept(self, token: int) -> bool:
        return bool(self._matcher.consume_token(token)) and not self._matcher.is_error()

    def error(self) -> str | None:
        # llguidance never raises on grammar trouble: it enters a sticky error state instead.
        return str(self._matcher.get_error()) if self._matcher.is_error() else None


class LlguidanceEngine:
    name = "llguidance"

    def __init__(self) -> None:
        import llguidance.numpy  # noqa: F401  (submodule used by the sessions)

        tokenizer_json = LLAMA3_TOKENIZER.read_text(encoding="utf-8")
        self.tokenizer = llg.LLTokenizer(tokenizer_json, eos_token=list(LLAMA3_EOS))

    def version(self) -> str:
        return str(llg.__version__)

    def settings(self) -> str:
        return (
            "LLMatcher.grammar_from_json_schema(schema) with default options (flexible whitespace); "
            "default slices"
        )

    def compile(self, kind: str, source: str) -> Any:
        if kind == "json_schema":
            grammar = llg.LLMatcher.grammar_from_json_schema(source)
        elif kind == "json":
            grammar = llg.LLMatcher.grammar_from_json_schema(json.dumps({}))  # {} = any JSON value
        elif kind == "gbnf":
            grammar = llg.grammar_from("gbnf", source)
        else:
            raise ValueError(f"unsupported grammar kind {kind!r}")
        matcher = llg.LLMatcher(self.tokenizer, grammar, log_level=0)
        if matcher.is_error():
            raise ValueError(matcher.get_error())
        return matcher

    def memory_bytes(self, compiled: Any) -> int | None:
        return None  # llguidance reports no size; the harness records the RSS delta instead

    def session(self, compiled: Any) -> LlguidanceSession:
        return LlguidanceSession(compiled.deep_copy(), self.tokenizer.vocab_size)


def make_engine() -> LlguidanceEngine:
    return LlguidanceEngine()
