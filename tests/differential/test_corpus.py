"""Engine vs oracle on the grammar corpus, with real tokenizer vocabularies.

For every grammar, string and vocabulary the masks must agree token for token at every
step: along valid strings to the end (EOS included) and along invalid ones up to the
first rejected token. The oracle is pure Python, so each grammar runs against a
*sub-vocabulary* of the real one: every token the strings use, every single-byte token,
and a fixed random sample of the rest. The engine code path is the same for any
vocabulary; `test_full_vocabulary_masks` then checks a few steps on the complete vocabularies.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence

import pytest

from tests.differential.corpus import CASES, Case
from tests.oracle import Oracle
from tests.paths import TOKENIZERS
from tokensieve import Compiler, Matcher, NoTokenAllowed, Vocabulary
from tokensieve.frontends.json_value import json_grammar
from tokensieve.frontends.whitespace import WhitespacePolicy
from tokensieve.ir import Grammar

FAMILIES = {
    "gpt2": "hf/gpt2-50k.tokenizer.json",
    "llama3": "hf/llama3-128k.tokenizer.json",
    "llama2_spm": "hf/llama2-spm-32k.tokenizer.json",
}
SAMPLE = 700


@functools.cache
def full_vocab(family: str) -> Vocabulary:
    return Vocabulary.from_tokenizer_json(TOKENIZERS / FAMILIES[family])


@functools.cache
def hf_tokenizer(family: str):  # type: ignore[no-untyped-def]
    tokenizers = pytest.importorskip("tokenizers")
    return tokenizers.Tokenizer.from_file(str(TOKENIZERS / FAMILIES[family]))


def ir_grammar(case: Case) -> Grammar:
    if case.kind == "json":
        return json_grammar(WhitespacePolicy())
    assert case.ebnf is not None
    from tokensieve.frontends.ebnf import parse_ebnf

    return parse_ebnf(case.ebnf)


def tokenize(family: str, text: str) -> list[int]:
    """The tokenizer's own ids when they spell `text` exactly, else greedy longest match."""
    vocab = full_vocab(family)
    data = text.encode()
    ids = hf_tokenizer(family).encode(text, add_special_tokens=False).ids
    if b"".join(vocab.token_bytes(i) for i in ids) == data:
        return ids
    out, i = [], 0
    while i < len(data):
        for j in range(min(len(data), i + 32), i, -1):
            t = vocab.token_id(data[i:j])
            if t is not None and not vocab.is_special(t):
                out.append(t)
                i = j
                break
        else:
            raise AssertionError(f"no token for byte {data[i]:#x}")
    return out


@functools.cache
def sub_vocab(family: str, case_name: str) -> tuple[Vocabulary, dict[int, int]]:
    """A sub-vocabulary for one case and the map from full ids to its ids."""
    vocab = full_vocab(family)
    case = next(c for c in CASES if c.name == case_name)
    keep: set[int] = set(vocab.eos_token_ids)
    for text in case.valid + case.invalid:
        keep.update(tokenize(family, text))
    keep.update(i for i in range(vocab.size) if len(vocab.token_bytes(i)) == 1 and not vocab.is_special(i))
    rng = random.Random(f"{family}/{case_name}")
    keep.update(rng.sample(range(vocab.size), SAMPLE))
    ids = sorted(keep)
    mapping = {old: new for new, old in enumerate(ids)}
    sub = Vocabulary(
        [vocab.token_bytes(i) for i in ids],
        eos_token_ids=[mapping[e] for e in vocab.eos_token_ids],
        special_token_ids=[mapping[i] for i in ids if vocab.is_special(i)],
    )
    return sub, mapping


def check_walk(
    oracle: Oracle, matcher: Matcher, vocab: Vocabulary, token_ids: Sequence[int], valid: bool
) -> None:
    prefix = b""
    specials = sorted(vocab.special_token_ids)
    for step, t in enumerate([*token_ids, vocab.eos_token_ids[0]]):
        expected = oracle.mask(prefix, vocab.tokens, special_ids=specials, eos_ids=vocab.eos_token_ids)
        if expected:
            got = set(matcher.allowed_tokens().tolist())
        else:
            with pytest.raises(NoTokenAllowed):
                matcher.allowed_tokens()
            got = set()
        if got != expected:
            extra = sorted(vocab.token_bytes(i) for i in got - expected)[:10]
            missing = sorted(vocab.token_bytes(i) for i in expected - got)[:10]
            pytest.fail(f"step {step} after {prefix!r}: engine extra {extra}, missing {missing}")
        ok = matcher.accept_token(t)
        assert ok == (t in expected)
        if not ok:
            assert not valid, f"valid string rejected at step {step} after {prefix!r}"
            return
        if step < len(token_ids):
            prefix += vocab.token_bytes(t)
    assert valid, "invalid string accepted with EOS"
    assert matcher.is_terminated()


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_engine_matches_oracle(case: Case, family: str) -> None:
    grammar = ir_grammar(case)
    oracle = Oracle(grammar)
    vocab, mapping = sub_vocab(family, case.name)
    compiled = Compiler(vocab).grammar(grammar)
    for texts, valid in ((case.valid, True), (case.invalid, False)):
        for text in texts:
            ids = [mapping[t] for t in tokenize(family, text)]
            try:
                check_walk(oracle, Matcher(compiled), vocab, ids, valid)
            except AssertionError as e:
                raise AssertionError(f"{text!r}: {e}") from None


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_full_vocabulary_masks(family: str) -> None:
    """A few steps of JSON on the complete vocabulary (dense masks inside strings, sparse outside)."""
    vocab = full_vocab(family)
    grammar = json_grammar(WhitespacePolicy())
    oracle = Oracle(grammar)
    matcher = Matcher(Compiler(vocab).grammar(grammar))
    specials = sorted(vocab.special_token_ids)
    prefix = b""
    for piece in (b'{"', b"na", b'me": ', b'"B', b"ob"):
        assert matcher.accept_bytes(piece)
        prefix += piece
    expected = oracle.mask(prefix, vocab.tokens, special_ids=specials, eos_ids=vocab.eos_token_ids)
    got = set(matcher.allowed_tokens().tolist())
    assert got == expected
    assert len(got) > vocab.size // 2  # inside a string almost everything is allowed
