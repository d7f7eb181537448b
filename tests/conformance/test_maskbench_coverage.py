"""Ratchet: MaskBench (dev) schemas the JSON Schema front-end converts, on a fixed subset.

Every 8th schema of ``maskbench/dev`` (sorted by file name) is converted with
``property_order="any"`` and with ``"declared"``; the number converted may not drop below
``baselines.json``, and for the converted schemas with tests, every valid instance must be
accepted and every invalid one rejected by the oracle (sampled: the oracle is slow). Objects
with more than ``MAX_ORACLE_UNORDERED_ITEMS`` properties in any order are beyond the oracle's
2^n expansion; those schemas are judged by the engine (on a one-byte-per-token vocabulary).
The full-set figures come from ``bench/maskbench_schemas.py`` (see docs/json_schema_results.md).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from tests.oracle import MAX_ORACLE_UNORDERED_ITEMS, Oracle
from tests.paths import DATASETS
from tokensieve.compiler import Compiler
from tokensieve.errors import UnsupportedSchemaError
from tokensieve.frontends.json_schema import json_schema_to_grammar
from tokensieve.ir import Alt, Difference, Grammar, Repeat, Seq, Unordered
from tokensieve.matcher import Matcher
from tokensieve.vocabulary import Vocabulary

BYTES = Vocabulary(
    [bytes([b]) for b in range(256)] + [b"<eos>"], eos_token_ids=[256], special_token_ids=[256]
)

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


def _too_big_for_oracle(grammar: Grammar) -> bool:
    seen: set[int] = set()
    todo = list(grammar.rules.values())
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, Unordered) and len(e.items) > MAX_ORACLE_UNORDERED_ITEMS:
            return True
        if isinstance(e, (Seq, Alt, Unordered)):
            todo.extend(e.items)
        if isinstance(e, Repeat):
            todo.append(e.item)
        if isinstance(e, Difference):
            todo += [e.left, e.right]
    return False


def _engine_complete(grammar: Grammar):  # type: ignore[no-untyped-def]
    compiled = Compiler(BYTES).grammar(grammar)

    def complete(text: bytes) -> bool:
        m = Matcher(compiled)
        return m.accept_bytes(text) and m.is_accepting()

    return complete


def test_subset_instances_exact() -> None:
    wrong = []
    by_engine = 0
    for f in FILES[::4]:
        doc = json.loads(f.read_text())
        grammar = _convert(doc["schema"], "any") if doc.get("tests") else None
        if grammar is None:
            continue
        if _too_big_for_oracle(grammar):
            complete = _engine_complete(grammar)
            by_engine += 1
        else:
            complete = Oracle(grammar).is_complete
        for t in doc["tests"]:
            text = json.dumps(t["data"], ensure_ascii=False).encode()
            if complete(text) != t["valid"]:
                wrong.append((f.name, t["valid"], text[:80]))
    assert not wrong
    assert by_engine < len(FILES[::4])  # the oracle still judges most schemas
