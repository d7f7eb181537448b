"""Ratchet: the JSON Schema Test Suite (draft 2020-12) judged through the oracle.

The counts of tests judged right may not drop below ``baselines.json``; when they rise,
raise the baseline in the same commit (``python -m conformance.json_schema_suite``
prints the figures). No instance may ever be wrongly accepted outside the formats this
front-end documents as inexact.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .json_schema_suite import run_suite, summarize

BASELINES = Path(__file__).with_name("baselines.json")


@pytest.fixture(scope="module")
def sums() -> dict:
    return summarize(run_suite())


def test_suite_does_not_regress(sums: dict) -> None:
    base = json.loads(BASELINES.read_text())["json_schema_suite"]
    assert sums["required"].right >= base["required_right"], "JSON Schema Test Suite (required) regressed"
    assert sums["all"].right >= base["all_right"], "JSON Schema Test Suite (with optional) regressed"


def test_no_false_accepts_in_required_tests(sums: dict) -> None:
    assert sums["required"].false_accepts == 0
