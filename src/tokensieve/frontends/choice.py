"""Choice front-end: the output must be exactly one of a list of strings."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import EmptyLanguageError
from ..ir import Alt, Grammar, literal

__all__ = ["choice_grammar"]


def choice_grammar(options: Sequence[str]) -> Grammar:
    """A grammar (start rule ``root``) matching exactly one of ``options`` (UTF-8 encoded).

    Duplicates are merged; the empty string is a valid option. An empty list admits no
    output at all and raises :class:`EmptyLanguageError`.
    """
    if isinstance(options, (str, bytes)):
        raise TypeError("choice options must be a sequence of strings, not one string")
    for option in options:
        if not isinstance(option, str):
            raise TypeError(f"choice options must be strings, got {type(option).__name__}")
    if not options:
        raise EmptyLanguageError("a choice between no options matches nothing")
    # Deduplicate with a dict (linear) rather than ir.alt's pairwise check: choices can be long.
    unique = list(dict.fromkeys(literal(o) for o in options))
    body = unique[0] if len(unique) == 1 else Alt(tuple(unique))
    return Grammar({"root": body}, start="root")
