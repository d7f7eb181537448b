"""The decode loop: forward pass, token mask, sample, accept, jump forward — for a batch of rows.

One step for every unfinished row:

1. the mask of the row's current matcher state is computed **on a worker thread** while
   the main thread runs the forward pass on the row's pending tokens. The two do not depend
   on each other: the mask depends on the tokens accepted so far, the forward pass consumes
   exactly those tokens. Mask computation in the engine releases the GIL, and so do
   torch's kernels, so they truly run side by side;
2. the mask is applied to the logits and the next token sampled;
3. the matcher accepts it; if the grammar now forces bytes, they are appended as canonical
   tokens (see :mod:`.forcing`), and all the row's new tokens go into the next forward pass.

A row stops on EOS (only allowed where the grammar accepts), when the grammar allows
nothing but EOS (no forward pass is spent to ask), or at ``max_tokens``.
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..bitmask import allocate_bitmask, apply_bitmask, is_torch_tensor
from ..errors import MatcherStateError
from ..matcher import fill_bitmasks
from .backends import Backend
from .result import StopReason, Timings
from .sampling import SamplingParams, sample

__all__ = ["DecodeOptions", "RowOutput", "decode"]


@dataclass(frozen=True)
class DecodeOptions:
    """Settings of one decode call. ``max_tokens`` counts completion tokens (EOS excluded)."""

    max_tokens: int = 256
    sampling: SamplingParams = field(default_factory=SamplingParams)
    jump_forward: bool = True
    overlap: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            raise ValueError(f"max_tokens must be an int >= 1, got {self.max_tokens!r}")


@dataclass
class RowOutput:
    """What one row produced: completion tokens (EOS excluded) and why it stopped."""

    tokens: list[int] = field(default_factory=list)
    stop_reason: StopReason | None = None
    jump_forward_tokens: int = 0


@dataclass
class _Row:
    matcher: Any | None
    pending: list[int]  # accepted by the matcher, not yet fed to the model
    out: RowOutput = field(default_factory=RowOutput)

    @property
    def done(self) -> bool:
        return self.out.stop_reason is not None


def decode(
    backend: Backend,
    prompts: list[list[int]],
    matchers: list[Any | None],
    options: DecodeOptions,
) -> tuple[list[RowOutput], Timings]:
    """Generate one completion per prompt; ``matchers[i]`` constrains row ``i`` (``None``: free).

    Matchers must be fresh (nothing accepted) and are advanced in place. Returns each row's
    output and the timings of the whole batch.
    """
    if len(prompts) != len(matchers):
        raise ValueError(f"{len(prompts)} prompts but {len(matchers)} matchers")
    if not prompts or any(not p for p in prompts):
        raise ValueError("every prompt needs at least one token")
    return _Decoder(backend, prompts, matchers, options).run()


class _Decoder:
    def __init__(
        self, backend: Backend, prompts: list[list[int]], matchers: list[Any | None], options: DecodeOptions
    ):
        self.backend = backend
        self.options = options
        vocab = backend.vocabulary
        self.vocab_size: int = vocab.size
        self.eos_ids = frozenset(int(t) for t in vocab.eos_token_ids)
        self.rows = [_Row(m, list(p)) for p, m in zip(prompts, matchers, strict=True)]
        self.bitmask = allocate_bitmask(len(prompts), self.vocab_size)
        self.rng = options.sampling.rng()
        self.timings = Timings()
        self.forcer = backend.forcer if options.jump_forward else None

    # ------------------------------------------------------------------ driver

    def run(self) -> tuple[list[RowOutput], Timings]:
        start = time.perf_counter()
        constrained = any(r.matcher is not None for r in self.rows)
        executor = (
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="tokensieve-mask")
            if self.options.overlap and constrained
            else None
        )
        session = self.backend.start(len(self.rows))
        try:
            for row in self.rows:
                self._jump_forward(row, sampled=None)  # forced bytes at the very start
                self._check_length(row)
            while True:
                active = [i for i, r in enumerate(self.rows) if not r.done]
                active = self._finish_complete_rows(active)
                if not active:
                    break
                self._step(session, active, executor)
        finally:
            session.close()
            if executor is not None:
                executor.shutdown(wait=True)
        self.timings.total_s = time.perf_counter() - start
        return [r.out for r in self.rows], self.timings

    def _step(self, session: Any, active: list[int], executor: ThreadPoolExecutor | None) -> None:
        to_mask = [i for i in active if self.rows[i].matcher is not None]
        pending: Future[float] | None = None
        if executor is not None and to_mask:
            pending = executor.submit(self._fill_masks, to_mask)

        t0 = time.perf_counter()
        logits = session.forward([self.rows[i].pending if i in active else [] for i in range(len(self.rows))])
        # On a GPU, forward() returns once the kernels are queued; copying the logits to the host
        # waits for them, so forward_s and the overlap figures measure the real forward pass.
        scores = _to_numpy(logits)
        t1 = time.perf_counter()
        self.timings.forward_s += t1 - t0
        if self.timings.forward_passes == 0:
            self.timings.prefill_s = t1 - t0
        self.timings.forward_passes += 1

        if pending is not None:
            self.timings.mask_s += pending.result()
            self.timings.mask_wait_s += time.perf_counter() - t1
        elif to_mask:
            spent = self._fill_masks(to_mask)
            self.timings.mask_s += spent
            self.timings.mask_wait_s += spent

        t2 = time.perf_counter()
        scores[:, self.vocab_size :] = -np.inf  # padding columns are never tokens
        for i in active:
            row = self.rows[i]
            if row.matcher is not None:
                apply_bitmask(scores[i], self.bitmask[i], vocab_size=self.vocab_size)
            self._advance(row, sample(scores[i], self.options.sampling, self.rng))
        self.timings.sample_s += time.perf_counter() - t2

    # ------------------------------------------------------------------ masks

    def _fill_masks(self, rows: list[int]) -> float:
        """Fill the bitmask rows of ``rows``; returns the seconds spent (runs on the worker)."""
        t0 = time.perf_counter()
        matchers: list[Any] = [self.rows[i].matcher for i in rows]  # all constrained rows
        if len(rows) == 1:
            matchers[0].fill_bitmask(self.bitmask, row=rows[0])
        else:
            fill_bitmasks(matchers, self.bitmask, rows)  # rows in parallel native threads
        return time.perf_counter() - t0

    def _finish_complete_rows(self, active: list[int]) -> list[int]:
        """Stop rows whose grammar allows nothing but EOS, without a forward pass for them."""
        still = []
        for i in active:
            matcher = self.rows[i].matcher
            if matcher is not None and matcher.is_accepting() and not matcher.can_continue():
                self.rows[i].out.stop_reason = "complete"
            else:
                still.append(i)
        return still

    # ------------------------------------------------------------------ tokens

    def _advance(self, row: _Row, token: int) -> None:
        """Accept a sampled token, jump forward, and queue the new tokens for the model."""
        if row.matcher is not None and not row.matcher.accept_token(token):
            raise MatcherStateError(f"the matcher rejected token {token}, which its own mask allowed")
        if token in self.eos_ids:
            row.pending = []
            row.out.stop_reason = "eos"
            return
        row.out.tokens.append(token)
        row.pending = [token]
        self._jump_forward(row, sampled=token)
        self._check_length(row)

    def _jump_forward(self, row: _Row, sampled: int | None) -> None:
        if self.forcer is None or row.matcher is None:
            return
        budget = self.options.max_tokens - len(row.out.tokens) + (0 if sampled is None else 1)
        if budget <= 0:
            return
        forced = row.matcher.jump_forward()
        if not forced:
            return
        tokens = self.forcer.extend(row.matcher, sampled, forced, budget)
        if tokens is None:
            return
        if sampled is not None:
            row.out.tokens.pop()
            row.pending.pop()
        row.out.tokens.extend(tokens)
        row.pending.extend(tokens)
        row.out.jump_forward_tokens += len(tokens) - (0 if sampled is None else 1)

    def _check_length(self, row: _Row) -> None:
        if len(row.out.tokens) >= self.options.max_tokens:
            complete = row.matcher is None or row.matcher.is_accepting()
            row.out.stop_reason = "max_tokens" if complete else "truncated"


def _to_numpy(logits: Any) -> np.ndarray:
    """Logits as a float32 numpy array of shape (batch, width) (a copy we may write into)."""
    if is_torch_tensor(logits):
        logits = logits.detach().float().cpu().numpy()
    return np.array(logits, dtype=np.float32, copy=True, ndmin=2)
