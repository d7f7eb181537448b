"""Vocabulary.from_tokenizer_json / from_huggingface on every HF tokenizer.json in shared data.

The reference is the ``tokenizers`` library: text encoded by it must come back byte for byte
when tokensieve's bytes of the ids are concatenated.

What "back" means per family:

- byte-level BPE: exactly the UTF-8 of the input;
- SentencePiece-style (``byte_fallback`` in index.json): the text the model actually sees, i.e.
  the input after the tokenizer's normalizer and pre-tokenizer, with ``"▁"`` read as a space.
  That is the input with one leading "dummy prefix" space (Llama-2/Phi-3 always prepend it;
  Mistral's Metaspace ``prepend_scheme: first`` only when the text does not start with a space).
  ``tokenizer.decode`` strips that space; the token bytes keep it, since the model emitted it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tokensieve.vocabulary import Vocabulary

from ._data import CORPUS, index_entries, read_testvectors, require_tokenizers

tokenizers = pytest.importorskip("tokenizers")

ROOT = require_tokenizers()
HF_ENTRIES = index_entries("hf-tokenizers-json")


@dataclass
class Loaded:
    entry: dict[str, Any]
    vocab: Vocabulary
    tokenizer: Any  # tokenizers.Tokenizer
    data: dict[str, Any]  # the parsed JSON

    @property
    def sentencepiece(self) -> bool:
        return bool(self.entry["byte_fallback"])


@pytest.fixture(scope="module", params=HF_ENTRIES, ids=lambda entry: Path(entry["file"]).name)
def loaded(request: pytest.FixtureRequest) -> Loaded:
    path = ROOT / request.param["file"]
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    vocab = Vocabulary.from_tokenizer_json(path)
    return Loaded(request.param, vocab, tokenizers.Tokenizer.from_file(str(path)), data)


def model_view(tokenizer: Any, text: str) -> str:
    """The input as the SentencePiece model sees it: normalized and pre-tokenized, joined."""
    normalized = tokenizer.normalizer.normalize_str(text) if tokenizer.normalizer else text
    if tokenizer.pre_tokenizer is not None:
        normalized = "".join(piece for piece, _ in tokenizer.pre_tokenizer.pre_tokenize_str(normalized))
    return normalized


def check_round_trip(loaded: Loaded, text: str) -> list[int]:
    """Encode ``text`` with the reference tokenizer; assert the token bytes give it back."""
    ids: list[int] = loaded.tokenizer.encode(text, add_special_tokens=False).ids
    got = b"".join(loaded.vocab.token_bytes(i) for i in ids)
    if loaded.sentencepiece:
        expected = model_view(loaded.tokenizer, text).replace("\u2581", " ").encode("utf-8")
        # The only difference the model view may make is the dummy-prefix space.
        assert expected in (text.encode("utf-8"), b" " + text.encode("utf-8")), repr(text)
    else:
        expected = text.encode("utf-8")
    assert got == expected, f"{text!r}: ids {ids}"
    return ids


def test_corpus_and_testvectors_round_trip(loaded: Loaded) -> None:
    for text in CORPUS:
        check_round_trip(loaded, text)
    # The 46 llama.cpp cases where index.json names them. The encoder must also give their ids,
    # which shows the reference encoder is the one llama.cpp's vectors were made with.
    cases = read_testvectors(loaded.entry["testvectors"]) if loaded.entry["testvectors"] else []
    for text, expected_ids in cases:
        assert check_round_trip(loaded, text) == expected_ids, repr(text)


def test_every_vocab_token_matches_the_reference_decoder(loaded: Loaded) -> None:
    added = {token["id"] for token in loaded.data["added_tokens"]}
    ids = [i for i in range(loaded.vocab.size) if i not in added]
    decoded = loaded.tokenizer.decode_batch([[i] for i in ids], skip_special_tokens=False)
    for token_id, text in zip(ids, decoded, strict=True):
        ours = loaded.vocab.token_bytes(token_id)
        if loaded.sentencepiece and ours.startswith(b" "):
            ours = ours[1:]  # the decoder's Strip step drops the first space of the output
        # Lone bytes of a multi-byte character decode to U+FFFD in both.
        assert ours.decode("utf-8", errors="replace") == text, token_id


def test_size_and_eos_match_the_index(loaded: Loaded) -> None:
    assert loaded.vocab.size == loaded.entry["vocab_size"] == len(loaded.vocab.tokens)
    assert loaded.vocab.eos_token_ids == tuple(loaded.entry["eos_ids"])
    for token_id, name in zip(loaded.entry["eos_ids"], loaded.entry["eos_tokens"], strict=True):
        assert loaded.vocab.token_bytes(token_id) == name.encode("utf-8")
        assert loaded.vocab.token_id(name) == token_id


def test_special_tokens_are_flagged(loaded: Loaded) -> None:
    vocab = loaded.vocab
    special = vocab.special_token_ids
    assert set(vocab.eos_token_ids) <= special
    if loaded.entry["bos_id"] is not None:
        assert loaded.entry["bos_id"] in special
    for token in loaded.data["added_tokens"]:
        token_id = token["id"]
        assert vocab.token_bytes(token_id) == token["content"].encode("utf-8")
        is_padding = token["content"] == f"[PAD{token_id}]"
        expected = token["special"] or is_padding or token_id in vocab.eos_token_ids
        assert (token_id in special) == expected, token["content"]
    ordinary = [i for i in range(vocab.size) if i not in special]
    assert all(vocab.token_bytes(i) for i in ordinary), "an ordinary token has no bytes"


def test_byte_fallback_tokens_are_single_bytes_and_not_special(loaded: Loaded) -> None:
    vocab_entries = loaded.data["model"]["vocab"]
    byte_ids = [vocab_entries[f"<0x{b:02X}>"] for b in range(256) if f"<0x{b:02X}>" in vocab_entries]
    if not loaded.sentencepiece:
        assert not byte_ids
        return
    assert len(byte_ids) == 256
    assert [loaded.vocab.token_bytes(i) for i in byte_ids] == [bytes([b]) for b in range(256)]
    assert not set(byte_ids) & loaded.vocab.special_token_ids


def test_from_huggingface_tokenizer_object_equals_file(loaded: Loaded) -> None:
    from_object = Vocabulary.from_huggingface(loaded.tokenizer)
    assert from_object == loaded.vocab
    assert from_object.fingerprint == loaded.vocab.fingerprint


def test_fingerprints_are_stable_and_distinct_across_families() -> None:
    fingerprints = {}
    for entry in HF_ENTRIES:
        first = Vocabulary.from_tokenizer_json(ROOT / entry["file"])
        second = Vocabulary.from_tokenizer_json(str(ROOT / entry["file"]))
        assert first.fingerprint == second.fingerprint
        assert len(first.fingerprint) == 64 and int(first.fingerprint, 16) >= 0
        fingerprints[entry["file"]] = first.fingerprint
    assert len(set(fingerprints.values())) == len(HF_ENTRIES), fingerprints


def test_qwen_tool_call_tokens_are_ordinary_text() -> None:
    vocab = Vocabulary.from_tokenizer_json(ROOT / "hf/qwen2.5-151k.tokenizer.json")
    tool_call = vocab.token_id("<tool_call>")
    assert tool_call is not None and tool_call not in vocab.special_token_ids
    assert vocab.token_id("<|im_start|>") in vocab.special_token_ids
    # Padding placeholders up to the logit width are special.
    assert vocab.token_bytes(151935) == b"[PAD151935]" and vocab.is_special(151935)


def test_deepseek_added_letters_are_the_text_the_encoder_matched() -> None:
    # DeepSeek registers "ö", "ü", ... as added tokens; the encoder emits them for that text.
    path = ROOT / "hf/deepseek-llm-102k.tokenizer.json"
    vocab = Vocabulary.from_tokenizer_json(path)
    ids = tokenizers.Tokenizer.from_file(str(path)).encode("über", add_special_tokens=False).ids
    assert ids[0] >= 100000 and ids[0] not in vocab.special_token_ids
    assert vocab.token_bytes(ids[0]) == "ü".encode()
    # The BPE vocabulary spells the same bytes too; a lookup by bytes gives the lowest id.
    assert vocab.token_id("ü") < 100000 and vocab.token_bytes(vocab.token_id("ü")) == "ü".encode()


def test_transformers_fast_tokenizer_adds_its_eos() -> None:
    transformers = pytest.importorskip("transformers")
    path = ROOT / "hf/smollm2-49k.tokenizer.json"
    from_file = Vocabulary.from_tokenizer_json(path)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path), eos_token="<|endoftext|>")
    from_object = Vocabulary.from_huggingface(fast)
    assert from_object.tokens == from_file.tokens
    # The tokenizer's own EOS (the base model's <|endoftext|>, id 0) joins the detected <|im_end|>.
    assert from_object.eos_token_ids == (0, 2)
    assert from_object.special_token_ids == from_file.special_token_ids


def test_family_comes_from_the_sections_not_the_file_name(tmp_path: Path) -> None:
    misleading = tmp_path / "llama2-sentencepiece.model.json"
    misleading.write_bytes((ROOT / "hf/gpt2-50k.tokenizer.json").read_bytes())
    vocab = Vocabulary.from_tokenizer_json(misleading)
    assert vocab == Vocabulary.from_tokenizer_json(ROOT / "hf/gpt2-50k.tokenizer.json")
    assert vocab.name == misleading.name


def test_eos_override_replaces_detection() -> None:
    path = ROOT / "hf/phi3-32k.tokenizer.json"
    detected = Vocabulary.from_tokenizer_json(path)
    vocab = Vocabulary.from_tokenizer_json(path, eos_token_ids=[32007, 2])
    assert vocab.eos_token_ids == (2, 32007)
    assert vocab.tokens == detected.tokens
    assert vocab.is_special(2) and not detected.is_special(2)  # "</s>" is ordinary text in Phi-3
    assert vocab.fingerprint != detected.fingerprint
