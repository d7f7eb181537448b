"""``format`` as content languages (regular expressions over the decoded string).

Formats with a regular grammar are enforced exactly, with these documented limits:

- ``date``/``date-time``: days are checked per month, February 29 only in leap years;
  a leap second (``:60``) is accepted only at 23:59 UTC written with ``Z``/``+00:00``/``-00:00``.
- ``hostname``: LDH labels of 1..63 characters without ``--`` in positions 3-4 (so no
  A-labels); the 253-character total is *not* enforced (it would multiply the automaton by
  253): the one documented over-acceptance of this module (``idn-hostname`` shares it).
- ``email``: RFC 5321 mailboxes: dot-atom or quoted local part, hostname or IP-literal domain.
- ``idn-hostname``: a sound subset of the IDNA2008 names (:mod:`.formats_idna`).
- ``uri-template``: RFC 6570 syntax (level 4).

``regex`` (not a regular language) is an error. ``idn-email`` accepts UTF-8 in local parts
and domain labels (RFC 6531) without IDNA checks on the labels.
Unknown formats are annotations in draft 2020-12 and constrain nothing.
"""

from __future__ import annotations

from functools import cache
from typing import Final

from ...ir import Expr
from ..regex import parse_regex
from .automata import dfa_from_expr
from .formats_idna import IDNA_AVAILABLE, idn_hostname_language

__all__ = ["FORMATS", "NOT_REGULAR", "format_language"]

_D2: Final = r"[0-9]{2}"
_YEAR: Final = r"[0-9]{4}"
_LEAP_YEAR: Final = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26]|00)00)"
_DATE: Final = (
    rf"(?:{_YEAR}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    rf"|02-(?:0[1-9]|1[0-9]|2[0-8]))|{_LEAP_YEAR}-02-29)"
)
_OFFSET: Final = r"(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
_FRAC: Final = r"(?:\.[0-9]+)?"
_TIME: Final = (
    rf"(?:(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]{_FRAC}{_OFFSET}"
    rf"|23:59:60{_FRAC}(?:[Zz]|[+-]00:00))"
)
_DEC_OCTET: Final = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_IPV4: Final = rf"(?:{_DEC_OCTET}(?:\.{_DEC_OCTET}){{3}})"
_H16: Final = r"[0-9A-Fa-f]{1,4}"
_LS32: Final = rf"(?:{_H16}:{_H16}|{_IPV4})"
_IPV6: Final = (
    rf"(?:(?:{_H16}:){{6}}{_LS32}|::(?:{_H16}:){{5}}{_LS32}|(?:{_H16})?::(?:{_H16}:){{4}}{_LS32}"
    rf"|(?:(?:{_H16}:){{0,1}}{_H16})?::(?:{_H16}:){{3}}{_LS32}"
    rf"|(?:(?:{_H16}:){{0,2}}{_H16})?::(?:{_H16}:){{2}}{_LS32}"
    rf"|(?:(?:{_H16}:){{0,3}}{_H16})?::{_H16}:{_LS32}"
    rf"|(?:(?:{_H16}:){{0,4}}{_H16})?::{_LS32}"
    rf"|(?:(?:{_H16}:){{0,5}}{_H16})?::{_H16}"
    rf"|(?:(?:{_H16}:){{0,6}}{_H16})?::)"
)
# LDH labels; "--" in the 3rd and 4th positions is reserved (RFC 5891), which also leaves
# out A-labels ("xn--..."): their Punycode validity is not a regular property.
_AN: Final = "[A-Za-z0-9]"
_LDH: Final = "[A-Za-z0-9-]"
_LABEL: Final = (
    rf"(?:{_AN}|{_AN}{_AN}|{_AN}{_LDH}{{1,2}}{_AN}|{_AN}{_LDH}(?:{_AN}{_LDH}|-{_AN}){_LDH}{{0,58}}{_AN})"
)
_HOSTNAME: Final = rf"(?:{_LABEL}(?:\.{_LABEL})*)"
_ATEXT: Final = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]"
_EMAIL: Final = (
    rf'(?:{_ATEXT}+(?:\.{_ATEXT}+)*|"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*")'
    rf"@(?:{_HOSTNAME}|\[{_IPV4}\]|\[IPv6:{_IPV6}\])"
)
# RFC 6531: UTF-8 characters are allowed in atext, quoted strings and domain labels.
_U: Final = "\u0080-\U0010ffff"
_IDN_LABEL: Final = rf"[A-Za-z0-9{_U}](?:[A-Za-z0-9\-{_U}]*[A-Za-z0-9{_U}])?"
_IDN_EMAIL: Final = (
    rf"(?:[A-Za-z0-9!#$%&'*+/=?^_`{{|}}~\-{_U}]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{{|}}~\-{_U}]+)*"
    rf'|"(?:[\x20\x21\x23-\x5b\x5d-\x7e{_U}]|\\[\x20-\x7e])*")'
    rf"@(?:{_IDN_LABEL}(?:\.{_IDN_LABEL})*|\[{_IPV4}\]|\[IPv6:{_IPV6}\])"
)
# RFC 3986 (ASCII) and RFC 3987 (IRI: adds non-ASCII "ucschar" where unreserved is allowed).
_PCT: Final = r"%[0-9A-Fa-f]{2}"
_SUB: Final = r"[!$&'()*+,;=]"


_UCSCHAR: Final = (
    "\u00a0-\ud7ff\uf900-\ufdcf\ufdf0-\uffef"
    + "".join(f"{chr(p)}-{chr(p + 0xFFFD)}" for p in range(0x10000, 0xE0000, 0x10000))
    + f"{chr(0xE1000)}-{chr(0xEFFFD)}"
)
_IPRIVATE: Final = f"\ue000-\uf8ff{chr(0xF0000)}-{chr(0xFFFFD)}{chr(0x100000)}-{chr(0x10FFFD)}"


def _uri(iri: bool, reference: bool) -> str:
    unres = rf"[A-Za-z0-9._~\-{_UCSCHAR}]" if iri else r"[A-Za-z0-9._~-]"
    pchar = rf"(?:{unres}|{_PCT}|{_SUB}|[:@])"
    userinfo = rf"(?:{unres}|{_PCT}|{_SUB}|:)*"
    reg_name = rf"(?:{unres}|{_PCT}|{_SUB})*"
    ipfuture = rf"[vV][0-9A-Fa-f]+\.(?:[A-Za-z0-9._~-]|{_SUB}|:)+"
    host = rf"(?:\[(?:{_IPV6}|{ipfuture})\]|{_IPV4}|{reg_name})"
    authority = rf"(?:{userinfo}@)?{host}(?::[0-9]*)?"
    segment = rf"{pchar}*"
    abempty = rf"(?:/{segment})*"
    absolute = rf"/(?:{pchar}+(?:/{segment})*)?"
    rootless = rf"{pchar}+(?:/{segment})*"
    query = rf"(?:\?(?:{pchar}|[/?]|[{_IPRIVATE}])*)?" if iri else rf"(?:\?(?:{pchar}|[/?])*)?"
    fragment = rf"(?:#(?:{pchar}|[/?])*)?"
    scheme = r"[A-Za-z][A-Za-z0-9+.-]*"
    uri = rf"{scheme}:(?://{authority}{abempty}|{absolute}|{rootless}|){query}{fragment}"
    if not reference:
        return uri
    noscheme = rf"(?:{unres}|{_PCT}|{_SUB}|@)+(?:/{segment})*"
    relative = rf"(?://{authority}{abempty}|{absolute}|{noscheme}|){query}{fragment}"
    return rf"(?:{uri}|{relative})"


_JSON_POINTER: Final = r"(?:/(?:[^~/]|~[01])*)*"

# RFC 6570 (level 4) templates: literals and "{" [operator] varspec *("," varspec) "}".
# Literals also admit "'" (the RFC's ABNF leaves it out; erratum 6937 and the test suite
# put it back). The operators reserved for future extensions ("=", ",", "!", "@", "|")
# are not accepted: no processor can expand such a template.
_VARCHAR: Final = rf"(?:[A-Za-z0-9_]|{_PCT})"
_VARSPEC: Final = rf"{_VARCHAR}(?:\.?{_VARCHAR})*(?::[1-9][0-9]{{0,3}}|\*)?"
_URI_TEMPLATE: Final = (
    rf"(?:[!#$&-;=?-\[\]_a-z~{_UCSCHAR}{_IPRIVATE}]|{_PCT}"
    rf"|\{{[+#./;?&]?{_VARSPEC}(?:,{_VARSPEC})*\}})*"
)

FORMATS: Final[dict[str, str]] = {
    "date": _DATE,
    "time": _TIME,
    "date-time": rf"{_DATE}[Tt]{_TIME}",
    "duration": (
        r"P(?:(?:[0-9]+D|[0-9]+M(?:[0-9]+D)?|[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?)"
        r"(?:T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S))?"
        r"|T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)|[0-9]+W)"
    ),
    "email": _EMAIL,
    "idn-email": _IDN_EMAIL,
    "hostname": _HOSTNAME,
    "ipv4": _IPV4,
    "ipv6": _IPV6,
    "uuid": r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}",
    "uri": _uri(iri=False, reference=False),
    "uri-reference": _uri(iri=False, reference=True),
    "iri": _uri(iri=True, reference=False),
    "iri-reference": _uri(iri=True, reference=True),
    "json-pointer": _JSON_POINTER,
    "relative-json-pointer": rf"(?:0|[1-9][0-9]*)(?:#|{_JSON_POINTER})",
    "uri-template": _URI_TEMPLATE,
}
"""Format name -> regular expression (full match) of the decoded string."""

NOT_REGULAR: Final = frozenset({"regex"} if IDNA_AVAILABLE else {"regex", "idn-hostname"})
"""Known formats not enforced: asserting them is an error. ``idn-hostname`` needs the
IDNA2008 tables of the ``idna`` package."""


_AS_AUTOMATON: Final = frozenset({"uri-template"})
"""Formats given to the string builder as a minimized automaton rather than an expression.

Their character classes reach into the astral planes (``ucschar``, ``iprivate``), whose
JSON escapes (surrogate pairs of case-insensitive hex digits) make the expression's
unminimized automaton so large that the compiler cuts it into thousands of terminals,
and the parser then exceeds ``max_mask_work``; minimized first, it is one terminal of a
few hundred states. ``iri``/``iri-reference`` would need the same (their minimized
automata have under 300 states) but their subset construction passes through some 10^5
states (3 s), and the test oracle is slow on them as automata: left as expressions."""


@cache
def format_language(name: str) -> Expr | None:
    """The content language of a format, or None for a format that constrains nothing."""
    if name == "idn-hostname":
        return idn_hostname_language(_LABEL)
    pattern = FORMATS.get(name)
    if pattern is None:
        return None
    expr = parse_regex(pattern)
    if name in _AS_AUTOMATON:
        return dfa_from_expr(expr).to_automaton()
    return expr
