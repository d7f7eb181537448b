"""Numbers and integers with bounds of any magnitude, and ``multipleOf``.

Which spellings are accepted (documented in ``docs/json_schema.md``):

- ``integer``: ``-?(0|[1-9][0-9]*)`` optionally followed by ``.0+`` (``1.0`` is the
  integer 1 in JSON Schema from draft 6 on; drafts 3 and 4 say an integer has no fraction,
  :attr:`NumberSpec.zero_fraction_integers`); no exponent. ``-0`` is zero.
- ``number`` without bounds or ``multipleOf``: the full JSON number syntax.
- ``number`` with bounds or ``multipleOf``: ``-?(0|[1-9][0-9]*)(\\.[0-9]+)?``, no exponent:
  comparing an exponent form with a bound is not a regular language in general.

Bounds are exact for every spelling accepted: the integer part is compared by digit-range
automata (:mod:`.digits`, any number of digits) and the fraction digit by digit, so
``minimum: 0.5`` accepts ``0.5``, ``0.50`` and ``0.6`` but not ``0.49999``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Final

from ... import _core
from ...errors import LimitExceeded, UnsatisfiableSchemaError, UnsupportedSchemaError
from ...ir import EMPTY, NOTHING, Bytes, Expr, Grammar, Repeat, alt, byte_range, literal, optional, seq
from .automata import DFA, dfa_from_expr
from .digits import fixed_width
from .nfa import MAX_NFA_STATES

__all__ = ["NumberSpec", "any_number", "number_expr", "uint_range"]

_DIGIT: Final = Bytes(((0x30, 0x39),))
_NONZERO: Final = Bytes(((0x31, 0x39),))
_DIGITS: Final = Repeat(_DIGIT, 0, None)
_MINUS: Final = literal("-")
_ZERO_FRACTION: Final = seq(literal("."), Repeat(literal("0"), 1, None))
_ANY_FRACTION: Final = optional(seq(literal("."), Repeat(_DIGIT, 1, None)))
_EXPONENT: Final = seq(
    Bytes(((0x45, 0x45), (0x65, 0x65))),
    optional(Bytes(((0x2B, 0x2B), (0x2D, 0x2D)))),
    Repeat(_DIGIT, 1, None),
)


def any_number() -> Expr:
    """Every JSON number."""
    return seq(optional(_MINUS), uint_range(0, None), _ANY_FRACTION, optional(_EXPONENT))


def _digit_seq(digits: tuple[tuple[int, int], ...]) -> Expr:
    return seq(*(byte_range(0x30 + a, 0x30 + b) for a, b in digits))


@lru_cache(maxsize=1024)
def uint_range(lo: int, hi: int | None) -> Expr:
    """Canonical decimal naturals (no leading zeros) from ``lo`` to ``hi`` (None: no bound).

    Remembered, as is :func:`_int_range`: the same bounds recur across schemas (0..100,
    1..65535), and one shared expression is also one set of lowering facts and programs."""
    if hi is not None and lo > hi:
        return NOTHING
    options: list[Expr] = []
    if lo == 0:
        options.append(literal("0"))
        lo = 1
    width = len(str(lo))
    top = len(str(hi)) if hi is not None else width
    for w in range(width, top + 1):
        a = max(lo, 10 ** (w - 1))
        b = 10**w - 1 if hi is None else min(hi, 10**w - 1)
        options.extend(_digit_seq(d) for d in fixed_width(a, b, w))
    if hi is None:  # every longer numeral
        options.append(seq(_NONZERO, Repeat(_DIGIT, width, None)))
    return alt(*options)


@lru_cache(maxsize=1024)
def _int_range(lo: int | None, hi: int | None) -> Expr:
    """Integers lo..hi (None: unbounded) as ``-?`` canonical numerals; ``-0`` is zero."""
    options: list[Expr] = []
    if hi is None or hi >= 0:
        options.append(uint_range(max(lo, 0) if lo is not None else 0, hi))
    if lo is None or lo <= 0 <= (hi if hi is not None else 0):
        options.append(literal("-0"))
    if lo is None or lo < 0:
        options.append(
            seq(_MINUS, uint_range(max(-hi, 1) if hi is not None else 1, -lo if lo is not None else None))
        )
    return alt(*options)


# ----------------------------------------------------------------------------- fractions


def _frac_digits(value: Decimal) -> tuple[int, str]:
    """Integer part and fraction digits (no trailing zeros) of a non-negative decimal."""
    whole = int(value)
    frac = value - whole
    text = format(frac, "f").rstrip("0")
    digits = text.split(".")[1] if "." in text else ""
    return whole, digits


def _frac_ge(f: str, strict: bool) -> Expr:
    """Optional fraction parts ``.D`` (or none) whose value is >= 0.f (> if strict)."""
    if not f:
        return seq(literal("."), _DIGITS, _NONZERO, _DIGITS) if strict else _ANY_FRACTION
    options = [
        seq(literal(f[:k]), byte_range(0x31 + int(f[k]), 0x39), _DIGITS) for k in range(len(f)) if f[k] != "9"
    ]
    options.append(seq(literal(f), _DIGITS, _NONZERO, _DIGITS) if strict else seq(literal(f), _DIGITS))
    return seq(literal("."), alt(*options))


def _frac_le(f: str, strict: bool) -> Expr:
    """Optional fraction parts whose value is <= 0.f (< if strict)."""
    zeros = optional(_ZERO_FRACTION)
    if not f:
        return NOTHING if strict else zeros
    options = [
        seq(literal(f[:k]), byte_range(0x30, 0x2F + int(f[k])), _DIGITS) for k in range(len(f)) if f[k] != "0"
    ]
    options += [seq(literal(f[:k]), Repeat(literal("0"), 0, None)) for k in range(1, len(f))]
    if not strict:
        options.append(seq(literal(f), Repeat(literal("0"), 0, None)))
    return alt(EMPTY, seq(literal("."), alt(*options)))


def _magnitude(lo: Decimal, lo_strict: bool, hi: Decimal | None, hi_strict: bool) -> Expr:
    """Unsigned decimals ``I(.F)?`` with lo <(=) value <(=) hi, 0 <= lo."""
    ia, fa = _frac_digits(lo)
    if hi is None:
        return alt(
            seq(uint_range(ia, ia), _frac_ge(fa, lo_strict)), seq(uint_range(ia + 1, None), _ANY_FRACTION)
        )
    if hi < lo or (hi == lo and (lo_strict or hi_strict)):
        return NOTHING
    ib, fb = _frac_digits(hi)
    if ia == ib:
        both = dfa_from_expr(_frac_ge(fa, lo_strict)).intersect(dfa_from_expr(_frac_le(fb, hi_strict)))
        # An expression when state elimination gives one, else the automaton: the same
        # language either way (None is "too large to eliminate", not "empty").
        frac = both.labeled().to_expr()
        return seq(uint_range(ia, ia), frac if frac is not None else both.to_automaton())
    return alt(
        seq(uint_range(ia, ia), _frac_ge(fa, lo_strict)),
        seq(uint_range(ia + 1, ib - 1), _ANY_FRACTION),
        seq(uint_range(ib, ib), _frac_le(fb, hi_strict)),
    )


def _decimal_range(lo: Decimal | None, lo_strict: bool, hi: Decimal | None, hi_strict: bool) -> Expr:
    """Decimal numerals (no exponent) whose value lies in the range."""
    zero_ok = (lo is None or lo < 0 or (lo == 0 and not lo_strict)) and (
        hi is None or hi > 0 or (hi == 0 and not hi_strict)
    )
    options: list[Expr] = []
    if hi is None or hi >= 0:  # non-negative values, written without a sign
        if lo is None or lo < 0:
            options.append(_magnitude(Decimal(0), False, hi, hi_strict))
        else:
            options.append(_magnitude(lo, lo_strict, hi, hi_strict))
    if zero_ok:  # negative zero
        options.append(seq(literal("-0"), optional(_ZERO_FRACTION)))
    if lo is None or lo < 0:  # negative values: -m with m > 0
        if hi is None or hi >= 0:
            m_lo, m_lo_strict = Decimal(0), True
        else:
            m_lo, m_lo_strict = -hi, hi_strict
        m_hi = -lo if lo is not None else None
        options.append(seq(_MINUS, _magnitude(m_lo, m_lo_strict, m_hi, lo_strict)))
    return alt(*options)


# ----------------------------------------------------------------------------- multipleOf


@lru_cache(maxsize=256)
def _multiple_dfa(step_text: str, fraction_digits_allowed: bool) -> DFA:
    """Numerals ``-?I(.F)?`` whose value is a multiple of ``step_text`` (as a DFA, by residues:
    :func:`tokensieve._core.multiples_dfa` reads the value modulo p digit by digit, for the
    step p / 10^scale).

    Cached by the step's spelling (its residue count depends on it: ``"1.0"`` has ten): the
    automaton is a function of the step alone, met again by every schema, negation and
    ``oneOf`` arm with that ``multipleOf``, and a DFA is not changed by its uses. Built
    natively: the residue NFA of a combined step (lcm 3 * 5 * 8 * 11 = 1320) has 13,200 edges,
    and building them in Python was a fifth of Handwritten allone2's front-end."""
    step = Decimal(step_text)
    scale = max(-int(step.as_tuple().exponent), 0)  # step = p / 10^scale
    p = int(step.scaleb(scale))
    try:
        native = _core.multiples_dfa(p, scale, fraction_digits_allowed, MAX_NFA_STATES, _MAX_MULTIPLE_STATES)
    except LimitExceeded:
        raise OverflowError("automaton too large") from None
    return DFA._from_native(native)


_MAX_MULTIPLE_STATES: Final = 20000  # (the subset construction's bound, as DFA.from_nfa's)


# ----------------------------------------------------------------------------- entry point


@dataclass
class NumberSpec:
    """Numeric constraints of one schema; bounds are exact decimals (None: unbounded)."""

    pointer: str = ""
    integer: bool = False
    lower: Decimal | None = None
    lower_strict: bool = False
    upper: Decimal | None = None
    upper_strict: bool = False
    multiple_of: Decimal | None = None
    zero_fraction_integers: bool = True
    """Whether ``type: integer`` admits ``1.0`` (draft 6 on); drafts 3 and 4 count only
    numerals without a fraction as integers."""

    def __init__(  # written out: a dataclass-generated __init__ stays plain Python under mypyc
        self,
        pointer: str = "",
        integer: bool = False,
        lower: Decimal | None = None,
        lower_strict: bool = False,
        upper: Decimal | None = None,
        upper_strict: bool = False,
        multiple_of: Decimal | None = None,
        zero_fraction_integers: bool = True,
    ) -> None:
        self.pointer = pointer
        self.integer = integer
        self.lower = lower
        self.lower_strict = lower_strict
        self.upper = upper
        self.upper_strict = upper_strict
        self.multiple_of = multiple_of
        self.zero_fraction_integers = zero_fraction_integers


_MAX_MODULUS: Final = 2000


def number_expr(spec: NumberSpec, grammar: Grammar, hint: str = "number") -> Expr:
    """The numerals satisfying ``spec`` (see the module docstring for accepted spellings)."""
    lo, hi = spec.lower, spec.upper
    if (
        lo is not None
        and hi is not None
        and (lo > hi or (lo == hi and (spec.lower_strict or spec.upper_strict)))
    ):
        raise UnsatisfiableSchemaError(
            f"no number lies between {lo} and {hi}", keyword="minimum", pointer=spec.pointer
        )
    step = spec.multiple_of
    # A number with an integral multipleOf is an integer too.
    integer = spec.integer or (step is not None and step == step.to_integral_value())
    if integer:
        ilo = None if lo is None else (math.floor(lo) + 1 if spec.lower_strict else math.ceil(lo))
        ihi = None if hi is None else (math.ceil(hi) - 1 if spec.upper_strict else math.floor(hi))
        if ilo is not None and ihi is not None and ilo > ihi:
            raise UnsatisfiableSchemaError(
                f"no integer lies between {lo} and {hi}", keyword="minimum", pointer=spec.pointer
            )
        body = _int_range(ilo, ihi)
    elif lo is None and hi is None and step is None:
        return any_number()
    else:
        body = _decimal_range(lo, spec.lower_strict, hi, spec.upper_strict)
    if step is not None:
        if step <= 0:
            raise UnsupportedSchemaError(
                "multipleOf must be greater than 0", keyword="multipleOf", pointer=spec.pointer
            )
        modulus = int(step.scaleb(max(-int(step.as_tuple().exponent), 0)))
        if modulus > _MAX_MODULUS:
            raise UnsupportedSchemaError(
                f"multipleOf {step} needs {modulus} automaton states (at most {_MAX_MODULUS})",
                keyword="multipleOf",
                pointer=spec.pointer,
            )
        dfa = dfa_from_expr(body).intersect(_multiple_dfa(str(step), not integer))
        if dfa.is_empty():
            raise UnsatisfiableSchemaError(
                f"no value in range is a multiple of {step}", keyword="multipleOf", pointer=spec.pointer
            )
        body = dfa.to_ir(grammar, hint + "_mult")
    # An integral multipleOf on a plain number keeps "1.0" in every draft.
    fraction = integer and (spec.zero_fraction_integers or not spec.integer)
    return seq(body, optional(_ZERO_FRACTION)) if fraction else body
