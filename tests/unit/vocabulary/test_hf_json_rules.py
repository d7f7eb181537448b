"""tokenizer.json rules and errors on small hand-written files (no shared data needed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tokensieve.errors import TokenizerLoadError
from tokensieve.vocabulary import Vocabulary
from tokensieve.vocabulary.byte_level import encode_byte_level

Added = list[dict[str, Any]]


def byte_level_tokenizer(vocab: dict[str, int], added: Added | None = None) -> dict[str, Any]:
    """A minimal GPT-2-style tokenizer.json."""
    return {
        "version": "1.0",
        "added_tokens": added or [],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
        "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "vocab": vocab, "merges": []},
    }


def sentencepiece_tokenizer(vocab: dict[str, int], added: Added | None = None) -> dict[str, Any]:
    """A minimal Llama-2-style tokenizer.json (Metaspace, byte fallback)."""
    return {
        "added_tokens": added or [],
        "normalizer": None,
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first"},
        "decoder": {
            "type": "Sequence",
            "decoders": [
                {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
                {"type": "ByteFallback"},
                {"type": "Fuse"},
            ],
        },
        "model": {"type": "BPE", "vocab": vocab, "merges": [], "byte_fallback": True},
    }


def added(token_id: int, content: str, *, special: bool = True, normalized: bool = False) -> dict[str, Any]:
    return {"id": token_id, "content": content, "special": special, "normalized": normalized}


def write(tmp_path: Path, data: Any, name: str = "tokenizer.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_byte_level_entries_become_their_bytes(tmp_path: Path) -> None:
    vocab = {encode_byte_level(text): i for i, text in enumerate([b"hi", b" \x00\n", "é".encode()])}
    data = byte_level_tokenizer(vocab, [added(3, "<|endoftext|>")])
    loaded = Vocabulary.from_tokenizer_json(write(tmp_path, data))
    assert loaded.tokens == (b"hi", b" \x00\n", "é".encode(), b"<|endoftext|>")
    assert loaded.eos_token_ids == (3,) and loaded.special_token_ids == {3}


def test_sentencepiece_entries_spaces_bytes_and_added_tokens(tmp_path: Path) -> None:
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "<0x0A>": 3, "<0xE2>": 4, "\u2581hello": 5, "\u2581\u2581": 6}
    data = sentencepiece_tokenizer(
        vocab,
        [
            added(0, "<unk>"),
            added(1, "<s>"),
            added(2, "</s>"),
            added(7, "\u2581tool", special=False, normalized=True),
        ],
    )
    data["model"]["unk_token"] = "<unk>"
    loaded = Vocabulary.from_tokenizer_json(write(tmp_path, data))
    assert loaded.tokens == (b"<unk>", b"<s>", b"</s>", b"\n", b"\xe2", b" hello", b"  ", b" tool")
    assert loaded.special_token_ids == {0, 1, 2}
    assert loaded.eos_token_ids == (2,)


def test_end_of_turn_marker_without_special_flag_is_eos(tmp_path: Path) -> None:
    # DeepSeek-Coder's converted file registers <|EOT|> as an ordinary added token.
    tokens = [added(1, "<|EOT|>", special=False), added(2, "</s>", special=False)]
    data = byte_level_tokenizer({"a": 0}, tokens)
    loaded = Vocabulary.from_tokenizer_json(write(tmp_path, data))
    # "</s>" is an end-of-text name, which counts only when flagged special (Phi-3 keeps it as text).
    assert loaded.eos_token_ids == (1,)
    assert loaded.special_token_ids == {1}


def test_end_of_text_at_id_0_yields_to_an_end_of_turn_marker(tmp_path: Path) -> None:
    # StarCoder-lineage chat vocabularies (SmolLM2-Instruct) stop on <|im_end|> only.
    chatml = [added(0, "<|endoftext|>"), added(1, "<|im_start|>"), added(2, "<|im_end|>")]
    data = byte_level_tokenizer({"a": 3}, chatml)
    assert Vocabulary.from_tokenizer_json(write(tmp_path, data)).eos_token_ids == (2,)
    data = byte_level_tokenizer({"a": 0}, [added(1, "<|endoftext|>"), added(2, "<|im_end|>")])
    assert Vocabulary.from_tokenizer_json(write(tmp_path, data)).eos_token_ids == (1, 2)


def test_ids_missing_from_the_file_become_special_placeholders(tmp_path: Path) -> None:
    data = byte_level_tokenizer({"a": 0}, [added(3, "<|endoftext|>")])
    loaded = Vocabulary.from_tokenizer_json(write(tmp_path, data))
    assert loaded.size == 4
    assert loaded.token_bytes(1) == b"<|tokensieve_gap_1|>" and loaded.special_token_ids == {1, 2, 3}


def test_missing_eos_is_an_error_unless_given(tmp_path: Path) -> None:
    path = write(tmp_path, byte_level_tokenizer({"a": 0, "b": 1}))
    with pytest.raises(TokenizerLoadError, match="no EOS token found") as caught:
        Vocabulary.from_tokenizer_json(path)
    assert caught.value.path == str(path)
    assert Vocabulary.from_tokenizer_json(path, eos_token_ids=[1]).eos_token_ids == (1,)
    with pytest.raises(TokenizerLoadError, match="outside the vocabulary"):
        Vocabulary.from_tokenizer_json(path, eos_token_ids=[2])
    with pytest.raises(TokenizerLoadError, match="empty"):
        Vocabulary.from_tokenizer_json(path, eos_token_ids=[])


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TokenizerLoadError, match="file not found") as caught:
        Vocabulary.from_tokenizer_json(tmp_path / "absent.json")
    assert caught.value.path == str(tmp_path / "absent.json")


def test_truncated_file(tmp_path: Path) -> None:
    text = json.dumps(byte_level_tokenizer({"a": 0}, [added(1, "</s>")]))
    path = tmp_path / "truncated.json"
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(TokenizerLoadError, match=r"invalid JSON at line 1.*truncated") as caught:
        Vocabulary.from_tokenizer_json(path)
    assert str(path) in str(caught.value)


def test_binary_file_is_not_a_tokenizer(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF\x03\x00\x00\x00\xff\xfe")
    with pytest.raises(TokenizerLoadError, match="not UTF-8"):
        Vocabulary.from_tokenizer_json(path)


@pytest.mark.parametrize(
    "data", [{"a": 1}, [1, 2], "text", {"model": []}], ids=["object", "list", "string", "model"]
)
def test_json_that_is_not_a_tokenizer(tmp_path: Path, data: Any) -> None:
    with pytest.raises(TokenizerLoadError, match="not a Hugging Face tokenizer.json"):
        Vocabulary.from_tokenizer_json(write(tmp_path, data))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"type": "Mystery"}, "unknown tokenizer model type 'Mystery'"),
        ({"type": "WordPiece"}, "'WordPiece' is not supported"),
        ({"type": "WordLevel"}, "'WordLevel' is not supported"),
        ({"end_of_word_suffix": "</w>"}, "end_of_word_suffix"),
        ({"vocab": ["a"]}, "not an object of token -> id"),
        ({"vocab": {"a": -1}}, "invalid id"),
    ],
)
def test_unsupported_or_malformed_models(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    data = byte_level_tokenizer({"a": 0}, [added(1, "</s>")])
    data["model"].update(change)
    with pytest.raises(TokenizerLoadError, match=message):
        Vocabulary.from_tokenizer_json(write(tmp_path, data))


def test_unigram_models_are_read_by_position(tmp_path: Path) -> None:
    data = sentencepiece_tokenizer({})
    pieces = [["<unk>", 0.0], ["</s>", 0.0], ["\u2581a", -1.0]]
    data["model"] = {"type": "Unigram", "vocab": pieces, "unk_id": 0}
    data["added_tokens"] = [added(1, "</s>")]
    loaded = Vocabulary.from_tokenizer_json(write(tmp_path, data))
    assert loaded.tokens == (b"<unk>", b"</s>", b" a") and loaded.special_token_ids == {0, 1}


def test_a_tokenizer_without_byte_level_or_metaspace_is_rejected(tmp_path: Path) -> None:
    data = byte_level_tokenizer({"a": 0}, [added(1, "</s>")])
    data["pre_tokenizer"] = {"type": "Whitespace"}
    data["decoder"] = None
    with pytest.raises(TokenizerLoadError, match="neither a byte-level"):
        Vocabulary.from_tokenizer_json(write(tmp_path, data))


def test_a_vocab_entry_outside_the_byte_alphabet_is_rejected(tmp_path: Path) -> None:
    data = byte_level_tokenizer({"a": 0, "日": 1}, [added(2, "</s>")])
    with pytest.raises(TokenizerLoadError, match="outside the byte-level alphabet"):
        Vocabulary.from_tokenizer_json(write(tmp_path, data))


@pytest.mark.parametrize(
    "entry", [{"id": 1}, {"id": "1", "content": "x"}, {"id": True, "content": "x"}, "x"], ids=str
)
def test_malformed_added_tokens(tmp_path: Path, entry: Any) -> None:
    data = byte_level_tokenizer({"a": 0}, [entry])
    with pytest.raises(TokenizerLoadError, match="added token"):
        Vocabulary.from_tokenizer_json(write(tmp_path, data))


def test_from_huggingface_rejects_other_objects() -> None:
    with pytest.raises(TokenizerLoadError, match="cannot read a vocabulary from a dict"):
        Vocabulary.from_huggingface({"model": {}})
