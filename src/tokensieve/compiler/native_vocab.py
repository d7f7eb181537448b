"""The native (C++) twin of a :class:`~tokensieve.Vocabulary`: token bytes and the token trie.

Building the trie for a 128k vocabulary takes tens of milliseconds, so one native
vocabulary is kept per fingerprint and shared by every grammar compiled for it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _core
from ..ir import Repeat, codepoints
from ..vocabulary import Vocabulary
from .lower import regex_program

__all__ = ["native_vocabulary", "string_slice"]

_MAX_ENTRIES = 8
_lock = threading.Lock()
_vocabularies: OrderedDict[str, Any] = OrderedDict()
_slices: OrderedDict[str, Any] = OrderedDict()


def _shared(cache: OrderedDict[str, Any], key: str, build: Callable[[], Any]) -> Any:
    """``cache[key]``, built outside the lock on first use; the least recently used go first."""
    with _lock:
        hit = cache.get(key)
        if hit is not None:
            cache.move_to_end(key)
            return hit
    value = build()
    with _lock:
        value = cache.setdefault(key, value)
        while len(cache) > _MAX_ENTRIES:
            cache.popitem(last=False)
    return value


def native_vocabulary(vocab: Vocabulary) -> Any:
    """The shared ``_core.Vocabulary`` for ``vocab`` (built on first use)."""

    def build() -> Any:
        special = [1 if i in vocab.special_token_ids else 0 for i in range(vocab.size)]
        return _core.Vocabulary(list(vocab.tokens), special, list(vocab.eos_token_ids))

    return _shared(_vocabularies, vocab.fingerprint, build)


def string_slice(vocab: Vocabulary) -> Any:
    """The shared ``_core.TokenSlice`` of plain JSON-string text for ``vocab``.

    Terminal states inside a string admit all of it at once (see token_index.hpp), so a
    dense in-string mask is a bitset copy plus a walk over the few other tokens.
    """

    def build() -> Any:
        # JSON string content: any character but '"', '\\' and the C0 controls, complete UTF-8.
        text = Repeat(codepoints([(0x20, 0x21), (0x23, 0x5B), (0x5D, 0x10FFFF)]), 0, None)
        plain = _core.build_dfa(np.asarray(regex_program(text), dtype=np.int32), 1_000_000, 10_000)
        return _core.TokenSlice(native_vocabulary(vocab), plain)

    return _shared(_slices, vocab.fingerprint, build)
