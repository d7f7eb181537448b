"""``format: idn-hostname``: a sound subset of what ``idna.encode`` (jsonschema's checker)
accepts, exact on ASCII labels and on short U-labels of the supported scripts."""

from __future__ import annotations

import random

import idna
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tokensieve.frontends.json_schema import formats_idna
from tokensieve.frontends.json_schema.automata import dfa_from_expr
from tokensieve.frontends.json_schema.formats import format_language

from .helpers import check
from .test_formats_uri_template import dfa_accepts

_DFA = dfa_from_expr(format_language("idn-hostname"))  # type: ignore[arg-type]
_DOTS = ".\u3002\uff0e\uff61"


def idna_accepts(name: str) -> bool:
    """jsonschema's idn-hostname check."""
    try:
        idna.encode(name)
    except (idna.IDNAError, UnicodeError):
        return False
    return True


def _labels(name: str) -> list[str]:
    for dot in _DOTS[1:]:
        name = name.replace(dot, ".")
    return name.split(".")


def test_json_schema_test_suite_style_examples() -> None:
    valid = ["실례.테스트", "hostname", "Host-Name.example", "1host", "a\u3002b", "a\uff0eb", "a\uff61b"]
    valid += ["münchen.de", "straße", "ελλάδα", "пример.рф", "例え.テスト", "ぁ-ァ", "a" * 63]
    invalid = ["", ".", "a..b", ".example", "example.", "example\u3002", "-hello", "hello-", "ab--c"]
    invalid += ["a" * 64, "ü" * 58, "xn--X", "xn--ihqwcrb4cv8a8dqg056pqjye", "\u0300hello", "\u302e실례"]
    invalid += ["l·l", "α͵β", "א׳ב", "・ぁ", "क्\u200dष", "0a.א", "München", "a_b", "a b", "\u0640\u07fa"]
    for name in valid:
        assert dfa_accepts(_DFA, name), name
        assert idna_accepts(name), name
    for name in invalid:
        assert not dfa_accepts(_DFA, name), name
    check({"format": "idn-hostname"}, ["실례.테스트", 12, None], ["〮실례.테스트", "-> $1.00 <--"])


def test_what_the_subset_leaves_out_is_documented() -> None:
    # Valid for idna, rejected here: an A-label, a trailing dot, a contextual rule, a
    # right-to-left label, a U-label longer than the sound bound. Nothing the other way.
    for name in ["xn--ihqwcrb4cv8a8dqg056pqjye", "example.", "l·l", "אב", "παράδειγμαπαράδειγμα"]:
        assert idna_accepts(name) and not dfa_accepts(_DFA, name), name


def test_simple_code_points() -> None:
    assert all(formats_idna.is_simple(ord(c)) for c in "üßαςя가丈ぁァ")
    # a mark, a joiner, a CONTEXTO point, right-to-left, uppercase, a composition second
    assert not any(formats_idna.is_simple(ord(c)) for c in "\u0301\u200d·בÜ\u3099a")
    chars = formats_idna.u_label_code_points()
    assert all(formats_idna.is_simple(cp) for lo, hi in chars for cp in (lo, (lo + hi) // 2, hi))


def test_punycode_bound() -> None:
    top = formats_idna.u_label_code_points()[-1][1]
    n = formats_idna.max_u_label(top)
    assert n >= 8
    assert 4 + 1 + formats_idna.punycode_digits_bound(top, n) * n <= 63
    assert 4 + 1 + formats_idna.punycode_digits_bound(top, n + 1) * (n + 1) > 63
    # Worst cases: far-apart code points, ASCII in between (it multiplies the deltas).
    for label in ["ß" + "힣" * (n - 1), "힣ß" * (n // 2), "a" * (n - 1) + "힣", "힣" * n]:
        assert len(idna.encode(label)) <= 63 and dfa_accepts(_DFA, label), label
    assert not dfa_accepts(_DFA, "ü" * (n + 1))


def test_punycode_digits_grow_with_the_delta() -> None:
    # punycode_digits_bound relies on it: the largest delta has the most digits, any bias.
    rng = random.Random(5)
    for top in (0xFF, 0x3134A):
        small, large = formats_idna.punycode_digits_bound(top, 1), formats_idna.punycode_digits_bound(top, 60)
        assert small <= large
    for _ in range(300):
        cp = rng.randrange(0x80, 0x110000)
        assert formats_idna.punycode_digits_bound(cp, 9) <= formats_idna.punycode_digits_bound(cp + 1000, 9)


_U_CHARS = [chr(lo) for lo, _ in formats_idna.u_label_code_points()] + ["ü", "가", "丈", "я"]
_ASCII = list("abzAZ09-")
_OTHER = ["\u0301", "\u200d", "·", "ב", "Ü", "_", " ", "\u3099"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_ASCII + list(_DOTS) + _U_CHARS + _OTHER), min_size=1, max_size=24).map("".join)
)
def test_never_accepts_what_idna_rejects(name: str) -> None:
    if dfa_accepts(_DFA, name):
        assert idna_accepts(name)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_ASCII + list(_DOTS) + _U_CHARS), min_size=1, max_size=24).map("".join))
def test_exact_on_the_supported_alphabet(name: str) -> None:
    labels = _labels(name)
    outside = any(
        label[2:4] == "--"  # A-label candidates (and invalid U-labels): not decided here
        or (not label.isascii() and len(label) > formats_idna.max_u_label(0xD7A3))
        or (not label.isascii() and any(c.isupper() for c in label))
        for label in labels
    )
    assume(not outside and labels[-1] != "")
    assert dfa_accepts(_DFA, name) == idna_accepts(name)
