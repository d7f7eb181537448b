"""Shared checks: a schema's grammar must accept exactly the valid instances given."""

from __future__ import annotations

import json
from typing import Any

from tests.oracle import Oracle
from tokensieve.frontends.json_schema import json_schema_to_grammar


def accepts(schema: Any, text: str | bytes, **options: Any) -> bool:
    data = text.encode() if isinstance(text, str) else text
    return Oracle(json_schema_to_grammar(schema, **options)).is_complete(data)


def check(schema: Any, valid: list[Any], invalid: list[Any], **options: Any) -> None:
    """Each valid value (json.dumps, with indent=2, and with ensure_ascii) is complete; each
    invalid one is not.

    Invalid items given as ``str`` wrapped in ``Raw`` are raw texts (e.g. other spellings).
    """
    oracle = Oracle(json_schema_to_grammar(schema, **options))
    for v in valid:
        for text in _texts(v):
            assert oracle.is_complete(text), f"valid rejected: {text!r}"
    for v in invalid:
        for text in _texts(v):
            assert not oracle.is_complete(text), f"invalid accepted: {text!r}"


class Raw(str):
    """A literal JSON text, used as is."""


def _texts(v: Any) -> list[bytes]:
    if isinstance(v, Raw):
        return [v.encode()]
    texts = [json.dumps(v, ensure_ascii=False).encode(), json.dumps(v, indent=2, ensure_ascii=False).encode()]
    escaped = json.dumps(v).encode()  # ensure_ascii: every non-ASCII character as \uXXXX
    return texts if escaped in texts else [*texts, escaped]
