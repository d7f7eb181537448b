"""Shared test data for the vocabulary tests: paths, index.json, the text corpus, test vectors."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

SHARED = Path(os.environ.get("TOKENSIEVE_SHARED", Path(__file__).resolve().parents[4] / "shared"))
TOKENIZERS = SHARED / "tokenizers"


def require_tokenizers() -> Path:
    """The shared tokenizer folder; skips the calling test module when it is absent."""
    if not (TOKENIZERS / "index.json").is_file():
        pytest.skip(f"shared tokenizer data not found at {TOKENIZERS}", allow_module_level=True)
    return TOKENIZERS


def index_entries(fmt: str) -> list[dict[str, Any]]:
    """The entries of ``index.json`` with the given ``format``."""
    with open(require_tokenizers() / "index.json", encoding="utf-8") as handle:
        return [entry for entry in json.load(handle) if entry["format"] == fmt]


# Text every tokenizer must reproduce byte for byte. It has no literal "▁" (U+2581): SentencePiece
# vocabularies use that character for a space, so it cannot survive a round trip there.
CORPUS: tuple[str, ...] = (
    "Hello, world! The quick brown fox jumps over the lazy dog.",
    '{"name": "Ada \\"the\\" Countess", "path": "C:\\\\temp\\\\x", "tab": "\\t", '
    '"uni": "\\u00e9\\ud83e\\udd99", "n": [1, -2.5e-3, true, null]}',
    "def fib(n: int) -> int:\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
    "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }  // dot product\n",
    "日本語のテキストと中文字符，한국어 문장。",
    "emoji: 🦙🎉👍🏽👨‍👩‍👧 flags 🇫🇷 ok",
    "runs:    four spaces\n\n\nthree newlines\t\ttwo tabs\r\nCRLF   \n",
    " leading space",
    "  two leading spaces and two trailing  ",
    "\n\nleading newlines",
    "Accented: Äpfel, café, naïve, façade, Ærø, ö ü ß ø ú ù û ý ÿ À Á õ þ ÷",
    "العربية: مرحبا بالعالم، كيف حالك؟",
    "NUL\x00byte and controls \x01\x02\x1b[0m\x7f end",
    "combining z\u0337\u0322a\u0338l marks, zero\u200bwidth, nbsp\u00a0here",
    "numbers 1234567890 3.14159 -0.001 1e10 0xFF",
    "",
    " ",
)


def read_testvectors(name: str) -> list[tuple[str, list[int]]]:
    """(text, expected ids) of llama.cpp's ``testvectors/<name>.inp`` / ``.out`` files."""
    base = require_tokenizers() / name
    texts = (base.parent / (base.name + ".inp")).read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n")
    lines = (base.parent / (base.name + ".out")).read_text(encoding="utf-8").split("\n")
    # Each case (also the last) is followed by a separator / newline, so both end in "".
    assert texts[-1] == "" and lines[-1] == "", "unexpected test vector layout"
    texts, lines = texts[:-1], lines[:-1]
    assert len(texts) == len(lines) == 46
    return [(text, [int(i) for i in line.split()]) for text, line in zip(texts, lines, strict=True)]
