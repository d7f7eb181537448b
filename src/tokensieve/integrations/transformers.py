"""transformers integration: load local models, and constrain ``model.generate`` with a LogitsProcessor.

:class:`TokensieveLogitsProcessor` plugs tokensieve grammars into Hugging Face's own
``generate``: one grammar per batch row (or one for all), logits wider than the
vocabulary (padded embeddings), and beam search, where beams are reordered every step and
each beam's matcher is a :meth:`~tokensieve.Matcher.fork` of its parent's.

Loading never reaches the Hugging Face Hub: models come from local folders or GGUF files
(transformers dequantizes GGUF checkpoints on load; that needs the ``gguf`` package).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from typing import Any

try:
    import torch
    import transformers
except ImportError as err:  # pragma: no cover - depends on the environment
    raise ImportError(
        "the transformers integration needs torch and transformers: pip install 'tokensieve[torch]'"
    ) from err

from ..bitmask import allocate_bitmask, apply_bitmask
from ..errors import MatcherStateError, VocabularyMismatch
from ..generation.backends import TransformersBackend
from ..models import ModelLocation, locate_model

__all__ = ["TokensieveLogitsProcessor", "load_backend", "load_model"]


# ----------------------------------------------------------------------------- loading

_load_lock = threading.Lock()


def load_model(model: str | None = None, *, device: str = "cpu", dtype: str | None = None) -> tuple[Any, Any]:
    """``(model, tokenizer)`` for a local GGUF file or checkpoint folder (``None``: the default).

    Loaded once per process and argument set; later calls return the same objects.
    """
    location = locate_model(model)
    return _load_cached(location, device, dtype)


def load_backend(
    model: str | None = None, *, device: str = "cpu", dtype: str | None = None
) -> TransformersBackend:
    """A :class:`TransformersBackend` for a local model, cached like :func:`load_model`.

    Caching the backend keeps its vocabulary, compiled grammars and jump-forward tables.
    """
    return _backend_cached(locate_model(model), device, dtype)


@functools.lru_cache(maxsize=4)
def _backend_cached(location: ModelLocation, device: str, dtype: str | None) -> TransformersBackend:
    model, tokenizer = _load_cached(location, device, dtype)
    return TransformersBackend(model, tokenizer)


@functools.lru_cache(maxsize=4)
def _load_cached(location: ModelLocation, device: str, dtype: str | None) -> tuple[Any, Any]:
    with _load_lock:
        kwargs: dict[str, Any] = {"local_files_only": True}
        if location.gguf_file:
            kwargs["gguf_file"] = location.gguf_file
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(location.folder), **kwargs)
        if dtype is not None:
            kwargs["dtype"] = getattr(torch, dtype)
        model = transformers.AutoModelForCausalLM.from_pretrained(str(location.folder), **kwargs)
        model = model.to(device)  # type: ignore[arg-type]  # transformers' stubs want a model here
        return model.eval(), tokenizer


# ----------------------------------------------------------------------------- logits processor


class TokensieveLogitsProcessor(transformers.LogitsProcessor):
    """Masks ``model.generate``'s logits with tokensieve grammars.

    ``grammars`` is one compiled grammar for every row, or a list with one entry per batch
    row (``None`` leaves that row free). With beam search pass ``num_beams``: rows are then
    ``batch * num_beams`` and row ``r`` follows grammar ``r // num_beams``.

    One processor serves one ``generate`` call; build a new one (or :meth:`reset`) for the next.
    """

    def __init__(self, grammars: Any, *, num_beams: int = 1, vocab_size: int | None = None):
        import tokensieve

        self._ts = tokensieve
        if isinstance(grammars, Sequence):
            self._grammars: list[Any] | None = list(grammars)
            self._shared = None
            if not self._grammars:
                raise ValueError("grammars must not be empty")
        else:
            self._grammars, self._shared = None, grammars
        if isinstance(num_beams, bool) or not isinstance(num_beams, int) or num_beams < 1:
            raise ValueError(f"num_beams must be an int >= 1, got {num_beams!r}")
        self.num_beams = num_beams
        self._vocab_size = vocab_size if vocab_size is not None else self._grammar_vocab_size()
        self.reset()

    def reset(self) -> None:
        """Forget all state, ready for another ``generate`` call."""
        self._prompt_len: int | None = None
        self._matchers: list[Any | None] = []
        self._by_prefix: dict[tuple[int, tuple[int, ...]], Any] = {}
        self._bitmask: Any = None

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self._prompt_len is None:
            self._start(input_ids)
        else:
            self._advance(input_ids)
        # Free rows, and rows already finished (generate pads them whatever we do), stay as they are.
        live = [(r, m) for r, m in enumerate(self._matchers) if m is not None and not m.is_terminated()]
        if live:
            rows_to_mask = [r for r, _ in live]
            # One native thread per row, GIL released.
            self._ts.fill_bitmasks([m for _, m in live], self._bitmask, rows_to_mask)
            apply_bitmask(scores, self._bitmask, vocab_size=self._vocab_size, indices=rows_to_mask)
        return scores

    # ------------------------------------------------------------------ state

    def _grammar_for(self, row: int) -> Any:
        if self._grammars is None:
            return self._shared
        batch = len(self._grammars)
        if row // self.num_beams >= batch:
            raise ValueError(f"{batch} grammars for {batch * self.num_beams} rows: pass one per batch row")
        return self._grammars[row // self.num_beams]

    def _grammar_vocab_size(self) -> int:
        grammars = self._grammars if self._grammars is not None else [self._shared]
        sizes = {g.vocab.size for g in grammars if g is not None}
        if len(sizes) > 1:
            raise VocabularyMismatch(f"grammars compiled for different vocabulary sizes: {sorted(sizes)}")
        if not sizes:
            raise ValueError("every row is unconstrained: pass at least one grammar")
        return sizes.pop()

    def _start(self, input_ids: torch.LongTensor) -> None:
        rows = input_ids.shape[0]
        if self._grammars is not None and len(self._grammars) * self.num_beams != rows:
            raise ValueError(
                f"{len(self._grammars)} grammars x {self.num_beams} beams does not match {rows} rows"
            )
        self._prompt_len = input_ids.shape[1]
        self._matchers = [
            None if (g := self._grammar_for(r)) is None else self._ts.Matcher(g) for r in range(rows)
        ]
        self._bitmask = allocate_bitmask(rows, self._vocab_size)
        # Before the first token every beam of a group is in the same state.
        self._by_prefix = {
            (r // self.num_beams, ()): m for r, m in enumerate(self._matchers) if m is not None
        }

    def _advance(self, input_ids: torch.LongTensor) -> None:
        """Feed each row its newest token; with beams, fork the parent beam's matcher first."""
        generated = input_ids[:, self._prompt_len :].tolist()
        if self.num_beams == 1:
            for r, tokens in enumerate(generated):
                self._feed(self._matchers[r], tokens[-1], r)
            return
        # Beam search reorders rows: find each row's parent by its generated prefix.
        by_prefix: dict[tuple[int, tuple[int, ...]], Any] = {}
        for r, tokens in enumerate(generated):
            group = r // self.num_beams
            parent = self._by_prefix.get((group, tuple(tokens[:-1])))
            if parent is None:
                if self._grammar_for(r) is None:
                    continue
                raise MatcherStateError(f"row {r}: no beam with prefix {tokens[:-1]} was seen before")
            child = parent.fork()
            self._feed(child, tokens[-1], r)
            self._matchers[r] = child
            by_prefix[(group, tuple(tokens))] = child
        self._by_prefix = by_prefix

    def _feed(self, matcher: Any, token: int, row: int) -> None:
        if matcher is None or matcher.is_terminated():
            return
        if not matcher.accept_token(token):
            raise MatcherStateError(f"row {row}: generate picked token {token}, which the grammar forbids")
