"""Ratchet: MaskBench (dev) schemas the JSON Schema front-end converts, on a fixed subset.

Every 8th schema of ``maskbench/dev`` (sorted by file name) is converted with
``property_order="any"`` and with ``"declared"``; the number converted may not drop below
``baselines.json``, and for the converted schemas with tests, every valid instance must be
accepted and every invalid one rejected by the oracle (sampled: the oracle is slow).
The full-set figures come from ``bench/maskbench_schemas.py`` (see docs/json_schema_results.md).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from tests.oracle import Oracle
from tests.paths import DATASETS
from tokensieve.errors import UnsupportedSchemaError
from tokensieve.frontends.json_schema import json_schema_to_grammar

BASELINES = Path(__file__).with_name("baselines.json")
FILES = sorted((DATASETS / "maskbench" / "dev").glob("*.json"))[::8]


def _convert(schema: object, order: str):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            return json_schema_to_grammar(schema, property_order=order)  # type: ignore[arg-type]
        except UnsupportedSchemaError:  # includes UnsatisfiableSchemaError
            return None


@pytest.mark.parametrize("order", ["any", "declared"])
def test_subset_coverage_does_not_regress(order: str) -> None:
    if not FILES:
        pytest.skip("MaskBench data not found")
    base = json.loads(BASELINES.read_text())["maskbench_subset"]
    converted = sum(_convert(json.loads(f.read_text())["schema"], order) is not None for f in FILES)
    assert converted >= base[f"converted_{order}"], f"{converted} of {len(FILES)} converted ({order})"


def test_subset_instances_exact() -> None:
    wrong = []
    for f in FILES[::4]:
        doc = json.loads(f.read_text())
        grammar = _convert(doc["schema"], "any") if doc.get("tests") else None
        if grammar is None:
            continue
        oracle = Oracle(grammar)
        for t in doc["tests"]:
            text = json.dumps(t["data"], ensure_ascii=False).encode()
            if oracle.is_complete(text) != t["valid"]:
                wrong.append((f.name, t["valid"], text[:80]))
    assert not wrong
