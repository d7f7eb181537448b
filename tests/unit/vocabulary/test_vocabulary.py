"""The Vocabulary class on small hand-made token tables."""

from __future__ import annotations

import numpy as np
import pytest

from tokensieve.errors import TokenizerLoadError, VocabularyMismatch
from tokensieve.vocabulary import Vocabulary
from tokensieve.vocabulary._assemble import TokenTable, detect_eos
from tokensieve.vocabulary.byte_level import BYTE_TO_CHAR, decode_byte_level, encode_byte_level

TOKENS = [b"a", b"b", b" ", b"\x00", b"<|endoftext|>", b"<|im_end|>", b"a"]


def small(**kwargs: object) -> Vocabulary:
    options: dict[str, object] = {"eos_token_ids": [5, 4, 5], "special_token_ids": [4], "name": "small"}
    options.update(kwargs)
    return Vocabulary(TOKENS, **options)  # type: ignore[arg-type]


def test_properties() -> None:
    vocab = small()
    assert vocab.size == len(vocab) == 7
    assert vocab.tokens == tuple(TOKENS)
    assert vocab.eos_token_ids == (4, 5)  # sorted, without repeats
    assert vocab.special_token_ids == frozenset({4, 5})  # EOS ids are always special
    assert vocab.name == "small"
    assert vocab.token_bytes(3) == b"\x00" and vocab.token_bytes(np.int64(1)) == b"b"
    assert vocab.is_special(5) and not vocab.is_special(0)
    assert repr(vocab) == "Vocabulary(name='small', size=7, eos_token_ids=(4, 5))"


def test_token_id_lookup() -> None:
    vocab = small()
    assert vocab.token_id("<|im_end|>") == 5
    assert vocab.token_id(b"<|endoftext|>") == 4
    assert vocab.token_id("a") == 0  # ids 0 and 6 share b"a": the lowest wins
    assert vocab.token_id(b"\x00") == 3
    assert vocab.token_id("missing") is None and vocab.token_id(b"\xff") is None
    with pytest.raises(TypeError):
        vocab.token_id(5)  # type: ignore[arg-type]


def test_a_special_name_beats_an_ordinary_token_with_the_same_text() -> None:
    vocab = Vocabulary([b"</s>", b"</s>"], eos_token_ids=[1])
    assert vocab.token_id("</s>") == 1  # str: the special-token name
    assert vocab.token_id(b"</s>") == 0  # bytes: ordinary text first


def test_extra_special_names() -> None:
    vocab = Vocabulary([b"a", b"<|x|>"], eos_token_ids=[1], special_token_names={"<|alias|>": 1})
    assert vocab.token_id("<|alias|>") == 1
    with pytest.raises(TokenizerLoadError, match="not special"):
        Vocabulary([b"a", b"<|x|>"], eos_token_ids=[1], special_token_names={"<|alias|>": 0})


def test_fingerprint_covers_tokens_flags_and_eos_but_not_the_name() -> None:
    base = small()
    assert base.fingerprint == small().fingerprint == small(name="other").fingerprint
    assert len(base.fingerprint) == 64
    variants = [
        Vocabulary([b"z", *TOKENS[1:]], eos_token_ids=[4, 5], special_token_ids=[4]),
        small(special_token_ids=[4, 0]),
        small(eos_token_ids=[5], special_token_ids=[4]),
        Vocabulary([*TOKENS, b"b"], eos_token_ids=[4, 5], special_token_ids=[4]),
    ]
    assert len({base.fingerprint, *(v.fingerprint for v in variants)}) == 5
    # Token boundaries count: ["ab", "c"] and ["a", "bc"] are different vocabularies.
    split_1 = Vocabulary([b"ab", b"c", b"</s>"], eos_token_ids=[2])
    split_2 = Vocabulary([b"a", b"bc", b"</s>"], eos_token_ids=[2])
    assert split_1.fingerprint != split_2.fingerprint


def test_equality_and_hash() -> None:
    assert small() == small(name="other") and hash(small()) == hash(small(name="other"))
    assert small() != small(special_token_ids=[4, 0])
    assert small() != "small"


def test_with_eos() -> None:
    vocab = small()
    chat = vocab.with_eos([5])
    assert chat.eos_token_ids == (5,)
    assert chat.special_token_ids == frozenset({4, 5})  # 4 was declared special, it stays so
    only_text_end = small(special_token_ids=[]).with_eos([4])
    assert only_text_end.special_token_ids == frozenset({4})  # 5 was special only as EOS
    assert vocab.eos_token_ids == (4, 5)  # the original is unchanged
    assert chat.fingerprint != vocab.fingerprint
    with pytest.raises(VocabularyMismatch):
        vocab.with_eos([7])


@pytest.mark.parametrize(
    ("tokens", "kwargs", "error", "message"),
    [
        ([], {}, TokenizerLoadError, "at least one token"),
        ([b"a", "b"], {}, TokenizerLoadError, "token 1 is str"),
        ([b"a", b""], {}, TokenizerLoadError, "token 1 has no bytes"),
        ([b"a"], {"eos_token_ids": [1]}, VocabularyMismatch, "EOS token id 1 is outside"),
        ([b"a"], {"special_token_ids": [-1]}, VocabularyMismatch, "special token id -1 is outside"),
        ([b"a"], {"eos_token_ids": [True]}, TypeError, "not bool"),
        ([b"a"], {"eos_token_ids": [0.0]}, TypeError, "not float"),
        ([b"a"], {"eos_token_ids": "0"}, TypeError, "iterable of ints"),
        (b"ab", {}, TypeError, "sequence of bytes"),
        ([b"a"], {"pretokenizer_pattern": 3}, TypeError, "pretokenizer_pattern"),
    ],
)
def test_bad_input(tokens: object, kwargs: dict[str, object], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        Vocabulary(tokens, **kwargs)  # type: ignore[arg-type]


def test_an_empty_token_is_allowed_when_special() -> None:
    assert Vocabulary([b"a", b""], special_token_ids=[1]).token_bytes(1) == b""


def test_token_bytes_out_of_range() -> None:
    with pytest.raises(VocabularyMismatch, match="token id 7 is outside the vocabulary"):
        small().token_bytes(7)


# --------------------------------------------------------------------------- EOS detection


def table(names: dict[int, str], *, special: set[int], registered: set[int] | None = None) -> TokenTable:
    pieces = {i: text.encode() for i, text in names.items()}
    registered = special if registered is None else registered
    return TokenTable(pieces=pieces, special=special, registered=registered)


def test_detect_eos_rules() -> None:
    llama3 = table({0: "a", 1: "<|end_of_text|>", 2: "<|eot_id|>"}, special={1, 2})
    assert detect_eos(llama3) == {1, 2}
    phi3 = table({0: "</s>", 1: "<|endoftext|>", 2: "<|end|>"}, special={1, 2}, registered={0, 1, 2})
    assert detect_eos(phi3) == {1, 2}  # "</s>" is ordinary text there
    bpe_text = table({0: "<|eot_id|>", 1: "</s>"}, special={1}, registered={1})
    assert detect_eos(bpe_text) == {1}  # a BPE entry spelling a marker is not a registered token
    smollm = table({0: "<|endoftext|>", 1: "<|im_end|>"}, special={0, 1})
    assert detect_eos(smollm) == {1}
    starcoder = table({0: "<|endoftext|>", 1: "<fim_prefix>"}, special={0, 1})
    assert detect_eos(starcoder) == {0}
    from_file = table({0: "a", 1: "b"}, special=set())
    from_file.file_eos.add(1)
    assert detect_eos(from_file) == {1}
    assert detect_eos(table({0: "a"}, special=set())) == set()


# --------------------------------------------------------------------------- byte-level alphabet


def test_byte_level_alphabet_is_a_bijection() -> None:
    assert len(BYTE_TO_CHAR) == 256 and len(set(BYTE_TO_CHAR.values())) == 256
    assert all(BYTE_TO_CHAR[b] == chr(b) for b in range(ord("!"), ord("~") + 1))
    assert BYTE_TO_CHAR[ord(" ")] == "\u0120" and BYTE_TO_CHAR[ord("\n")] == "\u010a"
    every_byte = bytes(range(256))
    assert decode_byte_level(encode_byte_level(every_byte)) == every_byte
    assert decode_byte_level("\u0120hello") == b" hello"
    assert decode_byte_level("日") is None
