"""Code point sets: normalization, complement, case folding and Unicode properties."""

from __future__ import annotations

import unicodedata

import pytest

from tokensieve.frontends import charsets


def _members(ranges: list[tuple[int, int]]) -> set[int]:
    return {cp for lo, hi in ranges for cp in range(lo, hi + 1)}


def test_normalize_and_complement() -> None:
    assert charsets.normalize([(5, 9), (0, 3), (4, 4), (8, 12)]) == [(0, 12)]
    assert charsets.complement([(0, 9), (20, 0x10FFFF)]) == [(10, 19)]
    assert charsets.complement([]) == [(0, 0x10FFFF)]


def test_case_closure_follows_simple_case_mappings() -> None:
    assert _members(charsets.case_closure([(ord("k"), ord("k"))])) == {ord("k"), ord("K"), 0x212A}
    assert _members(charsets.case_closure([(ord("é"), ord("é"))])) == {ord("é"), ord("É")}
    assert _members(charsets.case_closure([(ord("1"), ord("1"))])) == {ord("1")}
    big = charsets.case_closure([(ord("a"), ord("z")), (0x400, 0x4FF)])  # takes the large-set path
    assert ord("Q") in _members(big) and 0x212A in _members(big)


@pytest.mark.parametrize(
    ("name", "inside", "outside"),
    [
        ("L", "aΩ中", "1 -"),
        ("Lu", "AΩ", "aω"),
        ("Letter", "a", "1"),
        ("gc=Nd", "7٣", "a"),
        ("General_Category=Punctuation", "!-", "a"),
        ("Any", "a\n😀", ""),
        ("ASCII", "a~", "é"),
        ("LC", "aA", "中"),
    ],
)
def test_unicode_properties(name: str, inside: str, outside: str) -> None:
    members = _members(charsets.unicode_property(name) or [])
    assert all(ord(c) in members for c in inside)
    assert not any(ord(c) in members for c in outside)


def test_general_category_is_exact_on_a_sample() -> None:
    letters = _members(charsets.unicode_property("Lo") or [])
    for cp in range(0x3000, 0x3100):
        assert (cp in letters) == (unicodedata.category(chr(cp)) == "Lo")


def test_unsupported_properties() -> None:
    assert charsets.unicode_property("Greek") is None
    assert charsets.unicode_property("Script=Greek") is None
    assert charsets.unicode_property("Xx") is None
