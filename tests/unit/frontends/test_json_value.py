"""Any-JSON grammar and the JSON lexical building blocks, checked through the oracle."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.oracle import Oracle
from tokensieve.errors import EmptyLanguageError
from tokensieve.frontends.choice import choice_grammar
from tokensieve.frontends.json_value import json_grammar, json_integer, json_number, json_string
from tokensieve.frontends.whitespace import WhitespacePolicy
from tokensieve.ir import Grammar, Ref

STRING_RE = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"', re.DOTALL)
NUMBER_RE = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
INTEGER_RE = re.compile(r"-?(?:0|[1-9][0-9]*)")

_ANY_JSON = Oracle(json_grammar())
_COMPACT_JSON = Oracle(json_grammar(WhitespacePolicy.compact()))
_STRING = Oracle(Grammar({"root": json_string()}))
_NUMBER = Oracle(Grammar({"root": json_number()}))
_INTEGER = Oracle(Grammar({"root": json_integer()}))

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=4), kids, max_size=3),
    max_leaves=6,
)


def _string_ok(data: bytes) -> bool:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return STRING_RE.fullmatch(text) is not None


@settings(max_examples=60, deadline=None)
@given(value=json_values)
def test_json_dumps_is_accepted_compact_and_indented(value: object) -> None:
    for text in (json.dumps(value), json.dumps(value, indent=2), json.dumps(value, ensure_ascii=False)):
        assert _ANY_JSON.is_complete(text.encode()), text
    compact = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
    assert _COMPACT_JSON.is_complete(compact)
    assert all(_COMPACT_JSON.is_viable_prefix(compact[:i]) for i in range(len(compact)))


@pytest.mark.parametrize(
    "text",
    [
        "[1,]", '{"a":1,}', "{'a': 1}", "01", "1.", ".5", "-", "+1", "1e", "NaN", "Infinity", "[1 2]",
        '{"a" 1}', '{"a":}', "[", "]", "tru", "nul", '"\\x41"', '"a\nb"', '"\\u12G4"', "{1: 2}", "[1]]",
        '"\\\'"', "1 2", "",
    ],
)  # fmt: skip
def test_broken_json_is_rejected(text: str) -> None:
    assert not _ANY_JSON.is_complete(text.encode())


def test_prefixes_of_broken_json_stop_being_viable_at_the_error() -> None:
    assert _ANY_JSON.is_viable_prefix(b'{"a": [1, 2')
    assert not _ANY_JSON.is_viable_prefix(b'{"a": [1, 2}')
    assert not _ANY_JSON.is_viable_prefix(b"[01")
    assert not _ANY_JSON.is_viable_prefix(b'"\xc3\x28')  # invalid UTF-8 continuation


def test_whitespace_is_bounded_by_the_policy() -> None:
    assert _ANY_JSON.is_complete(b'[1,    2]')
    assert not _ANY_JSON.is_viable_prefix(b'[1,     ')  # five blanks: more than max_inline=4
    assert _ANY_JSON.is_complete(b'[\r\n  1\n]')
    assert not _ANY_JSON.is_viable_prefix(b"[\n\n")  # one line break per run
    assert _ANY_JSON.is_complete(b" null ")
    assert not _COMPACT_JSON.is_viable_prefix(b"[1, ")
    assert Oracle(json_grammar(2)).is_complete(b"[1,  2]")
    assert not Oracle(json_grammar(2)).is_viable_prefix(b"[1,   ")


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=8))
def test_json_string_accepts_every_dumped_string(text: str) -> None:
    for dumped in (json.dumps(text), json.dumps(text, ensure_ascii=False)):
        assert _STRING.is_complete(dumped.encode())


_STRING_PIECES = [
    b"\\", b"u", b"a", b'"', b"0", b"F", b"g", b"n", b"/", b" ", b"\x00", b"\x1f", b"\x7f",
    b"\xe2\x82", b"\xac", b"\xed\xa0\x80", b"\xf4\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xc0\xaf",
]  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(body=st.binary(max_size=6) | st.lists(st.sampled_from(_STRING_PIECES), max_size=6).map(b"".join))
def test_json_string_is_exact_on_raw_bytes(body: bytes) -> None:
    data = b'"' + body + b'"'
    assert _STRING.is_complete(data) == _string_ok(data), data


def test_json_string_single_bytes_and_escapes() -> None:
    for byte in range(256):
        for data in (b'"' + bytes([byte]) + b'"', b'"\\' + bytes([byte]) + b'"'):
            assert _STRING.is_complete(data) == _string_ok(data), data


@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet="0123456789-+.eE", max_size=7))
def test_numbers_match_the_rfc_grammar(text: str) -> None:
    data = text.encode()
    assert _NUMBER.is_complete(data) == bool(NUMBER_RE.fullmatch(text)), text
    assert _INTEGER.is_complete(data) == bool(INTEGER_RE.fullmatch(text)), text


def test_building_blocks_are_regular() -> None:
    # The compiler can make each of them a single terminal only if no rule is referenced.
    def refs(expr: object) -> bool:
        if isinstance(expr, Ref):
            return True
        items = getattr(expr, "items", None) or ([expr.item] if hasattr(expr, "item") else [])
        return any(refs(i) for i in items)

    assert not any(refs(e) for e in (json_string(), json_number(), json_integer()))


def test_choice() -> None:
    oracle = Oracle(choice_grammar(["yes", "no", "", "yes", "naïve"]))
    for text in ["yes", "no", "", "naïve"]:
        assert oracle.is_complete(text.encode())
    assert not oracle.is_complete(b"ye")
    assert oracle.is_viable_prefix(b"na\xc3")
    assert not oracle.is_viable_prefix(b"yes!")
    with pytest.raises(EmptyLanguageError):
        choice_grammar([])
    with pytest.raises(TypeError):
        choice_grammar("yes")


def test_whitespace_policies_coerce_to_equal_policies() -> None:
    default = WhitespacePolicy.coerce(None)
    assert default == WhitespacePolicy() == WhitespacePolicy.coerce("default") == WhitespacePolicy.default()
    assert WhitespacePolicy.coerce(None) is default  # one shared immutable default
    assert WhitespacePolicy.coerce("compact") == WhitespacePolicy.compact()
    custom = WhitespacePolicy(max_inline=1, newlines=False, max_indent=0)
    assert WhitespacePolicy.coerce(custom) is custom
    assert WhitespacePolicy.coerce(2) == WhitespacePolicy(max_inline=2, newlines=True, max_indent=2)
    for bad in (True, -1, 1.5, "wide"):
        with pytest.raises((TypeError, ValueError)):
            WhitespacePolicy.coerce(bad)  # type: ignore[arg-type]
