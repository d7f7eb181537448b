"""MaskBench ratchet: coverage and exactness on a fixed slice of the dev split may only improve.

Every 24th schema of the dev split (sorted by name), compiled with ``property_order="any"``;
each test instance serialized with ``json.dumps(data, ensure_ascii=False)``, tokenized with
Llama-3, checked token by token and with EOS at the end (``bench/maskbench.py`` does the same
on the whole split, with mask timings). The recorded figures live in
``maskbench_baseline.json``: fewer compiled schemas, or any valid instance rejected / invalid
instance accepted beyond the recorded counts, fails the test. When a change improves them,
raise the baseline in the same commit.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.paths import DATASETS, TOKENIZERS

ROOT = Path(__file__).resolve().parents[2]
BASELINE = Path(__file__).with_name("maskbench_baseline.json")
STRIDE = 24


@pytest.fixture(scope="module")
def report():  # type: ignore[no-untyped-def]
    tokenizers = pytest.importorskip("tokenizers")
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import maskbench
    finally:
        sys.path.pop(0)
    import tokensieve as ts

    path = TOKENIZERS / "hf" / "llama3-128k.tokenizer.json"
    files = sorted((DATASETS / "maskbench" / "dev").glob("*.json"))[::STRIDE]
    assert len(files) > 140
    vocab = ts.Vocabulary.from_tokenizer_json(path)
    tokenizer = tokenizers.Tokenizer.from_file(str(path))
    return maskbench.run(files, vocab, tokenizer, masks=False)


def test_maskbench_ratchet(report) -> None:  # type: ignore[no-untyped-def]
    totals = report.totals()
    baseline = json.loads(BASELINE.read_text())
    summary = {
        k: totals[k]
        for k in (
            "schemas",
            "compiled",
            "valid_accepted",
            "valid_rejected",
            "invalid_rejected",
            "invalid_accepted",
        )
    }
    print(json.dumps(summary, indent=2))
    internal = [f for f in report.failures if f.startswith("internal error")]
    assert not internal, internal[:5]
    assert totals["compiled"] >= baseline["compiled"], summary
    assert totals["valid_rejected"] <= baseline["valid_rejected"], report.failures[:10]
    assert totals["invalid_accepted"] <= baseline["invalid_accepted"], report.failures[:10]
