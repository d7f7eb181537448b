"""Vocabulary.from_tiktoken on every encoding in ``tiktoken/encodings.json``, against tiktoken."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tokensieve.errors import TokenizerLoadError
from tokensieve.vocabulary import Vocabulary

from ._data import CORPUS, require_tokenizers

tiktoken = pytest.importorskip("tiktoken")
from tiktoken.load import load_tiktoken_bpe  # noqa: E402 - after the importorskip above

ROOT = require_tokenizers() / "tiktoken"
SPECS: dict[str, dict[str, Any]] = json.loads((ROOT / "encodings.json").read_text(encoding="utf-8"))

# From the README's BOS/EOS table; qwen3_5 follows the Qwen family (<|endoftext|>, <|im_end|>).
EXPECTED_EOS = {
    "cl100k_base": ["<|endoftext|>"],
    "o200k_base": ["<|endoftext|>"],
    "o200k_harmony": ["<|endoftext|>", "<|return|>", "<|call|>", "<|end|>"],
    "qwen3_5": ["<|endoftext|>", "<|im_end|>"],
}


def reference_encoding(name: str) -> Any:
    spec = SPECS[name]
    # An empty TIKTOKEN_CACHE_DIR makes tiktoken read the local file without caching a copy.
    previous = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = ""
    try:
        ranks = load_tiktoken_bpe(str(ROOT / spec["ranks_file"]))
    finally:
        if previous is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = previous
    return tiktoken.Encoding(
        name=name, pat_str=spec["pat_str"], mergeable_ranks=ranks, special_tokens=spec["special_tokens"]
    )


@pytest.fixture(scope="module", params=sorted(SPECS))
def loaded(request: pytest.FixtureRequest) -> tuple[str, Vocabulary, Any]:
    spec = SPECS[request.param]
    vocab = Vocabulary.from_tiktoken(
        ROOT / spec["ranks_file"], pattern=spec["pat_str"], special_tokens=spec["special_tokens"]
    )
    return request.param, vocab, reference_encoding(request.param)


def test_corpus_round_trips_through_token_bytes(loaded: tuple[str, Vocabulary, Any]) -> None:
    _, vocab, encoding = loaded
    for text in CORPUS:
        ids = encoding.encode(text, disallowed_special=())
        assert b"".join(vocab.token_bytes(i) for i in ids) == text.encode("utf-8"), repr(text)


def test_special_tokens_round_trip(loaded: tuple[str, Vocabulary, Any]) -> None:
    name, vocab, encoding = loaded
    text = "<|endoftext|>a<|endoftext|>"
    ids = encoding.encode(text, allowed_special="all")
    assert len(ids) == 3 and vocab.is_special(ids[0]) and not vocab.is_special(ids[1])
    assert b"".join(vocab.token_bytes(i) for i in ids) == text.encode()


def test_every_token_matches_tiktoken(loaded: tuple[str, Vocabulary, Any]) -> None:
    name, vocab, encoding = loaded
    specials: dict[str, int] = SPECS[name]["special_tokens"]
    assert vocab.size == encoding.n_vocab == SPECS[name]["n_vocab"]
    special_ids = set(specials.values())
    defined = set(encoding._mergeable_ranks.values()) | special_ids
    for token_id in range(vocab.size):
        if token_id not in defined:
            # A gap: tiktoken has no token; tokensieve has a special placeholder.
            assert vocab.token_bytes(token_id) == b"<|tokensieve_gap_%d|>" % token_id
            assert vocab.is_special(token_id)
            continue
        ours = vocab.token_bytes(token_id)
        if token_id in special_ids:
            # Of two names for one id (o200k_harmony's 200018) the first is the token's bytes.
            assert ours == next(n for n, i in specials.items() if i == token_id).encode()
            assert vocab.is_special(token_id)
        else:
            assert ours == encoding.decode_single_token_bytes(token_id)
            assert not vocab.is_special(token_id)
    for special_name, token_id in specials.items():
        assert vocab.token_id(special_name) == token_id


def test_eos_and_pattern(loaded: tuple[str, Vocabulary, Any]) -> None:
    name, vocab, _ = loaded
    specials = SPECS[name]["special_tokens"]
    assert vocab.eos_token_ids == tuple(sorted(specials[n] for n in EXPECTED_EOS[name]))
    assert vocab.pretokenizer_pattern == SPECS[name]["pat_str"]


def test_o200k_base_gaps() -> None:
    spec = SPECS["o200k_base"]
    vocab = Vocabulary.from_tiktoken(ROOT / spec["ranks_file"], special_tokens=spec["special_tokens"])
    assert vocab.size == 200019  # ranks 0..199997, <|endoftext|> 199999, <|endofprompt|> 200018
    gaps = [i for i in range(vocab.size) if vocab.token_bytes(i).startswith(b"<|tokensieve_gap_")]
    assert gaps == [199998, *range(200000, 200018)]
    assert vocab.pretokenizer_pattern is None


# --------------------------------------------------------------------------- errors


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "ranks.tiktoken"
    path.write_text(text, encoding="ascii")
    return path


GOOD = "YQ== 0\nYg== 1\n"  # b"a" 0, b"b" 1


def test_small_file_with_specials(tmp_path: Path) -> None:
    vocab = Vocabulary.from_tiktoken(write(tmp_path, GOOD), special_tokens={"<|endoftext|>": 3})
    assert vocab.tokens == (b"a", b"b", b"<|tokensieve_gap_2|>", b"<|endoftext|>")
    assert vocab.eos_token_ids == (3,) and vocab.special_token_ids == {2, 3}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("YQ== 0\n!!!! 1\n", "line 2: invalid base64"),
        ("YQ== 0\nYg 1\n", "line 2: invalid base64"),
        ("YQ== zero\n", "line 1: rank 'zero' is not an integer"),
        ("YQ== -1\n", "line 1: rank '-1' is not an integer"),
        ("YQ== 0\nYg== 0\n", "line 2: rank 0 appears twice"),
        ("YQ== 0 extra\n", "line 1: expected '<base64 token> <rank>'"),
        ("\n\n", "no '<base64 token> <rank>' lines"),
    ],
)
def test_bad_rank_files(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(TokenizerLoadError, match=message) as caught:
        Vocabulary.from_tiktoken(path, special_tokens={"<|endoftext|>": 9})
    assert caught.value.path == str(path)


def test_foreign_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(TokenizerLoadError, match="expected '<base64 token> <rank>'"):
        Vocabulary.from_tiktoken(ROOT / "encodings.json", special_tokens={"<|endoftext|>": 0})
    with pytest.raises(TokenizerLoadError, match="file not found"):
        Vocabulary.from_tiktoken(tmp_path / "absent.tiktoken")


def test_missing_eos(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)
    with pytest.raises(TokenizerLoadError, match="no EOS token found"):
        Vocabulary.from_tiktoken(path)
    with pytest.raises(TokenizerLoadError, match="no EOS token found"):
        Vocabulary.from_tiktoken(path, special_tokens={"<|fim_prefix|>": 2})
    assert Vocabulary.from_tiktoken(path, eos_token_ids=[1]).eos_token_ids == (1,)


def test_special_token_errors(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)
    with pytest.raises(TokenizerLoadError, match="already the rank of b'b'"):
        Vocabulary.from_tiktoken(path, special_tokens={"<|endoftext|>": 1})
    with pytest.raises(TypeError, match="non-negative int id"):
        Vocabulary.from_tiktoken(path, special_tokens={"<|endoftext|>": "2"})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="pattern"):
        Vocabulary.from_tiktoken(path, pattern="", special_tokens={"<|endoftext|>": 2})
