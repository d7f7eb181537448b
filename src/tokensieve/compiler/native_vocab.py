"""The native (C++) twin of a :class:`~tokensieve.Vocabulary`: token bytes and the token trie.

Building the trie for a 128k vocabulary takes tens of milliseconds, so one native
vocabulary is kept per fingerprint and shared by every grammar compiled for it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from .. import _core
from ..ir import Repeat, codepoints
from ..vocabulary import Vocabulary
from .lower import regex_program

__all__ = ["native_vocabulary", "string_slice"]

_MAX_ENTRIES = 8
_lock = threading.Lock()
_cache: OrderedDict[str, Any] = OrderedDict()
_slices: OrderedDict[str, Any] = OrderedDict()

# JSON string content: any character but '"', '\\' and the C0 controls, as complete UTF-8.
_PLAIN_STRING_TEXT = Repeat(codepoints([(0x20, 0x21), (0x23, 0x5B), (0x5D, 0x10FFFF)]), 0, None)


def native_vocabulary(vocab: Vocabulary) -> Any:
    """The shared ``_core.Vocabulary`` for ``vocab`` (built on first use)."""
    key = vocab.fingerprint
    with _lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    special = [1 if i in vocab.special_token_ids else 0 for i in range(vocab.size)]
    native = _core.Vocabulary(list(vocab.tokens), special, list(vocab.eos_token_ids))
    with _lock:
        _cache[key] = native
        while len(_cache) > _MAX_ENTRIES:
            _cache.popitem(last=False)
    return native


def string_slice(vocab: Vocabulary) -> Any:
    """The shared ``_core.TokenSlice`` of plain JSON-string text for ``vocab``.

    Terminal states inside a string admit all of it at once (see token_index.hpp), so a
    dense in-string mask is a bitset copy plus a walk over the few other tokens.
    """
    key = vocab.fingerprint
    with _lock:
        hit = _slices.get(key)
        if hit is not None:
            _slices.move_to_end(key)
            return hit
    program = np.asarray(regex_program(_PLAIN_STRING_TEXT), dtype=np.int32)
    plain = _core.build_dfa(program, 1_000_000, 10_000)
    native = _core.TokenSlice(native_vocabulary(vocab), plain)
    with _lock:
        _slices[key] = native
        while len(_slices) > _MAX_ENTRIES:
            _slices.popitem(last=False)
    return native
