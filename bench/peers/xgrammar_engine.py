"""xgrammar adapter: ``compile_json_schema(any_whitespace=True, strict_mode=False)``.

- ``strict_mode=False``: xgrammar's default strict mode forbids properties and items the
  schema does not list, which JSON Schema allows; off is the spec-compliant setting.
- ``any_whitespace=True``: any JSON whitespace between tokens, so ``json.dumps`` separators
  (``", "`` and ``": "``) are accepted.
- ``any_order`` stays off: xgrammar's any-order mode stops checking required keys and
  duplicates, which would accept invalid instances.
- The compiler cache is off: every schema is compiled once, and an unbounded cache of
  thousands of grammars would distort the memory figures. Thread count is xgrammar's default.

The tokenizer info comes from ``transformers.PreTrainedTokenizerFast`` over the same
``tokenizer.json``, xgrammar's documented path (it marks special tokens itself).
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import xgrammar as xgr

from ..common import LLAMA3_EOS, LLAMA3_TOKENIZER, bit_set


class XgrammarSession:
    def __init__(self, compiled: Any, vocab_size: int) -> None:
        self._matcher = xgr.GrammarMatcher(compiled)
        self._mask = xgr.allocate_token_bitmask(1, vocab_size)
        self._row = self._mask[0].numpy()  # a view: reads see every fill

    def fill(self) -> None:
        self._matcher.fill_next_token_bitmask(self._mask, 0)

    def allowed(self, token: int) -> bool:
        return bit_set(self._row, token)

    def eos_allowed(self) -> bool:
        return any(bit_set(self._row, t) for t in LLAMA3_EOS)

    def accept(self, token: int) -> bool:
        return bool(self._matcher.accept_token(token))

    def error(self) -> str | None:
        return None  # xgrammar raises instead of entering an error state


class XgrammarEngine:
    name = "xgrammar"

    def __init__(self) -> None:
        from transformers import PreTrainedTokenizerFast

        hf = PreTrainedTokenizerFast(tokenizer_file=str(LLAMA3_TOKENIZER))
        self.info = xgr.TokenizerInfo.from_huggingface(hf, stop_token_ids=list(LLAMA3_EOS))
        self.compiler = xgr.GrammarCompiler(self.info, cache_enabled=False)

    def version(self) -> str:
        return version("xgrammar")

    def settings(self) -> str:
        return (
            "compile_json_schema(any_whitespace=True, strict_mode=False, any_order=False); "
            "GrammarCompiler(cache_enabled=False), default max_threads"
        )

    def compile(self, kind: str, source: str) -> Any:
        if kind == "json_schema":
            return self.compiler.compile_json_schema(source, any_whitespace=True, strict_mode=False)
        if kind == "json":
            return self.compiler.compile_builtin_json_grammar()
        if kind == "gbnf":
            return self.compiler.compile_grammar(source, root_rule_name="root")
        raise ValueError(f"unsupported grammar kind {kind!r}")

    def memory_bytes(self, compiled: Any) -> int | None:
        return int(compiled.memory_size_bytes)

    def session(self, compiled: Any) -> XgrammarSession:
        return XgrammarSession(compiled, self.info.vocab_size)


def make_engine() -> XgrammarEngine:
    return XgrammarEngine()
