"""The native (C++) twin of a :class:`~tokensieve.Vocabulary`: token bytes and the token trie.

Building the trie for a 128k vocabulary takes tens of milliseconds, so one native
vocabulary is kept per fingerprint and shared by every grammar compiled for it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from .. import _core
from ..vocabulary import Vocabulary

__all__ = ["native_vocabulary"]

_MAX_ENTRIES = 8
_lock = threading.Lock()
_cache: OrderedDict[str, Any] = OrderedDict()


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
