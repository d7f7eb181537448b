"""``$ref`` resolution: ``$defs``/``definitions``, JSON pointers, ``$anchor``, ``$id`` bases.

The :class:`Resolver` indexes every schema resource once: each ``$id`` starts a resource
whose URI is resolved against the enclosing base, each ``$anchor`` (and
``$dynamicAnchor``, also a plain anchor) names a location inside it. ``$dynamicRef`` is
supported where it is static (:meth:`Resolver.resolve_dynamic`). A reference
is resolved against the base URI in force where it appears, then looked up as
"resource + JSON pointer" or "resource + anchor". Extra documents (remote schemas) may
be registered by URI; nothing is ever fetched from the network.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from ...errors import UnsupportedSchemaError

__all__ = ["Location", "Resolver", "child_pointer"]

ROOT_URI = "https://tokensieve.invalid/schema.json"  # urljoin needs a hierarchical scheme

# Keywords whose value is a subschema / a list / a map of subschemas (draft 2020-12 and older).
_SUB = {
    "additionalProperties",
    "propertyNames",
    "items",
    "additionalItems",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
}
_SUB_LIST = {"allOf", "anyOf", "oneOf", "prefixItems", "items"}
_SUB_MAP = {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}


def join_uri(base: str, ref: str) -> str:
    """``ref`` resolved against ``base``; also for non-hierarchical bases such as ``urn:``."""
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", ref):
        return ref
    if ref.startswith("#") or not ref:
        return urldefrag(base)[0] + ref
    return urljoin(base, ref)


def child_pointer(pointer: str, *parts: str | int) -> str:
    """Append reference tokens to a JSON pointer (escaping ``~`` and ``/``)."""
    for p in parts:
        pointer += "/" + str(p).replace("~", "~0").replace("/", "~1")
    return pointer


@dataclass(frozen=True)
class Location:
    """A schema together with where it is: its JSON pointer (from the root document, or
    ``uri#pointer`` for other documents) and the base URI in force there."""

    schema: Any
    pointer: str
    base: str
    scope: tuple[str, ...] = ()
    """Keys of the schemas this one was reached from *in place* (``allOf``, ``$ref``,
    ``anyOf``...): what ``unevaluatedProperties``/``unevaluatedItems`` can see."""
    annotates: bool = True
    """False under a ``not``: a negation contributes no annotations."""

    @property
    def key(self) -> str:
        return f"{self.base}#{self.pointer}"

    def inside(self, child: Location) -> Location:
        """``child`` as an in-place subschema of this one."""
        return replace(child, scope=(*self.scope, self.key), annotates=self.annotates and child.annotates)

    def with_schema(self, schema: Any) -> Location:
        return replace(self, schema=schema)


class Resolver:
    """Finds the target of ``$ref`` values within the root schema and registered documents."""

    def __init__(self, root: Any, documents: Mapping[str, Any] | None = None) -> None:
        self.root = root
        self._resources: dict[str, Location] = {}
        self._anchors: dict[str, Location] = {}
        self._dynamic: dict[str, set[str]] = {}  # $dynamicAnchor name -> resources defining it
        self.root_base = self._index(root, "", ROOT_URI)
        for uri, doc in (documents or {}).items():
            self._resources.setdefault(uri, Location(doc, uri + "#", self._index(doc, uri + "#", uri)))

    def root_location(self) -> Location:
        return Location(self.root, "", self.root_base)

    def _index(self, schema: Any, pointer: str, base: str) -> str:
        """Record resources and anchors under ``schema``; return the schema's own base."""
        doc_base = base
        if isinstance(schema, dict):
            sid = schema.get("$id")
            if isinstance(sid, str) and not sid.startswith("#"):
                base = join_uri(base, sid)
                base = urldefrag(base)[0]
            if doc_base != base or pointer == "" or pointer.endswith("#"):
                self._resources.setdefault(base, Location(schema, pointer, base))
            dynamic = schema.get("$dynamicAnchor")
            if isinstance(dynamic, str):
                self._dynamic.setdefault(dynamic, set()).add(base)
            for key in ("$anchor", "$dynamicAnchor"):
                name = schema.get(key)
                if isinstance(name, str):
                    self._anchors.setdefault(f"{base}#{name}", Location(schema, pointer, base))
            if isinstance(sid, str) and sid.startswith("#"):  # draft-06 style plain-name fragment id
                self._anchors.setdefault(f"{base}{sid}", Location(schema, pointer, base))
            for key, value in schema.items():
                if key in ("enum", "const", "default", "examples", "example"):
                    continue
                if key in _SUB_MAP and isinstance(value, dict):
                    for name, sub in value.items():
                        self._index(sub, child_pointer(pointer, key, name), base)
                elif key in _SUB_LIST and isinstance(value, list):
                    for i, sub in enumerate(value):
                        self._index(sub, child_pointer(pointer, key, i), base)
                elif key in _SUB and isinstance(value, (dict, bool)):
                    self._index(value, child_pointer(pointer, key), base)
        return base

    def resolve(self, ref: str, here: Location) -> Location:
        """The location ``ref`` points to, from a schema at ``here``."""
        target = join_uri(here.base, ref)
        uri, fragment = urldefrag(target)
        fragment = unquote(fragment)
        resource = self._resources.get(uri)
        if resource is None:
            raise UnsupportedSchemaError(
                f"cannot resolve $ref {ref!r}: {uri!r} is not a known schema "
                "(remote references are never fetched)",
                keyword="$ref",
                pointer=here.pointer,
            )
        if not fragment:
            return resource
        if not fragment.startswith("/"):
            anchor = self._anchors.get(f"{uri}#{fragment}")
            if anchor is None:
                raise UnsupportedSchemaError(
                    f"$ref {ref!r}: no anchor {fragment!r}", keyword="$ref", pointer=here.pointer
                )
            return anchor
        node = resource.schema
        pointer = resource.pointer
        base = resource.base
        for token in fragment[1:].split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                raise UnsupportedSchemaError(
                    f"$ref {ref!r} points to nothing", keyword="$ref", pointer=here.pointer
                )
            pointer = child_pointer(pointer, token)
            if (
                isinstance(node, dict)
                and isinstance(node.get("$id"), str)
                and not node["$id"].startswith("#")
            ):
                base = urldefrag(join_uri(base, node["$id"]))[0]
        return Location(node, pointer, base)

    def resolve_dynamic(self, ref: str, here: Location) -> Location:
        """``$dynamicRef``, when it is static: the initial target does not start a dynamic
        scope search (no ``$dynamicAnchor`` of that name) or a single resource defines the
        anchor, so every evaluation path ends at the same schema."""
        target = self.resolve(ref, here)
        name = urldefrag(join_uri(here.base, ref))[1]
        definers = self._dynamic.get(name, set())
        if (
            not isinstance(target.schema, dict)
            or target.schema.get("$dynamicAnchor") != name
            or len(definers) <= 1
        ):
            return target
        raise UnsupportedSchemaError(
            f"$dynamicRef {ref!r}: {len(definers)} schema resources define $dynamicAnchor {name!r}, so the "
            "target depends on the evaluation path",
            keyword="$dynamicRef",
            pointer=here.pointer,
        )

    @staticmethod
    def enter(schema: Any, pointer: str, base: str) -> Location:
        """The location of a subschema: its ``$id`` (if any) changes the base."""
        if isinstance(schema, dict):
            sid = schema.get("$id")
            if isinstance(sid, str) and not sid.startswith("#"):
                base = urldefrag(join_uri(base, sid))[0]
        return Location(schema, pointer, base)
