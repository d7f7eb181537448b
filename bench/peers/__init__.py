"""Engine adapters, one module per engine, all behind :class:`bench.common.Engine`.

Each adapter is imported only inside the worker process that runs it, so a benchmark of one
engine never loads the others (and a crash in one native library cannot take down the run).
"""

from __future__ import annotations

import importlib
from typing import Any

# Engine name -> module in this package. The order is the default run order.
ENGINES: dict[str, str] = {
    "tokensieve": "tokensieve_engine",
    "llguidance": "llguidance_engine",
    "xgrammar": "xgrammar_engine",
    "outlines": "outlines_engine",
}


def load_engine(name: str) -> Any:
    """Import the adapter for ``name`` and build its engine for the Llama-3 vocabulary."""
    if name not in ENGINES:
        raise ValueError(f"unknown engine {name!r}; known: {', '.join(ENGINES)}")
    module = importlib.import_module(f"{__name__}.{ENGINES[name]}")
    return module.make_engine()
