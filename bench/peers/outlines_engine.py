"""outlines-core adapter: ``build_regex_from_schema`` then an ``Index`` over the vocabulary.

The whitespace pattern is ``[ ]?``, the narrowest that accepts ``json.dumps`` separators
(``", "`` and ``": "``); wider patterns make outlines' regex-to-DFA index larger and slower
to build, so this is its best fair setting. outlines-core compiles schemas to one regular
expression, so it has no any-JSON or CFG mode (``json`` and ``gbnf`` kinds raise).

The vocabulary is built from the raw bytes of every non-special token (decoded from the
``tokenizer.json`` by :func:`bench.common.byte_level_vocab`); outlines-core takes one EOS
id, ``<|eot_id|>``.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import numpy as np
import outlines_core as oc

from ..common import LLAMA3_EOS, bit_set, byte_level_vocab

WHITESPACE = r"[ ]?"
EOS = LLAMA3_EOS[-1]


class OutlinesSession:
    def __init__(self, index: Any, vocab_size: int) -> None:
        self._guide = oc.Guide(index)
        self._mask = np.zeros((1, (vocab_size + 31) // 32), dtype=np.int32)
        self._row = self._mask[0]

    def fill(self) -> None:
        self._guide.write_mask_into(self._mask.ctypes.data, self._mask.size, self._mask.itemsize)

    def allowed(self, token: int) -> bool:
        return bit_set(self._row, token)

    def eos_allowed(self) -> bool:
        return bit_set(self._row, EOS)

    def accept(self, token: int) -> bool:
        try:
            self._guide.advance(token, return_tokens=False)
        except ValueError:  # outlines raises when the token has no transition
            return False
        return True

    def error(self) -> str | None:
        return None  # outlines-core raises instead of entering an error state


class OutlinesEngine:
    name = "outlines"

    def __init__(self) -> None:
        tokens, _special = byte_level_vocab()
        self.vocab_size = len(tokens)
        by_bytes: dict[bytes, list[int]] = {}
        for token_id, data in enumerate(tokens):
            if data is not None:
                by_bytes.setdefault(data, []).append(token_id)
        self.vocabulary = oc.Vocabulary(EOS, by_bytes)

    def version(self) -> str:
        return version("outlines_core")

    def settings(self) -> str:
        return f"json_schema.build_regex_from_schema(schema, whitespace_pattern={WHITESPACE!r}); Index; Guide"

    def compile(self, kind: str, source: str) -> Any:
        if kind != "json_schema":
            raise ValueError(f"outlines-core has no {kind!r} grammars (regular expressions only)")
        regex = oc.json_schema.build_regex_from_schema(source, WHITESPACE)
        return oc.Index(regex, self.vocabulary)

    def memory_bytes(self, compiled: Any) -> int | None:
        return None  # no size report; the harness records the RSS delta instead

    def session(self, compiled: Any) -> OutlinesSession:
        return OutlinesSession(compiled, self.vocab_size)


def make_engine() -> OutlinesEngine:
    return OutlinesEngine()
