"""llama.cpp integration (``llama-cpp-python``): a backend for ``tokensieve.generate`` and a
logits processor for ``Llama.create_completion``.

llama-cpp-python is an optional extra and ships only as a source package. On machines
without AVX-512, build it with native CPU detection off, or the first decode dies with an
illegal instruction::

    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \\
      -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAVA_BUILD=OFF" \\
      pip install llama-cpp-python

Logits are read with ``llama_get_logits_ith(ctx, -1)``: ``Llama.scores`` stays zero unless
the model was opened with ``logits_all=True``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

try:
    import llama_cpp
except ImportError as err:  # pragma: no cover - depends on the environment
    raise ImportError(
        "the llama.cpp integration needs llama-cpp-python: pip install llama-cpp-python "
        "(see tokensieve.integrations.llama_cpp for the build flags)"
    ) from err

from ..bitmask import allocate_bitmask, apply_bitmask
from ..errors import MatcherStateError, TokensieveError
from ..generation.backends import LlamaCppBackend
from ..models import locate_model

__all__ = ["LlamaCppLogitsProcessor", "last_logits", "load_backend", "load_llama", "render_chat"]


@functools.lru_cache(maxsize=4)
def load_llama(path: str, *, n_ctx: int = 4096, n_threads: int | None = None) -> Any:
    """Open a GGUF model with llama.cpp (once per process and argument set)."""
    return llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, verbose=False)


@functools.lru_cache(maxsize=4)
def load_backend(model: str | None = None) -> LlamaCppBackend:
    """A cached :class:`LlamaCppBackend` for a local GGUF file (``None``: the embedded default)."""
    location = locate_model(model)
    if not location.is_gguf:
        raise ValueError(f"{location.path}: the llama.cpp backend needs a GGUF file")
    return LlamaCppBackend(load_llama(str(location.path)))


def last_logits(llama: Any) -> np.ndarray:
    """A copy of the logits of the last evaluated position, shape ``(n_vocab,)``."""
    pointer = llama_cpp.llama_get_logits_ith(llama.ctx, -1)
    return np.ctypeslib.as_array(pointer, shape=(llama.n_vocab(),)).copy()


def render_chat(llama: Any, messages: Sequence[Mapping[str, Any]], *, tools: Any = None) -> str:
    """The model's GGUF chat template applied to ``messages``, assistant turn opened."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = llama.metadata.get("tokenizer.chat_template")
    if not template:
        raise TokensieveError("this GGUF model has no chat template; pass chat=False for a raw prompt")

    def token_text(token_id: int) -> str:
        if token_id < 0:
            return ""
        return llama.detokenize([token_id], special=True).decode("utf-8", errors="replace")

    formatter = Jinja2ChatFormatter(
        template=template, eos_token=token_text(llama.token_eos()), bos_token=token_text(llama.token_bos())
    )
    return formatter(messages=list(messages), tools=tools).prompt


class LlamaCppLogitsProcessor:
    """Constrains ``Llama.create_completion`` to a compiled grammar.

    Pass it in a ``llama_cpp.LogitsProcessorList`` as ``logits_processor=``. llama.cpp calls
    it with every token so far (prompt included) and the next-token scores; the first call
    marks where the prompt ends. One processor serves one completion.
    """

    def __init__(self, grammar: Any):
        import tokensieve

        self.grammar = grammar
        self.matcher = tokensieve.Matcher(grammar)
        self._vocab_size = grammar.vocab.size
        self._bitmask = allocate_bitmask(1, self._vocab_size)
        self._seen: int | None = None

    def __call__(self, input_ids: np.ndarray, scores: np.ndarray) -> np.ndarray:
        if self._seen is None:
            self._seen = len(input_ids)  # the prompt: nothing generated yet
        for token in input_ids[self._seen :]:
            if not self.matcher.accept_token(int(token)):
                raise MatcherStateError(f"llama.cpp picked token {int(token)}, which the grammar forbids")
        self._seen = len(input_ids)
        if self.matcher.is_terminated():
            return scores
        self.matcher.fill_bitmask(self._bitmask, row=0)
        apply_bitmask(scores, self._bitmask[0], vocab_size=self._vocab_size)
        return scores
