"""Jump-forward: append the bytes a grammar forces, as canonical tokens, without a forward pass each.

When the grammar admits exactly one continuation for the next bytes (``{"name": "`` after
the model opened an object of a schema whose first property is required, say), sampling
those bytes one token at a time wastes forward passes. :meth:`Forcer.extend` turns them
into tokens at once. Two details keep the output what the model would have written:

- **Canonical tokens.** The model saw text tokenized by its tokenizer during training, so
  the forced bytes are tokenized *together with the token just sampled* (a forced ``"``
  may merge with it), not glued on as separate pieces.
- **An open boundary.** If the last forced token could still grow into a longer token
  the grammar allows (``"`` followed by the model's ``Bob`` would be one token ``"Bob``),
  it is left out: the model picks that token itself at the next step, masked as usual.

The sampled token has not been fed to the model yet, so replacing it costs no KV-cache
rollback: only the matcher rolls back one entry.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..bitmask import allocate_bitmask, unpack_bitmask

__all__ = ["Forcer", "TokenExtensions"]


class TokenExtensions:
    """For any token, the ids of the strictly longer tokens that start with its bytes.

    Built once per vocabulary from the sorted token byte strings; a query is two binary
    searches. Tokens with no bytes (special tokens) are left out.
    """

    def __init__(self, token_bytes: Sequence[bytes]):
        self._token_bytes = token_bytes
        order = sorted((b, i) for i, b in enumerate(token_bytes) if b)
        self._sorted = [b for b, _ in order]
        self._ids = np.fromiter((i for _, i in order), dtype=np.int64, count=len(order))

    def longer(self, token_id: int) -> np.ndarray:
        """Ids of tokens whose bytes extend ``token_id``'s bytes (never ``token_id`` itself)."""
        prefix = self._token_bytes[token_id]
        if not prefix:
            return self._ids[:0]
        lo = bisect_left(self._sorted, prefix)
        upper = _prefix_successor(prefix)
        hi = len(self._sorted) if upper is None else bisect_left(self._sorted, upper)
        # Entries equal to the prefix sort first within [lo, hi); skip them.
        while lo < hi and self._sorted[lo] == prefix:
            lo += 1
        return self._ids[lo:hi]


def _prefix_successor(prefix: bytes) -> bytes | None:
    """The smallest byte string greater than every string starting with ``prefix``."""
    trimmed = prefix.rstrip(b"\xff")
    if not trimmed:
        return None
    return trimmed[:-1] + bytes([trimmed[-1] + 1])


class Forcer:
    """Turns forced bytes into tokens for one vocabulary (see the module docstring).

    ``token_bytes(id)`` gives a token's exact bytes and ``encode(text)`` tokenizes plain text
    canonically without adding special tokens.
    """

    def __init__(
        self,
        token_bytes: Callable[[int], bytes],
        encode: Callable[[str], list[int]],
        extensions: TokenExtensions,
        vocab_size: int,
    ):
        self._token_bytes = token_bytes
        self._encode = encode
        self._extensions = extensions
        self._scratch = allocate_bitmask(1, vocab_size)
        self._vocab_size = vocab_size

    def extend(self, matcher: Any, sampled: int | None, forced: bytes, budget: int) -> list[int] | None:
        """Replace ``sampled`` (already accepted by ``matcher``) by tokens covering it plus ``forced``.

        ``sampled`` is ``None`` at the very start, before any token. ``budget`` caps the number
        of tokens returned. Returns the tokens (all accepted by ``matcher``) or ``None`` when
        jump-forward gains nothing here; then the matcher is exactly as it was.
        """
        prefix = b"" if sampled is None else self._token_bytes(sampled)
        text = _decodable(prefix, forced)
        if text is None:
            return None
        ids = self._encode(text)
        if b"".join(self._token_bytes(t) for t in ids) != text.encode("utf-8"):
            return None  # the tokenizer normalizes this text: no exact retokenization exists
        ids = ids[:budget]

        keep_sampled = sampled is not None and bool(ids) and ids[0] == sampled
        if sampled is not None and not keep_sampled:
            matcher.rollback(1)
        fresh = ids[1:] if keep_sampled else ids
        accepted: list[int] = []
        for token in fresh:
            if not matcher.accept_token(token):
                break
            accepted.append(token)
        if accepted and self._boundary_is_open(matcher, accepted[-1]):
            matcher.rollback(1)
            accepted.pop()

        kept = [sampled] if keep_sampled and sampled is not None else []
        result = kept + accepted
        if sum(len(self._token_bytes(t)) for t in result) <= len(prefix):
            # Nothing gained: put the matcher back to "sampled accepted".
            matcher.rollback(len(accepted))
            if sampled is not None and not keep_sampled:
                matcher.accept_token(sampled)
            return None
        return result

    def _boundary_is_open(self, matcher: Any, last: int) -> bool:
        """Could the grammar, instead of ``last``, take a longer token starting with its bytes?"""
        longer = self._extensions.longer(last)
        if longer.size == 0:
            return False
        matcher.rollback(1)
        try:
            matcher.fill_bitmask(self._scratch, row=0)
            allowed = unpack_bitmask(self._scratch, self._vocab_size)[0]
            return bool(allowed[longer[longer < self._vocab_size]].any())
        finally:
            matcher.accept_token(last)


def _decodable(prefix: bytes, forced: bytes) -> str | None:
    """``prefix + forced`` as text, cutting ``forced`` at its last complete character.

    ``None`` when that leaves nothing past ``prefix`` or the bytes are not UTF-8.
    """
    data = prefix + forced
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        if err.end != len(data) or err.start <= len(prefix):
            return None  # invalid in the middle, or no complete forced character at all
        try:
            return data[: err.start].decode("utf-8")
        except UnicodeDecodeError:
            return None
