"""Strings (lengths in characters, escapes, patterns, formats) and numbers (exact bounds)."""

from __future__ import annotations

import random
import re
from decimal import Decimal

import pytest

from tokensieve.errors import UnsatisfiableSchemaError, UnsupportedSchemaError
from tokensieve.frontends.json_schema import json_schema_to_grammar
from tokensieve.frontends.json_schema.numbers import _multiple_dfa

from .helpers import Raw, accepts, check


def test_lengths_count_characters_after_unescaping() -> None:
    schema = {"type": "string", "minLength": 2, "maxLength": 3}
    check(schema, ["ab", "abc", "é😀", '"\\', "\n\t"], ["a", "abcd", ""])
    assert accepts(schema, '"\\u00e9\\ud83d\\ude00"')  # two characters, escaped
    assert not accepts(schema, '"\\ud83d"')  # a lone surrogate is not a character


def test_min_length_does_not_forbid_escapes() -> None:
    check({"type": "string", "minLength": 1}, ['"', "\\", "\u0001"], [""])


def test_pattern_is_unanchored_unless_anchored() -> None:
    check({"type": "string", "pattern": "b+"}, ["abbc", "b"], ["ac", ""])
    check({"type": "string", "pattern": "^a[0-9]$"}, ["a1"], ["a12", "ba1"])


def test_pattern_with_length_and_escaped_content() -> None:
    schema = {"type": "string", "pattern": '^[é"]+$', "maxLength": 2}
    check(schema, ["é", 'é"', Raw('"\\u00e9\\""')], ["ééé", "", "b", Raw('"\\u00e9\\u0022"')])


def test_control_characters_in_pattern_are_escaped_in_json() -> None:
    schema = {"type": "string", "pattern": "^\\x00\\n$"}
    check(schema, ["\x00\n"], [])
    assert not accepts(schema, b'"\x00\n"')  # raw control bytes are not JSON


def test_formats() -> None:
    check(
        {"type": "string", "format": "date-time"},
        ["2024-02-29T23:59:60Z", "2021-01-01t00:00:00.5+05:30"],
        ["2023-02-29T00:00:00Z", "2021-01-01 00:00:00Z", "2021-01-01T24:00:00Z"],
    )
    check({"format": "ipv4"}, ["10.0.0.255", 5], ["256.1.1.1", "01.1.1.1"])
    check({"format": "uuid"}, ["123e4567-e89b-12d3-a456-426614174000"], ["123e4567e89b12d3a456426614174000"])
    check({"format": "email"}, ["a.b@example.com", '"x y"@h'], ["a@", "@b", "a..b@c"])
    check({"format": "uri"}, ["https://a.b/c?d#e", "urn:x:y"], ["/relative", "a b:c"])
    check({"format": "duration"}, ["P1Y2M", "PT1S", "P2W"], ["P", "PT", "P1S"])
    check({"format": "no-such-format"}, ["anything"], [])


def test_not_regular_format_is_unsupported() -> None:
    with pytest.raises(UnsupportedSchemaError) as info:
        json_schema_to_grammar({"type": "string", "format": "regex"})
    assert info.value.keyword == "format"


def test_integers_beyond_64_bits() -> None:
    big = 2**70
    schema = {"type": "integer", "minimum": -big, "maximum": big}
    check(schema, [-big, 0, big, big - 1], [big + 1, -big - 1, 10 * big])


def test_decimal_bounds_are_exact() -> None:
    schema = {"type": "number", "exclusiveMinimum": 0.5, "maximum": 2.25}
    check(schema, [0.51, 0.6, 1, 2.25, Raw("2.2500"), Raw("0.5000001")], [0.5, Raw("0.50"), 2.26, -1, 3])


def test_random_bounds_against_decimal_arithmetic() -> None:
    rng = random.Random(7)
    for _ in range(8):
        lo = Decimal(rng.randint(-300, 300)) / 100
        hi = lo + Decimal(rng.randint(0, 400)) / 100
        schema = {"type": "number", "minimum": float(lo), "exclusiveMaximum": float(hi)}
        if lo == hi:
            continue
        values = [Decimal(rng.randint(-500, 500)) / 100 for _ in range(15)] + [lo, hi]
        check(
            schema, [float(v) for v in values if lo <= v < hi], [float(v) for v in values if not lo <= v < hi]
        )


def test_multiple_of() -> None:
    check({"type": "integer", "multipleOf": 7, "minimum": -30}, [0, 7, -28, 700], [1, -35, 7.5])
    check({"type": "number", "multipleOf": 0.25}, [0.5, 1, -0.75, Raw("0.250")], [0.1, 0.3])


def test_number_constraints_met_again_keep_their_own_meaning() -> None:
    """One expression per distinct number constraints (and one residue automaton per step) is
    shared by every place that meets them: arms that differ in a bound's strictness, the
    integer type or the step must still each mean their own set."""
    arms = [
        {"type": "number", "minimum": 1, "multipleOf": 0.5},
        {"type": "number", "exclusiveMinimum": 1, "multipleOf": 0.5},
        {"type": "integer", "minimum": 1, "multipleOf": 3},
        {"type": "number", "multipleOf": 3},
    ]
    # oneOf: exactly one arm. 1 is in arm 0 only; 1.5 in arms 0 and 1; 3 in all four;
    # -3 in arm 3 only; 1.25 in none.
    check({"oneOf": arms}, [1, -3, Raw("-3.0")], [1.5, 3, 1.25, 6])
    # The same arms again under a not and inside an allOf: the remembered expressions are
    # the same objects, and must mean the same.
    check({"allOf": [{"anyOf": arms}, {"not": {"anyOf": arms[2:]}}]}, [1, 1.5, 2.5], [3, -3, 1.25, 0.5])
    # Draft 4 counts 1.0 as no integer: the same bounds there are another expression.
    draft4 = "http://json-schema.org/draft-04/schema#"
    check(
        {"$schema": draft4, "anyOf": [{"type": "integer", "minimum": 1}, {"type": "integer", "minimum": 1}]},
        [1, 2],
        [Raw("1.0"), 0],
    )


def test_draft4_boolean_exclusive_bounds() -> None:
    check({"type": "integer", "minimum": 3, "exclusiveMinimum": True}, [4], [3])


def test_draft4_integers_have_no_fraction() -> None:
    draft4 = "http://json-schema.org/draft-04/schema#"
    check({"$schema": draft4, "type": "integer"}, [1, -3, 0], [Raw("1.0"), Raw("-3.00"), 1.5])
    check({"$schema": draft4, "type": "number", "multipleOf": 1}, [1, Raw("1.0")], [1.5])
    check({"$schema": draft4, "type": "number", "not": {"type": "integer"}}, [Raw("2.0"), 2.5], [2])
    check({"type": "integer"}, [1, Raw("1.0")], [1.5])  # draft 2020-12: 1.0 is an integer


@pytest.mark.parametrize(
    "keyword", ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"]
)
@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_a_non_finite_numeric_keyword_is_refused_by_name(keyword: str, value: float) -> None:
    # JSON has no Infinity or NaN, but Python's json reads them and a dict may hold them.
    with pytest.raises(UnsupportedSchemaError, match=f"{keyword} must be a finite number"):
        json_schema_to_grammar({"type": "number", keyword: value})


def test_non_finite_values_end_in_no_crash() -> None:
    # An enum or const value no JSON text can spell admits nothing.
    with pytest.raises(UnsatisfiableSchemaError):
        json_schema_to_grammar({"const": float("nan")})
    check({"enum": [1, float("inf")]}, [1], [2])


_COUNTED = {
    "minLength": "string",
    "maxLength": "string",
    "minItems": "array",
    "maxItems": "array",
    "minProperties": "object",
    "maxProperties": "object",
}
_NOT_COUNTS = [-1, 2.5, "3", None, True, [2], float("nan"), float("inf"), float("-inf")]


@pytest.mark.parametrize("keyword", sorted(_COUNTED))
@pytest.mark.parametrize("value", _NOT_COUNTS, ids=repr)
def test_a_malformed_count_is_refused_by_name_wherever_it_is_read(keyword: str, value: object) -> None:
    """A count keyword holds a non-negative integer; anything else is refused naming it and
    its schema, not read as no bound: directly, inside a oneOf (whose other branches are
    negated: the negation reads the keyword first) and under a not."""
    kind = _COUNTED[keyword]
    schemas = {
        "": {"type": kind, keyword: value},
        "/oneOf/0": {"oneOf": [{"type": kind, keyword: value}, {"type": kind}]},
        "/not": {"not": {"type": kind, keyword: value}},
    }
    for pointer, schema in schemas.items():
        with pytest.raises(UnsupportedSchemaError, match=f"{keyword} must be a non-negative integer") as err:
            json_schema_to_grammar(schema)
        assert err.value.keyword == keyword and err.value.pointer == pointer


@pytest.mark.parametrize("keyword", ["minContains", "maxContains"])
def test_a_malformed_contains_count_is_refused(keyword: str) -> None:
    with pytest.raises(UnsupportedSchemaError, match=f"{keyword} must be a non-negative integer"):
        json_schema_to_grammar({"type": "array", "contains": {"type": "integer"}, keyword: 1.5})


def test_counts_that_are_integers_by_value_are_counts() -> None:
    check({"type": "array", "maxItems": 2.0}, [[], [1, 2]], [[1, 2, 3]])
    check({"type": "string", "minLength": 1.0}, ["a"], [""])
    check({"type": "array", "maxItems": 2**40}, [[], [1, 2, 3]], [1])  # past MAX_COUNT: no bound


def test_a_relaxed_malformed_count_is_dropped_with_a_warning() -> None:
    with pytest.warns(UserWarning, match="maxItems"):
        grammar = json_schema_to_grammar({"type": "array", "maxItems": -1}, relax={"maxItems"})
    assert grammar.rules


@pytest.mark.parametrize("step", ["3", "7", "12", "1320", "0.5", "0.25", "1.5", "0.1", "1.0", "2.50", "0.03"])
@pytest.mark.parametrize("fraction_digits", [True, False])
def test_multiples_automaton_accepts_exactly_the_multiples(step: str, fraction_digits: bool) -> None:
    """The residue automaton of multipleOf (built natively): a numeral -?I(.F)? is in it exactly
    when its value is a multiple of the step, and a fraction is written only where allowed (any
    digits with ``fraction_digits`` and a step with decimals; zeros only for an integral step;
    none otherwise). Checked on every short numeral and on random longer ones."""
    dfa = _multiple_dfa(step, fraction_digits).native()
    scale = max(-Decimal(step).as_tuple().exponent, 0)

    def expected(numeral: str) -> bool:
        match = re.fullmatch(r"-?(0|[1-9][0-9]*)(?:\.([0-9]+))?", numeral)
        if match is None:
            return False
        fraction = match.group(2)
        if fraction is not None and (fraction.strip("0") if scale == 0 else not fraction_digits):
            return False
        return Decimal(numeral) % Decimal(step) == 0

    rng = random.Random(step + str(fraction_digits))
    numerals = [f"{i}{f}" for i in range(-120, 121) for f in ("", ".", ".0", ".5", ".25", ".00", ".120")]
    numerals += ["-0", "00", "01", "-", "", "1..0", ".5"]
    for _ in range(3000):
        whole = str(rng.randrange(10 ** rng.randint(1, 7)))
        fraction = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, 5)))
        numerals.append(("-" if rng.random() < 0.3 else "") + whole + ("." + fraction if fraction else ""))
    for numeral in numerals:
        assert dfa.matches(numeral.encode()) == expected(numeral), numeral


def test_multiples_automaton_is_bounded_in_nfa_states() -> None:
    """A step of many decimals needs a fraction state per digit position: past the NFA bound the
    native builder stops with LimitExceeded (the front-end's OverflowError, "too large an
    automaton"), before it allocates them."""
    from tokensieve import _core
    from tokensieve.errors import LimitExceeded

    with pytest.raises(LimitExceeded):
        _core.multiples_dfa(1, 10**9, True, 200_000, 20_000)
    with pytest.raises(LimitExceeded):
        _core.multiples_dfa(7, 50_000, True, 200_000, 20_000)  # 7 residues per position
    assert _core.multiples_dfa(7, 3, True, 200_000, 20_000).num_states > 0
