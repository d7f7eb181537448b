"""What a generation returns: the text, its parsed value, why it stopped, and where the time went."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["GenerationResult", "StopReason", "Timings", "ToolCall"]

StopReason = Literal["eos", "complete", "max_tokens", "truncated"]
"""Why a sequence stopped:

- ``"eos"``: the model chose an end-of-sequence token (only allowed where the grammar accepts);
- ``"complete"``: the grammar allowed nothing but EOS, so generation stopped without asking the model;
- ``"max_tokens"``: ``max_tokens`` was reached and the output is complete (or unconstrained);
- ``"truncated"``: ``max_tokens`` was reached before the grammar accepted the output.
"""


@dataclass
class Timings:
    """Wall-clock seconds spent in each part of one generation call (shared by a batch's rows).

    ``mask_s`` is the time spent computing token masks (on the worker thread when masks
    overlap the forward pass); ``mask_wait_s`` is the part of it the main thread actually
    waited for after the forward pass finished. ``overlap`` is the fraction of mask time
    hidden behind the forward pass.
    """

    total_s: float = 0.0
    prefill_s: float = 0.0
    forward_s: float = 0.0
    mask_s: float = 0.0
    mask_wait_s: float = 0.0
    sample_s: float = 0.0
    forward_passes: int = 0

    @property
    def overlap(self) -> float:
        """Fraction of mask computation hidden behind forward passes (1.0 = fully hidden)."""
        if self.mask_s <= 0.0:
            return 0.0
        return max(0.0, 1.0 - self.mask_wait_s / self.mask_s)


@dataclass(frozen=True)
class ToolCall:
    """One call chosen by the model: the tool's ``name`` and its parsed ``arguments``."""

    name: str
    arguments: dict[str, Any]


@dataclass
class GenerationResult:
    """The outcome of one sequence of :func:`tokensieve.generate`.

    ``value`` is the parsed output when the constraint produces JSON (a schema, any JSON,
    tool calls), else ``None``. ``validation_errors`` lists the messages of
    :func:`tokensieve.validate` for a schema (or each tool's argument schema); the grammar
    guarantees the shape, validation double-checks the semantics it cannot express.
    """

    text: str
    token_ids: list[int]
    stop_reason: StopReason
    prompt_tokens: int
    timings: Timings
    value: Any = None
    tool_calls: list[ToolCall] | None = None
    validation_errors: list[str] = field(default_factory=list)
    jump_forward_tokens: int = 0
    """Tokens appended from grammar-forced bytes, each without a forward pass of its own."""

    @property
    def completion_tokens(self) -> int:
        return len(self.token_ids)

    @property
    def valid(self) -> bool:
        """The output is complete and passed validation."""
        return self.stop_reason != "truncated" and not self.validation_errors

    @property
    def tokens_per_s(self) -> float:
        """Completion tokens per second over the whole call (prefill included)."""
        return self.completion_tokens / self.timings.total_s if self.timings.total_s > 0 else 0.0
