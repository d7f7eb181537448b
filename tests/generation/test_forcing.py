"""Jump-forward: forced bytes become canonical tokens, the token boundary stays open for the model."""

from __future__ import annotations

import pytest

import tokensieve as ts
from tokensieve.generation.forcing import Forcer, TokenExtensions, _decodable, _prefix_successor

from ..paths import TOKENIZERS

tokenizers = pytest.importorskip("tokenizers")

SMOLLM2 = TOKENIZERS / "hf" / "smollm2-49k.tokenizer.json"


@pytest.fixture(scope="module")
def vocab() -> ts.Vocabulary:
    return ts.Vocabulary.from_tokenizer_json(SMOLLM2)


@pytest.fixture(scope="module")
def forcer(vocab: ts.Vocabulary) -> Forcer:
    tok = tokenizers.Tokenizer.from_file(str(SMOLLM2))

    def encode(text: str) -> list[int]:
        return tok.encode(text, add_special_tokens=False).ids

    return Forcer(vocab.token_bytes, encode, TokenExtensions(vocab.tokens), vocab.size)


@pytest.fixture(scope="module")
def compiler(vocab: ts.Vocabulary) -> ts.Compiler:
    return ts.Compiler(vocab)


def concat(vocab: ts.Vocabulary, ids: list[int]) -> bytes:
    return b"".join(vocab.token_bytes(t) for t in ids)


# ----------------------------------------------------------------------------- token extensions


def test_extensions_match_brute_force() -> None:
    tokens = [b"a", b"ab", b"abc", b"b", b"", b"ab", b"\xff", b"\xff\x00", b"abd", b"ac"]
    ext = TokenExtensions(tokens)
    for i, t in enumerate(tokens):
        want = sorted(j for j, u in enumerate(tokens) if t and u.startswith(t) and len(u) > len(t))
        assert sorted(ext.longer(i).tolist()) == want, t


def test_prefix_successor() -> None:
    assert _prefix_successor(b"ab") == b"ac"
    assert _prefix_successor(b"a\xff") == b"b"
    assert _prefix_successor(b"\xff\xff") is None


def test_decodable_cuts_at_the_last_complete_character() -> None:
    euro = "€".encode()
    assert _decodable(b"x", b"ab" + euro[:2]) == "xab"
    assert _decodable(b"x", euro[:2]) is None  # no complete forced character
    assert _decodable(b"", b"a\xffb") is None  # invalid UTF-8 inside
    assert _decodable(euro[:1], euro[1:] + b"!") == "€!"  # the forced bytes finish a character


# ----------------------------------------------------------------------------- extend


def test_forced_prefix_becomes_canonical_tokens(vocab, forcer, compiler) -> None:
    grammar = compiler.regex(r'\{"name": "[a-z]+", "age": [0-9]+\}')
    m = ts.Matcher(grammar)
    forced = m.jump_forward()
    assert forced == b'{"name": "'
    ids = forcer.extend(m, None, forced, budget=100)
    assert ids is not None and concat(vocab, ids) == forced
    encoded = tokenizers.Tokenizer.from_file(str(SMOLLM2)).encode(forced.decode(), add_special_tokens=False)
    assert ids == encoded.ids
    # This tokenizer never merges a quote with the letters after it, so no longer token
    # could take the place of the final ' "': the whole forced run is taken.
    fresh = ts.Matcher(grammar)
    assert fresh.accept_tokens(ids) == len(ids)
    assert fresh.jump_forward() == m.jump_forward() == b""


def test_boundary_token_that_could_grow_is_left_to_the_model(vocab, forcer, compiler) -> None:
    # After "hello world" the grammar allows EOS or "s": " world" could still become the
    # token " worlds", so jump-forward stops before it.
    m = ts.Matcher(compiler.choice(["hello world", "hello worlds"]))
    assert m.jump_forward() == b"hello world"
    ids = forcer.extend(m, None, b"hello world", budget=100)
    assert ids == [vocab.token_id(b"hello")]
    assert m.num_history == 1


def test_sampled_token_is_retokenized_with_the_forced_bytes(vocab, forcer, compiler) -> None:
    grammar = compiler.choice(["hello world, friend"])
    m = ts.Matcher(grammar)
    sampled = vocab.token_id(b"hel")
    assert sampled is not None and m.accept_token(sampled)
    forced = m.jump_forward()
    assert forced == b"lo world, friend"
    ids = forcer.extend(m, sampled, forced, budget=100)
    assert ids is not None and concat(vocab, ids) == b"hello world, friend"
    assert ids[0] != sampled  # "hel" + "lo" merged into the canonical "hello"
    assert m.is_accepting() and m.jump_forward() == b""


def test_budget_caps_the_tokens(vocab, forcer, compiler) -> None:
    m = ts.Matcher(compiler.choice(["one two three four five six"]))
    ids = forcer.extend(m, None, m.jump_forward(), budget=2)
    assert ids is not None and len(ids) == 2
    assert m.num_history == 2


def test_nothing_gained_leaves_the_matcher_unchanged(vocab, forcer, compiler) -> None:
    m = ts.Matcher(compiler.choice(["abc", "abcd", "abz"]))
    # "ab" is forced, but the token "abc" is allowed too: taking "ab" now would be wrong.
    assert m.jump_forward() == b"ab"
    assert forcer.extend(m, None, b"ab", budget=10) is None
    assert m.num_history == 0
    a = vocab.token_id(b"a")
    assert m.accept_token(a)
    assert m.jump_forward() == b"b"
    assert forcer.extend(m, a, b"b", budget=10) is None
    assert m.num_history == 1 and m.jump_forward() == b"b"
