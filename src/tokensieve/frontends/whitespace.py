"""The whitespace policy shared by the JSON front-ends (any-JSON and JSON Schema).

JSON allows any amount of whitespace between tokens; a model that starts emitting
spaces could go on forever. Every policy here bounds each whitespace run, so endless
whitespace is impossible, while the default still accepts both ``json.dumps(x)``
(``", "`` and ``": "`` separators) and ``json.dumps(x, indent=2)`` output.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from ..ir import EMPTY, Bytes, Expr, Repeat, alt, literal, optional, seq

__all__ = ["WhitespacePolicy", "whitespace_expr"]

_BLANK: Final = Bytes(((0x09, 0x09), (0x20, 0x20)))  # tab, space


@dataclass(frozen=True)
class WhitespacePolicy:
    """How much whitespace may appear between JSON tokens.

    - ``max_inline``: longest run of spaces/tabs on one line (0 forbids them);
    - ``newlines``: whether one line break (``\\n`` or ``\\r\\n``) may start a run;
    - ``max_indent``: longest run of spaces/tabs after that line break.

    ``WhitespacePolicy.compact()`` allows none at all.
    """

    max_inline: int = 4
    newlines: bool = True
    max_indent: int = 64

    # Written out, with the dataclass's meaning: its generated methods stay plain Python when
    # compiled, and policies are compared and hashed in every compile's cache keys.
    def __eq__(self, other: object) -> bool:
        if type(other) is not WhitespacePolicy:
            return NotImplemented
        return (self.max_inline, self.newlines, self.max_indent) == (
            other.max_inline,
            other.newlines,
            other.max_indent,
        )

    def __hash__(self) -> int:
        return hash((self.max_inline, self.newlines, self.max_indent))

    @staticmethod
    def default() -> WhitespacePolicy:
        return _DEFAULT_POLICY

    @staticmethod
    def compact() -> WhitespacePolicy:
        return WhitespacePolicy(max_inline=0, newlines=False, max_indent=0)

    @staticmethod
    def coerce(value: WhitespacePolicy | str | int | None) -> WhitespacePolicy:
        """Accept a policy, ``"default"``, ``"compact"``, or an int (the longest run)."""
        if isinstance(value, WhitespacePolicy):  # first: the front-end coerces the compiler's policy again
            return value
        if value is None or value == "default":
            return _DEFAULT_POLICY  # shared: policies are immutable, and every compile asks
        if value == "compact":
            return WhitespacePolicy.compact()
        if isinstance(value, bool):
            raise TypeError("whitespace must be a WhitespacePolicy, 'default', 'compact' or an int")
        if isinstance(value, int):
            if value < 0:
                raise ValueError("whitespace bound must be >= 0")
            return WhitespacePolicy(max_inline=value, newlines=value > 0, max_indent=value)
        raise TypeError("whitespace must be a WhitespacePolicy, 'default', 'compact' or an int")

    def key(self) -> tuple[int, bool, int]:
        """A hashable description, part of compiled-grammar cache keys."""
        return (self.max_inline, self.newlines, self.max_indent)


_DEFAULT_POLICY: Final = WhitespacePolicy()


@lru_cache(maxsize=64)
def whitespace_expr(policy: WhitespacePolicy) -> Expr:
    """One optional whitespace run allowed by ``policy`` (matches the empty string).

    Remembered per policy: whitespace sits between every two JSON tokens of every schema,
    and one shared node means the compiler analyses it once per process, not per grammar."""
    options: list[Expr] = []
    if policy.max_inline > 0:
        options.append(Repeat(_BLANK, 1, policy.max_inline))
    if policy.newlines:
        indent = Repeat(_BLANK, 0, policy.max_indent) if policy.max_indent > 0 else EMPTY
        options.append(seq(optional(literal("\r")), literal("\n"), indent))
    return optional(alt(*options)) if options else EMPTY
