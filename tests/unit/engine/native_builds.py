"""Recording the native automaton builds a compile asks for (``_core.build_dfa`` and
``_core.dfa_product``), to check what the terminal cache builds once. The cache is compiled
in the installed package, so it is observed at the native calls, not subclassed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from tokensieve import _core


@dataclass
class NativeBuilds:
    programs: list[tuple[bytes, int]] = field(default_factory=list)
    """``build_dfa`` calls: (program, state budget)."""
    products: list[tuple[Any, Any, int]] = field(default_factory=list)
    """``dfa_product`` calls: (left automaton, right automaton, state budget)."""


def record_native_builds(monkeypatch: pytest.MonkeyPatch) -> NativeBuilds:
    builds = NativeBuilds()
    build_dfa, dfa_product = _core.build_dfa, _core.dfa_product

    def recorded_build(words: Any, max_nfa_states: int, max_states: int) -> Any:
        builds.programs.append((bytes(words), max_states))
        return build_dfa(words, max_nfa_states, max_states)

    def recorded_product(left: Any, right: Any, op: str, max_states: int) -> Any:
        builds.products.append((left, right, max_states))
        return dfa_product(left, right, op, max_states)

    monkeypatch.setattr(_core, "build_dfa", recorded_build)
    monkeypatch.setattr(_core, "dfa_product", recorded_product)
    return builds
