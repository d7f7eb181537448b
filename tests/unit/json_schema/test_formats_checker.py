"""Formats against ``jsonschema``'s draft 2020-12 format checker, the reference of
``ts.validate``: a grammar may never accept what the checker rejects, and where the checker
implements the same RFC (``ipv4``, ``ipv6``, ``date``) the two agree exactly.

Checkers ``jsonschema`` only has with optional packages (``hostname``, ``uri``,
``date-time``, ``uri-template``...) accept every string when those are missing; the
grammars then follow the RFCs and the JSON Schema Test Suite.
"""

from __future__ import annotations

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokensieve.frontends.json_schema.automata import DFA, dfa_from_expr
from tokensieve.frontends.json_schema.formats import format_language

from .test_formats_uri_template import dfa_accepts

CHECKER = jsonschema.Draft202012Validator.FORMAT_CHECKER

# Per format: characters to draw from and valid seeds to mutate.
_CASES = {
    "ipv4": ("0123456789.", ["192.168.0.1", "0.0.0.0", "255.255.255.255"]),
    "ipv6": ("0123456789abcdefABCDEF:.%", ["::1", "1:2:3:4:5:6:7:8", "::ffff:1.2.3.4", "fe80::1:2"]),
    "date": ("0123456789-", ["2020-02-29", "1999-12-31", "2021-02-28"]),
    "uuid": ("0123456789abcdefABCDEF-", ["123e4567-e89b-12d3-a456-426614174000"]),
    "email": ('ab@."\\ -[]:1', ["a@b.c", '"x y"@[1.2.3.4]']),
    "idn-email": ('ab@."\\ -[]:1é', ["é@b.c", "a.b@例え.jp"]),
}
_EXACT = {"ipv4", "ipv6", "date"}
_DFAS: dict[str, DFA] = {}


def _dfa(name: str) -> DFA:
    if name not in _DFAS:
        _DFAS[name] = dfa_from_expr(format_language(name))  # type: ignore[arg-type]
    return _DFAS[name]


def _conforms(text: str, name: str) -> bool:
    """The checker's verdict, except that RFC 3339 year 0000 (which Python's ``date`` cannot
    represent) is judged as year 2000: both are leap years of the proleptic calendar."""
    if name == "date" and text.startswith("0000-"):
        text = "2000" + text[4:]
    return bool(CHECKER.conforms(text, name))


@st.composite
def _candidates(draw: st.DrawFn, name: str) -> str:
    chars, seeds = _CASES[name]
    if draw(st.booleans()):
        return "".join(draw(st.lists(st.sampled_from(chars), max_size=14)))
    text = list(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 3))):  # a few edits of a valid value
        pos = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["replace", "insert", "delete"]))
        if op == "insert" or not text:
            text.insert(pos, draw(st.sampled_from(chars)))
        elif op == "replace":
            text[min(pos, len(text) - 1)] = draw(st.sampled_from(chars))
        else:
            del text[min(pos, len(text) - 1)]
    return "".join(text)


@pytest.mark.parametrize("name", sorted(_CASES))
def test_seeds_are_valid_for_both(name: str) -> None:
    for seed in _CASES[name][1]:
        assert _conforms(seed, name) and dfa_accepts(_dfa(name), seed), seed


@pytest.mark.parametrize("name", sorted(_CASES))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_never_looser_than_the_checker(name: str, data: st.DataObject) -> None:
    text = data.draw(_candidates(name))
    accepted = dfa_accepts(_dfa(name), text)
    if accepted:
        assert _conforms(text, name), text
    if name in _EXACT:
        assert accepted == _conforms(text, name), text
