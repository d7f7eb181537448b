"""``format: uri-template``: RFC 6570 syntax (level 4), checked against a small parser."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tokensieve.frontends.json_schema.automata import DFA, dfa_from_expr
from tokensieve.frontends.json_schema.formats import format_language
from tokensieve.ir import Automaton

from .helpers import check

_DFA = dfa_from_expr(format_language("uri-template"))  # type: ignore[arg-type]


def dfa_accepts(dfa: DFA, text: str) -> bool:
    """Whether the byte automaton accepts the UTF-8 encoding of ``text``."""
    state = 0
    for byte in text.encode():
        for lo, hi, target in dfa.trans[state]:
            if lo <= byte <= hi:
                state = target
                break
        else:
            return False
    return dfa.accept[state]


# -- an independent reference: RFC 6570 section 2, read character by character ----------

_PCT = re.compile(r"%[0-9A-Fa-f]{2}")
_OPERATORS = "+#./;?&"


def _literal_ok(ch: str) -> bool:
    cp = ord(ch)
    if cp < 0x80:  # %x21 / %x23-24 / %x26-3B / %x3D / %x3F-5B / %x5D / %x5F / %x61-7A / %x7E
        return ch in "!#$=]_~" or 0x26 <= cp <= 0x3B or 0x3F <= cp <= 0x5B or 0x61 <= cp <= 0x7A
    ucschar = (
        0xA0 <= cp <= 0xD7FF
        or 0xF900 <= cp <= 0xFDCF
        or 0xFDF0 <= cp <= 0xFFEF
        or (0x10000 <= cp <= 0xEFFFD and (cp & 0xFFFF) <= 0xFFFD and not 0xE0000 <= cp <= 0xE0FFF)
    )
    iprivate = 0xE000 <= cp <= 0xF8FF or 0xF0000 <= cp <= 0xFFFFD or 0x100000 <= cp <= 0x10FFFD
    return ucschar or iprivate


def _varspec_ok(spec: str) -> bool:
    name, modifier = spec, ""
    if spec.endswith("*"):
        name, modifier = spec[:-1], "*"
    elif ":" in spec:
        name, modifier = spec.split(":", 1)
        if not re.fullmatch(r"[1-9][0-9]{0,3}", modifier):
            return False
    if not name or name.startswith(".") or name.endswith(".") or ".." in name:
        return False
    rest = _PCT.sub("", name.replace(".", ""))
    return all(c.isascii() and (c.isalnum() or c == "_") for c in rest) and "%" not in rest


def reference_is_uri_template(text: str) -> bool:
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "{":
            end = text.find("}", i)
            if end < 0:
                return False
            body = text[i + 1 : end]
            if body[:1] in _OPERATORS and body:
                body = body[1:]
            if "{" in body or not all(_varspec_ok(v) for v in body.split(",")):
                return False
            i = end + 1
        elif ch == "%":
            if not _PCT.match(text, i):
                return False
            i += 3
        elif _literal_ok(ch):
            i += 1
        else:
            return False
    return True


def test_rfc_6570_examples() -> None:
    valid = [
        "{var}",
        "{+path}/here",
        "{#x,hello,y}",
        "X{.list*}",
        "{/var:1,var}",
        "{;x,y,empty}",
        "{?x,y}",
        "?fixed=yes{&x}",
        "{var:30}",
        "{keys*}",
        "http://www.example.com/foo{?query,number}",
        "{/list*,path:4}",
        "http://example.com/~{username}/",
        "{a.b_c%41}",
        "a'b",
        "",
    ]
    invalid = [
        "{}",
        "{var",
        "var}",
        "{=var}",
        "{|x}",
        "{var:0}",
        "{var:10000}",
        "{a..b}",
        "{.}",
        "a b",
        "%4g",
        "<>",
    ]
    for text in valid:
        assert dfa_accepts(_DFA, text), text
        assert reference_is_uri_template(text), text
    for text in invalid:
        assert not dfa_accepts(_DFA, text), text
        assert not reference_is_uri_template(text), text


def test_given_as_a_small_automaton() -> None:
    # As an expression, the compiler would cut it into thousands of terminals (the JSON
    # escapes of its astral-plane classes), and masks would exceed max_mask_work.
    lang = format_language("uri-template")
    assert isinstance(lang, Automaton) and len(lang.states) < 200


def test_as_a_json_schema_format() -> None:
    check(
        {"type": "string", "format": "uri-template"},
        ["http://example.com/dictionary/{term:1}/{term}", "a%41b", "a😀b"],
        ["{a,,b}", "{v:01}", "foo}bar", "{var=def}", "{,+var}", "a\x7fb"],
    )


_ALPHABET = st.sampled_from(list("{}{}+#./;?&=,!@|:*%%0129aAfFg_-'\" \x7fé😀") + ["\ue000", "\ufffe"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_ALPHABET, max_size=12).map("".join))
def test_agrees_with_the_reference_parser(text: str) -> None:
    assert dfa_accepts(_DFA, text) == reference_is_uri_template(text)
