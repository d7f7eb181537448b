"""Where the shared test data lives (next to the repository, as in CI)."""

from __future__ import annotations

import os
from pathlib import Path

SHARED = Path(os.environ.get("TOKENSIEVE_SHARED", Path(__file__).resolve().parents[2] / "shared"))
TOKENIZERS = SHARED / "tokenizers"
DATASETS = SHARED / "datasets"
