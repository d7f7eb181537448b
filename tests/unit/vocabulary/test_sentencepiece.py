"""The SentencePiece ``.model`` file (Mistral v0.3), against the ``sentencepiece`` library.

SentencePiece encodes the *normalized* text: its normalizer turns spaces into ``"▁"`` and adds
one "dummy prefix" ``"▁"`` in front. The token bytes therefore spell the normalized text with
``"▁"`` read as a space: ``b" " + text`` for non-empty text (``decode`` drops that space).
The model's pieces must also be byte-identical to Mistral's HF ``tokenizer.json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tokensieve.errors import TokenizerLoadError
from tokensieve.vocabulary import Vocabulary

from ._data import CORPUS, require_tokenizers

sentencepiece = pytest.importorskip("sentencepiece")

ROOT = require_tokenizers()
MODEL = ROOT / "sentencepiece/mistral-v0.3-32k.model"


@pytest.fixture(scope="module")
def processor() -> Any:
    return sentencepiece.SentencePieceProcessor(model_file=str(MODEL))


@pytest.fixture(scope="module")
def vocab() -> Vocabulary:
    return Vocabulary.from_sentencepiece(MODEL)


def test_corpus_round_trips_to_the_normalized_text(processor: Any, vocab: Vocabulary) -> None:
    for text in CORPUS:
        ids = processor.encode(text)
        normalized = processor.normalize(text).replace("\u2581", " ").encode("utf-8")
        assert normalized == (b" " + text.encode("utf-8") if text else b""), repr(text)
        assert b"".join(vocab.token_bytes(i) for i in ids) == normalized, repr(text)


def test_model_and_tokenizer_json_give_the_same_vocabulary(vocab: Vocabulary) -> None:
    from_json = Vocabulary.from_tokenizer_json(ROOT / "hf/mistral-v0.3-32k.tokenizer.json")
    assert vocab == from_json
    assert vocab.size == 32768 and vocab.eos_token_ids == (2,)
    assert vocab.fingerprint == from_json.fingerprint


def test_piece_kinds_map_to_flags(processor: Any, vocab: Vocabulary) -> None:
    special_kinds = (processor.is_control, processor.is_unknown, processor.is_unused)
    for token_id in range(vocab.size):
        assert vocab.is_special(token_id) == any(kind(token_id) for kind in special_kinds), token_id
        if processor.is_byte(token_id):
            assert len(vocab.token_bytes(token_id)) == 1


def test_errors(tmp_path: Path) -> None:
    with pytest.raises(TokenizerLoadError, match="file not found"):
        Vocabulary.from_sentencepiece(tmp_path / "absent.model")
    with pytest.raises(TokenizerLoadError, match="not a SentencePiece model") as caught:
        Vocabulary.from_sentencepiece(ROOT / "tiktoken/encodings.json")
    assert caught.value.path == str(ROOT / "tiktoken/encodings.json")


def test_missing_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "sentencepiece", None)
    with pytest.raises(ImportError, match="pip install sentencepiece"):
        Vocabulary.from_sentencepiece(MODEL)
