"""``Matcher``: the state of one sequence under a compiled grammar, and its token masks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _core
from .bitmask import bitmask_words
from .compiler import CompiledGrammar

__all__ = ["Matcher", "fill_bitmasks"]


class Matcher:
    """Tracks one output sequence; one matcher per sequence (not shared between threads).

    Every accepted token (or byte string) is one history entry, so :meth:`rollback` can undo
    any number of them, e.g. after a rejected speculative draft.
    """

    def __init__(self, grammar: CompiledGrammar, *, _native: Any = None) -> None:
        self.grammar = grammar
        self._m = _native if _native is not None else _core.Matcher(grammar._native)

    @property
    def vocab_size(self) -> int:
        return self.grammar.vocab.size

    def fill_bitmask(self, bitmask: Any, row: int = 0) -> None:
        """Write the allowed-token bits into row ``row`` of an int32 bitmask.

        ``bitmask`` comes from :func:`tokensieve.allocate_bitmask` (a C-contiguous int32
        numpy array or CPU torch tensor of shape ``(batch, ceil(vocab/32))`` or wider).
        Raises :class:`NoTokenAllowed` rather than returning an all-zero row, and the GIL is
        released while the mask is computed.
        """
        self._m.fill_mask(bitmask, row)

    def allowed_tokens(self) -> np.ndarray:
        """The allowed token ids as a sorted int array (convenient for tests and debugging)."""
        mask = np.zeros((1, bitmask_words(self.vocab_size)), dtype=np.int32)
        self._m.fill_mask(mask, 0)
        bits = np.unpackbits(mask.view(np.uint8), bitorder="little")[: self.vocab_size]
        return np.flatnonzero(bits)

    def accept_token(self, token_id: int) -> bool:
        """Advance by one token; ``False`` (state unchanged) when the token is not allowed.

        EOS is accepted only where the output is complete, and then terminates the matcher.
        """
        return bool(self._m.accept_token(int(token_id)))

    def accept_tokens(self, token_ids: Sequence[int]) -> int:
        """Accept tokens until one is rejected; returns how many were accepted."""
        for n, t in enumerate(token_ids):
            if not self._m.accept_token(int(t)):
                return n
        return len(token_ids)

    def accept_bytes(self, data: bytes | str) -> bool:
        """Advance by raw bytes (all or nothing; one history entry)."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        return bool(self._m.accept_bytes(bytes(data)))

    def is_accepting(self) -> bool:
        """The output so far is a complete sentence (EOS would be allowed)."""
        return bool(self._m.is_accepting())

    def is_terminated(self) -> bool:
        """EOS has been accepted."""
        return bool(self._m.is_terminated())

    def can_continue(self) -> bool:
        """More output (bytes or special tokens named by the grammar) may follow."""
        return bool(self._m.can_continue())

    def rollback(self, num_tokens: int = 1) -> None:
        """Undo the last ``num_tokens`` history entries (tokens or byte strings)."""
        if num_tokens < 0:
            raise ValueError("rollback needs a non-negative count")
        self._m.rollback(num_tokens)

    def jump_forward(self) -> bytes:
        """The bytes the grammar forces next (possibly empty); the state is unchanged."""
        return bytes(self._m.jump_forward())

    def reset(self) -> None:
        """Back to the start of the grammar."""
        self._m.reset()

    def fork(self) -> Matcher:
        """An independent copy (beam search, speculative decoding branches)."""
        return Matcher(self.grammar, _native=self._m.fork())

    @property
    def num_history(self) -> int:
        return int(self._m.num_history)


def fill_bitmasks(
    matchers: Sequence[Matcher],
    bitmask: Any,
    rows: Sequence[int] | None = None,
    *,
    num_threads: int | None = None,
) -> None:
    """Fill one bitmask row per matcher in parallel native threads (GIL released)."""
    if rows is None:
        rows = range(len(matchers))
    threads = num_threads or max(1, min(len(matchers), int(_core.hardware_threads()) or 1))
    _core.fill_masks_parallel([m._m for m in matchers], bitmask, [int(r) for r in rows], threads)
