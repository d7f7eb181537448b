"""Vocabulary.from_gguf on llama.cpp's vocab GGUF files, against llama.cpp's test vectors.

Each ``gguf/ggml-vocab-<name>.gguf`` comes with ``testvectors/ggml-vocab-<name>.gguf.inp``
(46 texts) and ``.out`` (the ids llama.cpp's reference tokenizer gave). The token bytes of
those ids must spell the text exactly, except that SentencePiece vocabularies (GGUF model
``"llama"``) see the text with one "dummy prefix" space in front (``"Hello"`` is encoded as
``"▁Hello"``), so there the bytes are ``b" " + text`` for non-empty text.

The HF ``tokenizer.json`` twin of each GGUF (the index.json entry whose ``testvectors`` names
it) was converted from the same GGUF, so it gives the family's vocab size and EOS ids and an
independent second reading of every token.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tokensieve.errors import TokenizerLoadError
from tokensieve.vocabulary import Vocabulary

from ._data import index_entries, read_testvectors, require_tokenizers

gguf = pytest.importorskip("gguf")

ROOT = require_tokenizers()
GGUF_FILES = [entry["file"] for entry in index_entries("gguf-vocab-only")]
TWINS = {
    Path(entry["testvectors"]).name: entry
    for entry in index_entries("hf-tokenizers-json")
    if entry["testvectors"]
}
Loaded = tuple[str, Vocabulary, dict[str, Any]]  # GGUF file name, its vocabulary, the twin's index entry


@pytest.fixture(scope="module", params=GGUF_FILES, ids=lambda file: Path(file).name)
def loaded(request: pytest.FixtureRequest) -> Loaded:
    name = Path(request.param).name
    return name, Vocabulary.from_gguf(ROOT / request.param), TWINS[name]


def test_every_gguf_file_has_a_tokenizer_json_twin() -> None:
    assert {Path(file).name for file in GGUF_FILES} <= set(TWINS)


def test_testvectors_round_trip(loaded: Loaded) -> None:
    name, vocab, twin = loaded
    sentencepiece = twin["byte_fallback"]
    for text, ids in read_testvectors(f"testvectors/{name}"):
        got = b"".join(vocab.token_bytes(i) for i in ids)
        expected = text.encode("utf-8")
        if sentencepiece and text:
            expected = b" " + expected
        assert got == expected, f"{text!r}: ids {ids}"


def test_size_and_eos_match_the_index(loaded: Loaded) -> None:
    _, vocab, twin = loaded
    assert vocab.size == twin["vocab_size"]
    # Llama-3's GGUF names only <|end_of_text|> as EOS; <|eot_id|> is found by name.
    assert vocab.eos_token_ids == tuple(twin["eos_ids"])
    if twin["bos_id"] is not None:
        assert twin["bos_id"] in vocab.special_token_ids


def test_tokens_and_flags_agree_with_the_tokenizer_json_twin(loaded: Loaded) -> None:
    _, vocab, twin = loaded
    other = Vocabulary.from_tokenizer_json(ROOT / twin["file"])
    # The twin may only differ where the GGUF has a [PAD<id>] placeholder that the HF file
    # filled in with a real added token (Qwen2.5's ids 151646-151668, see the README).
    padding = {i for i in range(vocab.size) if vocab.token_bytes(i) == b"[PAD%d]" % i}
    differing = {i for i in range(vocab.size) if vocab.token_bytes(i) != other.token_bytes(i)}
    assert differing <= padding
    assert vocab.special_token_ids ^ other.special_token_ids <= padding
    assert padding <= vocab.special_token_ids


def test_token_types_map_to_special_flags() -> None:
    # Phi-3 has every kind but "unused": unknown [PADn], control, a user-defined </s>, bytes.
    path = ROOT / "gguf/ggml-vocab-phi-3.gguf"
    vocab = Vocabulary.from_gguf(path)
    fields = gguf.GGUFReader(path).fields
    types = fields["tokenizer.ggml.token_type"].contents()
    assert {1, 2, 3, 4, 6} <= set(types)
    for token_id, kind in enumerate(types):
        assert (token_id in vocab.special_token_ids) == (kind in (2, 3) or token_id in vocab.eos_token_ids)
        if kind == 6:
            assert vocab.token_bytes(token_id) == bytes([token_id - 3])  # <0x00> is id 3
    assert vocab.token_bytes(2) == b"</s>" and not vocab.is_special(2)


# --------------------------------------------------------------------------- small written files


def write_gguf(path: Path, model: str, tokens: list[str], types: list[int] | None = None, **ids: int) -> Path:
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_tokenizer_model(model)
    writer.add_token_list(tokens)
    if types is not None:
        writer.add_token_types(types)
    for key, value in ids.items():
        writer.add_uint32(f"tokenizer.ggml.{key}", value)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    return path


def test_sentencepiece_gguf_rules(tmp_path: Path) -> None:
    tokens = ["<unk>", "<s>", "</s>", "<0x0A>", "\u2581hi", "<tool>", "<reserved>", "[PAD7]"]
    path = write_gguf(tmp_path / "spm.gguf", "llama", tokens, [2, 3, 3, 6, 1, 4, 5, 4], eos_token_id=2)
    vocab = Vocabulary.from_gguf(path)
    assert vocab.tokens == (b"<unk>", b"<s>", b"</s>", b"\n", b" hi", b"<tool>", b"<reserved>", b"[PAD7]")
    assert vocab.special_token_ids == {0, 1, 2, 6, 7}
    assert vocab.eos_token_ids == (2,)


def test_missing_token_types_mean_normal_tokens(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "bpe.gguf", "gpt2", ["a", "\u0120b", "<|endoftext|>"], eot_token_id=2)
    vocab = Vocabulary.from_gguf(path)
    assert vocab.tokens == (b"a", b" b", b"<|endoftext|>")
    assert vocab.eos_token_ids == (2,) and vocab.special_token_ids == {2}


def test_missing_eos(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "no-eos.gguf", "gpt2", ["a", "b"], [1, 1])
    with pytest.raises(TokenizerLoadError, match="no EOS token found") as caught:
        Vocabulary.from_gguf(path)
    assert caught.value.path == str(path)
    assert Vocabulary.from_gguf(path, eos_token_ids=[1]).eos_token_ids == (1,)


@pytest.mark.parametrize(
    ("model", "tokens", "types", "ids", "message"),
    [
        ("bert", ["a"], [1], {}, "unsupported tokenizer model 'bert'"),
        ("llama", ["<0xZZ>"], [6], {}, "not <0xNN>"),
        ("llama", ["a"], [9], {}, "unknown token type 9"),
        ("gpt2", ["日"], [1], {}, "outside the byte-level alphabet"),
        ("gpt2", ["a", "b"], [1], {}, "2 tokens but 1 token types"),
        ("gpt2", ["a"], [1], {"eos_token_id": 5}, "eos_token_id = 5 is not a token id"),
    ],
)
def test_malformed_vocabularies(
    tmp_path: Path, model: str, tokens: list[str], types: list[int], ids: dict[str, int], message: str
) -> None:
    path = write_gguf(tmp_path / "bad.gguf", model, tokens, types, **ids)
    with pytest.raises(TokenizerLoadError, match=message):
        Vocabulary.from_gguf(path)


def test_a_gguf_without_a_vocabulary(tmp_path: Path) -> None:
    writer = gguf.GGUFWriter(str(tmp_path / "empty.gguf"), "llama")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    with pytest.raises(TokenizerLoadError, match="no tokenizer.ggml.model"):
        Vocabulary.from_gguf(tmp_path / "empty.gguf")


def test_missing_truncated_and_foreign_files(tmp_path: Path) -> None:
    with pytest.raises(TokenizerLoadError, match="file not found"):
        Vocabulary.from_gguf(tmp_path / "absent.gguf")
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes((ROOT / "gguf/ggml-vocab-phi-3.gguf").read_bytes()[:4096])
    with pytest.raises(TokenizerLoadError, match="not a readable GGUF file") as caught:
        Vocabulary.from_gguf(truncated)
    assert caught.value.path == str(truncated)
    with pytest.raises(TokenizerLoadError, match="not a readable GGUF file"):
        Vocabulary.from_gguf(ROOT / "tiktoken/encodings.json")


def test_missing_gguf_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "gguf", None)
    with pytest.raises(ImportError, match=r"pip install tokensieve\[tokenizers\]"):
        Vocabulary.from_gguf(ROOT / "gguf/ggml-vocab-phi-3.gguf")
