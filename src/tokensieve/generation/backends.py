"""Backends: a causal language model behind one small interface the decode loop drives.

A :class:`Backend` knows its vocabulary and tokenizer and opens a :class:`Session` per
generation call. A session keeps the KV cache of every row of a batch and has one
operation, :meth:`Session.forward`: append tokens to each row, return the next-token
logits of each row. That is all the loop needs; sampling, masks and stopping live in
:mod:`.loop`.

Two backends ship: :class:`TransformersBackend` (torch; the default, and the one that
runs the embedded model) and :class:`LlamaCppBackend` (the optional ``llama-cpp-python``
package). Both import their library lazily.
"""

from __future__ import annotations

import inspect
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

import numpy as np

from ..errors import TokensieveError
from .forcing import Forcer, TokenExtensions

__all__ = ["Backend", "LlamaCppBackend", "Message", "Session", "TransformersBackend"]

Message = Mapping[str, Any]
"""A chat message, e.g. ``{"role": "user", "content": "..."}``."""


class Session(ABC):
    """The KV cache of one batch of sequences."""

    @abstractmethod
    def forward(self, new_tokens: Sequence[Sequence[int]]) -> Any:
        """Append ``new_tokens[r]`` to row ``r`` (an empty list leaves the row as it is) and
        return next-token logits, shape ``(batch, width)``, numpy or torch.

        The logits of a row given no tokens are unspecified and must be ignored.
        """

    def close(self) -> None:  # noqa: B027 - optional hook, most sessions hold nothing to free
        """Release what the session holds."""


class Backend(ABC):
    """A model + tokenizer pair that the decode loop can drive."""

    name: str = "backend"

    @property
    @abstractmethod
    def vocabulary(self) -> Any:
        """The :class:`tokensieve.Vocabulary` of the model's tokenizer."""

    @abstractmethod
    def encode(self, text: str) -> list[int]:
        """Token ids of plain ``text``, canonically tokenized, with no special tokens added."""

    @abstractmethod
    def prompt_tokens(
        self, prompt: str | Sequence[Message], *, chat: bool, tools: Sequence[Mapping[str, Any]] | None = None
    ) -> list[int]:
        """The token ids of a prompt: with ``chat``, ``prompt`` (a string is one user message,
        else a list of messages) goes through the model's chat template with the assistant
        turn opened; without, the text is tokenized as is (with the tokenizer's BOS, if any).
        """

    @abstractmethod
    def start(self, batch_size: int) -> Session:
        """A fresh session for ``batch_size`` rows."""

    @property
    def supports_tools_in_template(self) -> bool:
        """Whether the chat template renders a ``tools`` argument itself."""
        return False

    @cached_property
    def compiler(self) -> Any:
        """A :class:`tokensieve.Compiler` for this vocabulary (it caches compiled grammars)."""
        import tokensieve

        return tokensieve.Compiler(self.vocabulary)

    @cached_property
    def token_bytes(self) -> list[bytes]:
        """Every token's exact bytes, indexed by id."""
        return list(self.vocabulary.tokens)

    @cached_property
    def forcer(self) -> Forcer:
        """Jump-forward helper for this vocabulary (built once, on first use)."""
        table = self.token_bytes
        return Forcer(table.__getitem__, self.encode, TokenExtensions(table), self.vocabulary.size)


# ----------------------------------------------------------------------------- transformers


class TransformersBackend(Backend):
    """A ``transformers`` causal LM and its tokenizer.

    Build it from loaded objects, or with :meth:`from_pretrained` from a local folder or GGUF
    file (never a download). ``vocabulary`` overrides the one derived from the tokenizer.
    """

    name = "transformers"

    def __init__(self, model: Any, tokenizer: Any, *, vocabulary: Any = None):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self._vocabulary = vocabulary
        self._lock = threading.Lock()
        params = inspect.signature(model.forward).parameters
        # transformers 5 renamed past_key_values to cache; accept both generations.
        self._cache_kw = "cache" if "cache" in params else "past_key_values"

    @classmethod
    def from_pretrained(
        cls, model: str | None = None, *, device: str = "cpu", dtype: str | None = None
    ) -> Any:
        """The backend for a local model (``None``: the embedded default), cached per process."""
        from ..integrations.transformers import load_backend

        return load_backend(model, device=device, dtype=dtype)

    @property
    def vocabulary(self) -> Any:
        with self._lock:
            if self._vocabulary is None:
                import tokensieve

                self._vocabulary = tokensieve.Vocabulary.from_huggingface(self.tokenizer)
            return self._vocabulary

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    @property
    def supports_tools_in_template(self) -> bool:
        template = getattr(self.tokenizer, "chat_template", None)
        return isinstance(template, str) and "tools" in template

    def prompt_tokens(
        self, prompt: str | Sequence[Message], *, chat: bool, tools: Sequence[Mapping[str, Any]] | None = None
    ) -> list[int]:
        if not chat:
            if not isinstance(prompt, str):
                raise TypeError("a prompt without a chat template must be a string")
            return list(self.tokenizer(prompt)["input_ids"])
        if not getattr(self.tokenizer, "chat_template", None):
            raise TokensieveError("this tokenizer has no chat template; pass chat=False for a raw prompt")
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)
        extra = {"tools": list(tools)} if tools and self.supports_tools_in_template else {}
        text = self.tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True, **extra
        )
        # The template already spells out BOS and role markers; do not add them twice.
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def start(self, batch_size: int) -> Session:
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id if self.tokenizer.eos_token_id is not None else 0
        return _TorchSession(self.model, batch_size, pad_id=int(pad), cache_kw=self._cache_kw)


class _TorchSession(Session):
    """A batch with a growing KV cache.

    Rows may receive different numbers of tokens per step (prompts of different lengths,
    jump-forward). Each step's chunk is **left**-padded, so the last column is every row's
    newest token and ``logits_to_keep=1`` suffices; padding stays in the cache as holes the
    attention mask hides, and positions count real tokens only, so a row sees exactly the
    positions it would see alone.
    """

    def __init__(self, model: Any, batch_size: int, *, pad_id: int, cache_kw: str):
        import torch
        from transformers import DynamicCache

        self._torch = torch
        self.model = model
        self.device = next(model.parameters()).device
        self.pad_id = pad_id
        self.cache_kw = cache_kw
        try:
            self.cache = DynamicCache(config=model.config)
        except TypeError:  # transformers < 4.56 takes no config
            self.cache = DynamicCache()
        self.mask = torch.zeros((batch_size, 0), dtype=torch.long, device=self.device)
        self.lengths = torch.zeros(batch_size, dtype=torch.long, device=self.device)

    def forward(self, new_tokens: Sequence[Sequence[int]]) -> Any:
        torch = self._torch
        batch = self.mask.shape[0]
        if len(new_tokens) != batch:
            raise ValueError(f"expected {batch} rows of tokens, got {len(new_tokens)}")
        width = max(len(t) for t in new_tokens)
        if width == 0:
            raise ValueError("forward needs at least one token in some row")
        ids = torch.full((batch, width), self.pad_id, dtype=torch.long)
        chunk = torch.zeros((batch, width), dtype=torch.long)
        for r, tokens in enumerate(new_tokens):
            if tokens:
                ids[r, width - len(tokens) :] = torch.tensor(list(tokens), dtype=torch.long)
                chunk[r, width - len(tokens) :] = 1
        ids, chunk = ids.to(self.device), chunk.to(self.device)
        positions = self.lengths[:, None] + (chunk.cumsum(dim=1) - 1).clamp(min=0)
        self.lengths = self.lengths + chunk.sum(dim=1)
        self.mask = torch.cat([self.mask, chunk], dim=1)
        with torch.inference_mode():
            out = self.model(
                input_ids=ids,
                attention_mask=self.mask,
                position_ids=positions,
                use_cache=True,
                logits_to_keep=1,
                **{self.cache_kw: self.cache},
            )
        return out.logits[:, -1, :]


# ----------------------------------------------------------------------------- llama.cpp


class LlamaCppBackend(Backend):
    """A ``llama_cpp.Llama`` model (one sequence at a time; the KV cache lives in llama.cpp).

    Install the optional ``llama-cpp-python`` package for this backend. The vocabulary comes
    from the model's GGUF file.
    """

    name = "llama_cpp"

    def __init__(self, llama: Any, *, vocabulary: Any = None):
        self.llama = llama
        self._vocabulary = vocabulary
        self._lock = threading.Lock()

    @classmethod
    def from_path(cls, path: str, *, n_ctx: int = 4096, n_threads: int | None = None) -> LlamaCppBackend:
        """Load a GGUF model file with llama.cpp (see :func:`tokensieve.models.locate_model`)."""
        from ..integrations.llama_cpp import load_llama

        return cls(load_llama(path, n_ctx=n_ctx, n_threads=n_threads))

    @property
    def vocabulary(self) -> Any:
        with self._lock:
            if self._vocabulary is None:
                import tokensieve

                self._vocabulary = tokensieve.Vocabulary.from_gguf(self.llama.model_path)
            return self._vocabulary

    def encode(self, text: str) -> list[int]:
        return list(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    @property
    def supports_tools_in_template(self) -> bool:
        return "tools" in str(self.llama.metadata.get("tokenizer.chat_template", ""))

    def prompt_tokens(
        self, prompt: str | Sequence[Message], *, chat: bool, tools: Sequence[Mapping[str, Any]] | None = None
    ) -> list[int]:
        if not chat:
            if not isinstance(prompt, str):
                raise TypeError("a prompt without a chat template must be a string")
            return list(self.llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=False))
        from ..integrations.llama_cpp import render_chat

        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)
        text = render_chat(self.llama, messages, tools=tools if self.supports_tools_in_template else None)
        return list(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def start(self, batch_size: int) -> Session:
        if batch_size != 1:
            raise ValueError("the llama.cpp backend generates one sequence at a time (batch_size=1)")
        return _LlamaSession(self.llama)


class _LlamaSession(Session):
    def __init__(self, llama: Any):
        self.llama = llama
        llama.reset()  # forget the previous sequence; eval() drops its KV entries

    def forward(self, new_tokens: Sequence[Sequence[int]]) -> np.ndarray:
        from ..integrations.llama_cpp import last_logits

        (tokens,) = new_tokens
        if not tokens:
            raise ValueError("forward needs at least one token")
        self.llama.eval(list(tokens))
        return last_logits(self.llama)[None, :]
