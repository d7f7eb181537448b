"""The torch paths on a device: masks applied to logits where they live, CPU here and CUDA on a GPU.

``tests/unit/bitmask/test_bitmask_torch.py`` checks :func:`tokensieve.apply_bitmask` on CPU
tensors against a bit-by-bit packing. These tests add the *device* dimension: every test
takes a ``device`` parameter, ``"cpu"`` always and ``"cuda"`` when ``torch.cuda.is_available()``
(only that parameter is skipped otherwise), and checks

- ``apply_bitmask`` on device logits (float32, bfloat16, float16; batches; ``indices``;
  strided views; padded columns) with numpy, same-device and host bitmasks, against a numpy
  reference built from :func:`tokensieve.bitmask.unpack_bitmask`;
- masks the engine itself computed (``Matcher.fill_bitmask``), applied on the device;
- :class:`~tokensieve.integrations.transformers.TokensieveLogitsProcessor` on device scores,
  step by step;
- the decode loop (:func:`tokensieve.generation.loop.decode`) driving a tiny random
  ``LlamaForCausalLM`` on the device: every output is in the grammar's language, and
  overlapping masks with the forward pass changes nothing.

Everything runs on a small synthetic vocabulary, so no shared data, model file, ``gguf`` or
``jsonschema`` is needed (the GPU machine may lack them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

import tokensieve as ts
from tokensieve.bitmask import apply_bitmask, bitmask_words, unpack_bitmask

torch = pytest.importorskip("torch")

DEVICES = [
    "cpu",
    pytest.param(
        "cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
    ),
]
DTYPES = ["float32", "bfloat16", "float16"]

# A byte-level vocabulary: the 256 single bytes, a few merges, and EOS (special, no bytes).
MERGES = [b"ab", b"abc", b"ca", b"x1", b"12", b"123", b"alpha", b"beta", b"gamma", b"al", b"ga"]
TOKENS = [bytes([b]) for b in range(256)] + MERGES + [b""]
EOS = len(TOKENS) - 1
VOCAB_SIZE = len(TOKENS)  # 268: the last bitmask word is partly unused
LOGITS_WIDTH = 320  # wider than the vocabulary, as with embeddings padded to a multiple of 64
PATTERN = "(ab|c){1,4}x[0-9]{1,3}"  # bounded: every greedy walk ends within a few tokens


@pytest.fixture(scope="module")
def vocab() -> ts.Vocabulary:
    return ts.Vocabulary(TOKENS, eos_token_ids=[EOS], name="synthetic-bytes")


@pytest.fixture(scope="module")
def compiler(vocab: ts.Vocabulary) -> ts.Compiler:
    return ts.Compiler(vocab)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261130)


def reference(logits: np.ndarray, bitmask: np.ndarray, vocab_size: int, fill: float = -np.inf) -> np.ndarray:
    """What masking must produce, from ``unpack_bitmask``: disallowed and padding columns = ``fill``."""
    allowed = unpack_bitmask(bitmask, vocab_size)
    out = np.full_like(logits, fill)
    out[..., :vocab_size] = np.where(allowed, logits[..., :vocab_size], fill)
    return out


def random_bitmask(rng: np.random.Generator, rows: int, vocab_size: int) -> np.ndarray:
    """Random words over the whole int32 range (sign bit included), each row allowing something."""
    words = rng.integers(-(2**31), 2**31, size=(rows, bitmask_words(vocab_size)), dtype=np.int64)
    words[:, 0] |= 1  # token 0 allowed, so no row is empty
    return words.astype(np.int32)


def device_logits(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, device: str) -> Any:
    values = torch.tensor(rng.standard_normal(shape).astype(np.float32))
    return values.to(device=device, dtype=getattr(torch, dtype))


def host_copy(tensor: Any) -> np.ndarray:
    """A float32 numpy copy (every bfloat16/float16 value is exact in float32).

    Always a copy: for a float32 CPU tensor ``.numpy()`` alone would share its memory, and a
    "before" snapshot would silently follow the in-place update.
    """
    return np.array(tensor.detach().float().cpu().numpy(), copy=True)


# ----------------------------------------------------------------------------- apply_bitmask


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mask_on", ["numpy", "device", "host-tensor"])
def test_apply_bitmask_on_device_matches_unpack_reference(
    rng: np.random.Generator, device: str, dtype: str, mask_on: str
) -> None:
    vocab_size, width = 1000, 1088
    bitmask = random_bitmask(rng, 4, vocab_size)
    logits = device_logits(rng, (4, width), dtype, device)
    want = reference(host_copy(logits), bitmask, vocab_size)
    storage = logits.data_ptr()
    mask_arg: Any = {
        "numpy": bitmask,
        "device": torch.from_numpy(bitmask).to(device),
        "host-tensor": torch.from_numpy(bitmask),
    }[mask_on]
    apply_bitmask(logits, mask_arg, vocab_size=vocab_size)
    # In place, on the same device, in the same dtype: no copy to the host and back.
    assert logits.device.type == device and logits.dtype == getattr(torch, dtype)
    assert logits.data_ptr() == storage
    assert np.array_equal(host_copy(logits), want)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_apply_bitmask_indices_leave_other_rows_untouched(
    rng: np.random.Generator, device: str, dtype: str
) -> None:
    vocab_size = 300
    bitmask = random_bitmask(rng, 4, vocab_size)
    logits = device_logits(rng, (4, 320), dtype, device)
    before = host_copy(logits)
    apply_bitmask(logits, torch.from_numpy(bitmask).to(device), vocab_size=vocab_size, indices=[3, 1])
    after = host_copy(logits)
    for row in (0, 2):
        assert np.array_equal(after[row], before[row])
    for row in (1, 3):
        assert np.array_equal(after[row], reference(before[row], bitmask[row], vocab_size))


@pytest.mark.parametrize("device", DEVICES)
def test_apply_bitmask_strided_view_and_finite_fill(rng: np.random.Generator, device: str) -> None:
    # The last position of (batch, seq, width) logits, as a model returns them: a strided view.
    vocab_size = 200
    bitmask = random_bitmask(rng, 2, vocab_size)
    full = device_logits(rng, (2, 5, 256), "bfloat16", device)
    last = full[:, -1, :]
    want = reference(host_copy(last), bitmask, vocab_size, fill=-1e4)
    apply_bitmask(last, bitmask, vocab_size=vocab_size, fill=-1e4)
    # bfloat16 cannot hold -1e4 exactly; the reference rounds the same way.
    want = torch.tensor(want).to(torch.bfloat16).float().numpy()
    assert np.array_equal(host_copy(full[:, -1, :]), want)


@pytest.mark.parametrize("device", DEVICES)
def test_apply_bitmask_single_row_without_vocab_size(rng: np.random.Generator, device: str) -> None:
    # 1-D logits and bitmask; the vocabulary spans the bitmask's words, capped at the width.
    bitmask = random_bitmask(rng, 1, 96)[0]
    logits = device_logits(rng, (90,), "float32", device)
    want = reference(host_copy(logits)[None, :], bitmask[None, :], 90)[0]
    apply_bitmask(logits, torch.from_numpy(bitmask).to(device))
    assert np.array_equal(host_copy(logits), want)


# ----------------------------------------------------------------------------- engine masks on a device


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_matcher_masks_applied_on_device_keep_greedy_in_the_language(
    compiler: ts.Compiler, rng: np.random.Generator, device: str, dtype: str
) -> None:
    # Two rows with different grammars walk greedily over random device logits; every argmax
    # of the masked logits must be a token the matcher accepts, until both are complete.
    grammars = [compiler.regex(PATTERN), compiler.choice(["alpha", "beta", "gamma"])]
    matchers = [ts.Matcher(g) for g in grammars]
    bitmask = ts.allocate_bitmask(2, VOCAB_SIZE)
    texts = [b"", b""]
    for _ in range(12):
        live = [r for r, m in enumerate(matchers) if not m.is_terminated()]
        if not live:
            break
        ts.fill_bitmasks([matchers[r] for r in live], bitmask, live)
        logits = device_logits(rng, (2, LOGITS_WIDTH), dtype, device)
        want = reference(host_copy(logits), bitmask, VOCAB_SIZE)
        apply_bitmask(logits, bitmask, vocab_size=VOCAB_SIZE, indices=live)
        got = host_copy(logits)
        for r in live:
            assert np.array_equal(got[r], want[r])
            token = int(torch.argmax(logits[r].float()).item())
            assert matchers[r].accept_token(token), f"row {r}: argmax {token} was masked in"
            texts[r] += TOKENS[token]
    assert all(m.is_terminated() for m in matchers)
    assert re.fullmatch(PATTERN, texts[0].decode())
    assert texts[1].decode() in ("alpha", "beta", "gamma")


@pytest.mark.parametrize("device", DEVICES)
def test_fill_bitmask_writes_host_tensors_and_refuses_device_ones(compiler: ts.Compiler, device: str) -> None:
    matcher = ts.Matcher(compiler.regex(PATTERN))
    expected = np.zeros((1, bitmask_words(VOCAB_SIZE)), dtype=np.int32)
    matcher.fill_bitmask(expected)
    target = torch.zeros((1, bitmask_words(VOCAB_SIZE)), dtype=torch.int32, device=device)
    if device == "cpu":
        matcher.fill_bitmask(target)
        assert np.array_equal(target.numpy(), expected)
    else:
        # The engine writes host memory only; a device buffer must be refused, not written through.
        with pytest.raises(TypeError):
            matcher.fill_bitmask(target)
        assert not target.any()


# ----------------------------------------------------------------------------- transformers processor


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_logits_processor_on_device_scores(
    compiler: ts.Compiler, rng: np.random.Generator, device: str, dtype: str
) -> None:
    pytest.importorskip("transformers")
    from tokensieve.integrations.transformers import TokensieveLogitsProcessor

    grammars = [compiler.regex(PATTERN), None, compiler.choice(["alpha", "beta", "gamma"])]
    processor = TokensieveLogitsProcessor(grammars)
    mirrors = [None if g is None else ts.Matcher(g) for g in grammars]  # the expected states
    input_ids = torch.zeros((3, 4), dtype=torch.long, device=device)  # a 4-token prompt
    for _ in range(4):
        scores = device_logits(rng, (3, LOGITS_WIDTH), dtype, device)
        before = host_copy(scores)
        out = processor(input_ids, scores)
        assert out.device.type == device and out.dtype == getattr(torch, dtype)
        got = host_copy(out)
        chosen = []
        for r, mirror in enumerate(mirrors):
            if mirror is None or mirror.is_terminated():
                # Free rows and rows past EOS are left alone (generate pads finished rows itself).
                assert np.array_equal(got[r], before[r])
                chosen.append(int(np.argmax(before[r, :VOCAB_SIZE])))
                continue
            mask = np.zeros((1, bitmask_words(VOCAB_SIZE)), dtype=np.int32)
            mirror.fill_bitmask(mask)
            assert np.array_equal(got[r], reference(before[r], mask[0], VOCAB_SIZE))
            token = int(np.argmax(got[r]))
            assert mirror.accept_token(token)
            chosen.append(token)
        new = torch.tensor(chosen, dtype=torch.long, device=device)[:, None]
        input_ids = torch.cat([input_ids, new], dim=1)


# ----------------------------------------------------------------------------- the decode loop


class _ByteTokenizer:
    """Just what ``TransformersBackend`` asks of a tokenizer here: ids of text, and a pad id."""

    pad_token_id = 0
    eos_token_id = EOS

    def __call__(self, text: str, add_special_tokens: bool = False) -> dict[str, list[int]]:
        return {"input_ids": list(text.encode())}


def tiny_llama_backend(vocab: ts.Vocabulary, device: str) -> Any:
    """A random 1-layer Llama whose logits are wider than the vocabulary, on ``device``."""
    transformers = pytest.importorskip("transformers")
    from tokensieve.generation.backends import TransformersBackend

    config = transformers.LlamaConfig(
        vocab_size=LOGITS_WIDTH,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        pad_token_id=0,
        bos_token_id=None,
        eos_token_id=EOS,
    )
    torch.manual_seed(7)
    model = transformers.LlamaForCausalLM(config).to(device)
    return TransformersBackend(model, _ByteTokenizer(), vocabulary=vocab)


def run_decode(
    backend: Any, prompts: Sequence[Sequence[int]], grammars: Sequence[Any], **options: Any
) -> tuple[list[Any], Any]:
    from tokensieve.generation.loop import DecodeOptions, decode

    matchers = [None if g is None else ts.Matcher(g) for g in grammars]
    return decode(backend, [list(p) for p in prompts], matchers, DecodeOptions(max_tokens=24, **options))


@pytest.mark.parametrize("device", DEVICES)
def test_decode_loop_on_device_model(vocab: ts.Vocabulary, compiler: ts.Compiler, device: str) -> None:
    backend = tiny_llama_backend(vocab, device)
    grammars = [compiler.regex(PATTERN), None, compiler.choice(["alpha", "beta", "gamma"])]
    # Prompts of different lengths: the session left-pads them in one device batch.
    prompts = [list(b"Write it: "), list(b"Say anything"), list(b"Pick one of three names, please: ")]
    results = {}
    for overlap in (False, True):
        for jump_forward in (False, True):
            outputs, timings = run_decode(
                backend, prompts, grammars, overlap=overlap, jump_forward=jump_forward
            )
            results[overlap, jump_forward] = [o.tokens for o in outputs]
            assert timings.forward_passes >= 1
            for out, grammar in zip(outputs, grammars, strict=True):
                assert all(0 <= t < VOCAB_SIZE and t != EOS for t in out.tokens)  # never padding
                if grammar is None:
                    assert out.stop_reason in ("max_tokens", "eos")
                    continue
                assert out.stop_reason in ("complete", "eos"), out
                assert ts.Matcher(grammar).accept_tokens(out.tokens) == len(out.tokens)
            text = [b"".join(TOKENS[t] for t in out.tokens) for out in outputs]
            assert re.fullmatch(PATTERN.encode(), text[0]) and text[2] in (b"alpha", b"beta", b"gamma")
    # Computing masks during the forward pass is an optimisation; the tokens must not change.
    assert results[True, False] == results[False, False]
    assert results[True, True] == results[False, True]
