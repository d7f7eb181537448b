"""The decode loop against a scripted model: stopping, truncation, batching, jump-forward, overlap.

The fake model has fixed token preferences, so each test knows exactly which tokens the loop
must produce and which tokens it must feed back; no real model is needed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

import tokensieve as ts
from tokensieve.generation.backends import Backend, Session
from tokensieve.generation.loop import DecodeOptions, decode

TOKENS = [b"<eos>", b"a", b"b", b"ab", b"yes", b"y", b"e", b"s", b"no", b" "]
EOS = 0


class ScriptedSession(Session):
    def __init__(self, backend: ScriptedBackend, batch: int):
        self.backend = backend
        self.fed: list[list[int]] = [[] for _ in range(batch)]

    def forward(self, new_tokens: Sequence[Sequence[int]]) -> np.ndarray:
        self.backend.forward_calls += 1
        for row, tokens in zip(self.fed, new_tokens, strict=True):
            row.extend(tokens)
        # Logits wider than the vocabulary, as with padded embeddings: padding must never win.
        logits = np.tile(self.backend.preference, (len(new_tokens), 1))
        return np.concatenate([logits, np.full((len(new_tokens), 6), 100.0, dtype=np.float32)], axis=1)


class ScriptedBackend(Backend):
    """A model that always prefers tokens in the order of ``ranking`` (first is best)."""

    def __init__(self, ranking: list[bytes]):
        self._vocab = ts.Vocabulary(TOKENS, eos_token_ids=[EOS], special_token_ids=[EOS])
        scores = np.zeros(len(TOKENS), dtype=np.float32)
        for rank, token in enumerate(ranking):
            scores[TOKENS.index(token)] = len(ranking) - rank
        self.preference = scores
        self.forward_calls = 0
        self.sessions: list[ScriptedSession] = []

    @property
    def vocabulary(self) -> Any:
        return self._vocab

    def encode(self, text: str) -> list[int]:
        # Longest match first, like a BPE tokenizer would on these few tokens.
        data, ids = text.encode(), []
        while data:
            token = max((t for t in TOKENS[1:] if data.startswith(t)), key=len)
            ids.append(TOKENS.index(token))
            data = data[len(token) :]
        return ids

    def prompt_tokens(
        self, prompt: str | Sequence[Mapping[str, Any]], *, chat: bool, tools: Any = None
    ) -> list[int]:
        return self.encode(str(prompt))

    def start(self, batch_size: int) -> Session:
        session = ScriptedSession(self, batch_size)
        self.sessions.append(session)
        return session


def run(
    backend: ScriptedBackend, grammars: list[Any], prompts: list[list[int]] | None = None, **options: Any
):
    matchers = [None if g is None else ts.Matcher(g) for g in grammars]
    prompts = prompts or [[9] for _ in grammars]
    return decode(backend, prompts, matchers, DecodeOptions(**options))


def text(tokens: list[int]) -> bytes:
    return b"".join(TOKENS[t] for t in tokens)


@pytest.fixture
def backend() -> ScriptedBackend:
    return ScriptedBackend([b"b", b"a", b"<eos>", b"ab", b"no", b"yes"])


def test_forced_output_needs_no_forward_pass(backend) -> None:
    grammar = ts.Compiler(backend.vocabulary).choice(["yes"])
    (out,), timings = run(backend, [grammar])
    assert text(out.tokens) == b"yes" and out.stop_reason == "complete"
    assert out.jump_forward_tokens == 1 and backend.forward_calls == 0 and timings.forward_passes == 0


def test_mask_steers_the_preferred_tokens_and_stops_when_complete(backend) -> None:
    grammar = ts.Compiler(backend.vocabulary).regex("[ab]{3}")
    (out,), timings = run(backend, [grammar])
    assert text(out.tokens) == b"bbb" and out.stop_reason == "complete"
    assert timings.forward_passes == 3  # the prompt, then "b", "b"; the last "b" completes it
    assert backend.sessions[0].fed == [[9, 2, 2]]


def test_eos_only_where_the_grammar_accepts(backend) -> None:
    # The model would rather end at once (EOS ranks above "a"), but "a+" needs one "a" first.
    model = ScriptedBackend([b"<eos>", b"a"])
    grammar = ts.Compiler(model.vocabulary).regex("a+")
    (out,), _ = run(model, [grammar])
    assert text(out.tokens) == b"a" and out.stop_reason == "eos"


def test_truncation_and_max_tokens(backend) -> None:
    never_ends = ts.Compiler(backend.vocabulary).regex("b+a")
    (out,), _ = run(backend, [never_ends], max_tokens=4)
    assert text(out.tokens) == b"bbbb" and out.stop_reason == "truncated"
    complete = ts.Compiler(backend.vocabulary).regex("b+")
    (out,), _ = run(backend, [complete], max_tokens=4)
    assert out.stop_reason == "max_tokens"  # complete at the limit: not truncated


def test_batch_rows_are_independent(backend) -> None:
    compiler = ts.Compiler(backend.vocabulary)
    grammars = [compiler.regex("a{2}"), None, compiler.choice(["no", "yes"])]
    outs, _ = run(backend, grammars, prompts=[[9], [9, 9, 9], [4]], max_tokens=3)
    assert [text(o.tokens) for o in outs] == [b"aa", b"bbb", b"no"]
    assert [o.stop_reason for o in outs] == ["complete", "max_tokens", "complete"]
    # Each row was fed its prompt and then exactly its own tokens, never more: "aa" is forced
    # from the start, so that row needed no forward pass at all.
    assert backend.sessions[0].fed == [[], [9, 9, 9, 2, 2], [4]]


def test_jump_forward_retokenizes_the_sampled_token_with_the_forced_bytes(backend) -> None:
    # After the model picks "a", the grammar forces "b": "a" + "b" becomes the token "ab".
    model = ScriptedBackend([b"a", b"b"])
    grammar = ts.Compiler(model.vocabulary).regex("(a|b)b(yes|no)")
    (fast,), _ = run(model, [grammar])
    assert fast.tokens == [TOKENS.index(b"ab"), TOKENS.index(b"yes")]
    assert fast.jump_forward_tokens == 0  # "ab" replaced the sampled "a": no extra token
    (plain,), _ = run(model, [grammar], jump_forward=False)
    assert text(plain.tokens) == b"abyes"
    assert plain.tokens == [1, 2, 4]  # token by token without jump-forward


def test_jump_forward_at_the_start_counts_its_tokens() -> None:
    model = ScriptedBackend([b"no"])
    grammar = ts.Compiler(model.vocabulary).regex("ab(yes|no)")
    (out,), timings = run(model, [grammar])
    assert out.tokens == [TOKENS.index(b"ab"), TOKENS.index(b"no")] and out.jump_forward_tokens == 1
    assert model.sessions[0].fed == [[9, TOKENS.index(b"ab")]]  # prompt and forced token in one pass
    assert timings.forward_passes == 1


def test_overlap_gives_the_same_tokens(backend) -> None:
    grammar = ts.Compiler(backend.vocabulary).regex("(a|b){2}(yes|no)")
    (on,), t_on = run(backend, [grammar], overlap=True)
    (off,), t_off = run(backend, [grammar], overlap=False)
    assert on.tokens == off.tokens
    assert t_on.mask_s > 0 and t_off.overlap == 0.0


def test_prompt_and_matcher_counts_must_agree(backend) -> None:
    with pytest.raises(ValueError, match="matchers"):
        decode(backend, [[9]], [None, None], DecodeOptions())
    with pytest.raises(ValueError, match="at least one token"):
        decode(backend, [[]], [None], DecodeOptions())
