"""Older drafts: keywords a schema's declared ``$schema`` does not know yet are annotations.

A validator honours the draft a schema declares: under draft-04, ``if``/``then``/``const``
are unknown keywords and constrain nothing, and ``1.0`` is not an integer. The converter
otherwise reads every keyword with draft 2020-12 meaning, so a schema that declares an
older draft is first copied without the keywords introduced after it (only in schema
positions: a property *named* ``if`` stays). Up to draft-07 the siblings of ``$ref`` are
ignored too (keywords that only hold definitions or ids are kept for resolution). The
integer rule is
:attr:`.numbers.NumberSpec.zero_fraction_integers`.
"""

from __future__ import annotations

import re
from itertools import islice
from typing import Any, Final

from .refs import SUBSCHEMA, SUBSCHEMA_LIST, SUBSCHEMA_MAP

__all__ = ["LATEST", "declared_draft", "without_later_keywords"]

LATEST: Final = 2020

_SINCE: Final[dict[int, tuple[str, ...]]] = {
    6: ("const", "contains", "propertyNames"),
    7: ("if", "then", "else"),
    2019: (
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedProperties",
        "unevaluatedItems",
        "minContains",
        "maxContains",
    ),
    2020: ("prefixItems", "$dynamicRef"),
}
"""Keywords by the draft that introduced them (draft 2019-09 and 2020-12 as 2019, 2020)."""

_DRAFT: Final = re.compile(r"draft-0?(\d)/|/(\d{4})-\d\d/")

# Where subschemas sit: the resolver's tables, less ``contentSchema`` (an annotation in 2019-09
# and later, unknown before; its value is left as it is).
_SUB: Final = SUBSCHEMA - {"contentSchema"}


# Kept beside "$ref" up to draft-07: the reference itself, and what JSON pointers and ids
# may resolve through (those keywords never validate anything themselves).
_BESIDE_REF: Final = {"$ref", "definitions", "$defs", "$id", "id", "$schema", "$comment"}


def declared_draft(root: Any) -> int:
    """The draft the root's ``$schema`` names (3, 4, 6, 7, 2019, 2020); the latest if none."""
    uri = root.get("$schema") if isinstance(root, dict) else None
    match = _DRAFT.search(uri) if isinstance(uri, str) else None
    if match is None:
        return LATEST
    return int(match.group(1) or match.group(2))


def without_later_keywords(root: Any, draft: int) -> Any:
    """``root`` without the keywords introduced after ``draft``: ``root`` itself when it has
    none, else a copy of the objects on the way to them (see :func:`_without`)."""
    dropped = {k for since, keys in _SINCE.items() if since > draft for k in keys}
    if not dropped:
        return root
    return _without(root, dropped, draft)


def _without(s: Any, dropped: set[str], draft: int) -> Any:
    """The schema ``s`` without the keywords in ``dropped`` (recursively). Objects with
    nothing to drop anywhere below are returned as they are, not copied: most schemas that
    declare an older draft use none of the later keywords, and a copy of every object cost as
    much as a tenth of their conversion. (The converter never changes a schema object.)"""
    if not isinstance(s, dict):
        return s
    out: dict[str, Any] | None = None  # made at the first change
    ref_siblings_ignored = draft <= 7 and "$ref" in s
    for i, (key, value) in enumerate(s.items()):
        new: Any = value
        drop = key in dropped or (ref_siblings_ignored and key not in _BESIDE_REF)
        if not drop:  # (up to draft-07 a $ref object's other keywords are ignored)
            if key in SUBSCHEMA_LIST and isinstance(value, list):
                items = [_without(v, dropped, draft) for v in value]
                if any(a is not b for a, b in zip(items, value, strict=True)):
                    new = items
            elif key in _SUB:
                new = _without(value, dropped, draft)
            elif key in SUBSCHEMA_MAP and isinstance(value, dict):
                members = {name: _without(v, dropped, draft) for name, v in value.items()}
                if any(members[name] is not v for name, v in value.items()):
                    new = members
        if out is None and (drop or new is not value):
            out = dict(islice(s.items(), i))  # the keys before this one, unchanged
        if out is not None and not drop:
            out[key] = new
    return s if out is None else out
