"""``$ref`` resolution: ``$defs``/``definitions``, JSON pointers, ``$anchor``, ``$id`` bases.

The :class:`Resolver` indexes every schema resource once: each ``$id`` starts a resource
whose URI is resolved against the enclosing base, each ``$anchor`` (and
``$dynamicAnchor``, also a plain anchor) names a location inside it. A reference
is resolved against the base URI in force where it appears, then looked up as
"resource + JSON pointer" or "resource + anchor". Extra documents (remote schemas) may
be registered by URI; nothing is ever fetched from the network.

``$dynamicRef`` (:meth:`Resolver.resolve_dynamic`) depends on the *dynamic scope*: the
schema resources evaluation passed through to get here. Its target is the outermost
resource of that scope that defines the ``$dynamicAnchor``. As in ``jsonschema`` (the
reference ``validate`` uses), a resource joins the scope when a reference is followed
from inside it, the one holding the ``$dynamicRef`` included; a subschema with an ``$id``
entered in place does not join by itself. Only the outermost definer matters, per anchor
name, so a location carries it in its :class:`BaseURI` (the base URI plus these
bindings): two locations of one schema reached through different scopes then differ,
and the converter, which keys its rules by ``(schema, base)``, builds one rule per scope
that changes the meaning. Names defined by one resource only are not bound (their
``$dynamicRef`` is static), so schemas without competing dynamic anchors get no extra
rules.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Final
from urllib.parse import unquote, urldefrag, urljoin

from ...errors import UnsupportedSchemaError
from .location import BaseURI, Location, child_pointer

__all__ = [
    "SUBSCHEMA",
    "SUBSCHEMA_LIST",
    "SUBSCHEMA_MAP",
    "BaseURI",
    "Location",
    "Resolver",
    "child_pointer",
    "names_no_resources",
]

ROOT_URI: Final = "https://tokensieve.invalid/schema.json"  # urljoin needs a hierarchical scheme

# Keywords whose value is a subschema / a list / a map of subschemas (draft 2020-12 and older).
SUBSCHEMA: Final = {
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
SUBSCHEMA_LIST: Final = {"allOf", "anyOf", "oneOf", "prefixItems", "items"}
SUBSCHEMA_MAP: Final = {
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
}


# The keys that make a subschema a resource or name it (see Resolver._index), as JSON spells
# them without escapes; and an escape of an ASCII character, which could spell one otherwise
# (escapes of other characters, which json.dumps writes for every non-ASCII one, cannot).
_RESOURCE_KEYS: Final = ('"$id"', '"$anchor"', '"$dynamicAnchor"')
_ASCII_ESCAPE: Final = re.compile(r"\\u00[0-7]")
_ASCII_ESCAPE_BYTES: Final = re.compile(rb"\\u00[0-7]")


def names_no_resources(text: str | bytes) -> bool:
    """Whether the JSON text of a schema certainly holds no ``$id``, ``$anchor`` or
    ``$dynamicAnchor`` key anywhere, so that the resolver need not walk its subschemas to find
    them (a walk of every subschema: up to a tenth of a large schema's conversion). A key is
    written in quotes, and only an escape of an ASCII character could spell one differently:
    a text with one of those (``\\u0000`` to ``\\u007f``), or with one of the keys anywhere
    (a property of that name included), is walked."""
    if isinstance(text, bytes):
        keys = [key.encode() for key in _RESOURCE_KEYS]
        return _ASCII_ESCAPE_BYTES.search(text) is None and not any(key in text for key in keys)
    return _ASCII_ESCAPE.search(text) is None and not any(key in text for key in _RESOURCE_KEYS)


def join_uri(base: str, ref: str) -> str:
    """``ref`` resolved against ``base``; also for non-hierarchical bases such as ``urn:``."""
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", ref):
        return ref
    if ref.startswith("#") or not ref:
        return urldefrag(base)[0] + ref
    return urljoin(base, ref)


def split_ref(base: str, ref: str) -> tuple[str, str]:
    """``ref`` resolved against ``base`` and split into the resource URI and the fragment
    (percent-decoded): ``urldefrag(join_uri(base, ref))``. A fragment-only reference
    ("#/definitions/x", nearly every ``$ref``) takes a shortcut with the same answer:
    urllib parses the part before the "#" alone, so the URI is the base's own, and the
    fragment is the reference's, unless it holds a tab or line break (which urllib drops)."""
    if ref.startswith("#") and "#" not in base and "\t" not in ref and "\n" not in ref and "\r" not in ref:
        return _defragged(base), unquote(ref[1:])
    uri, fragment = urldefrag(join_uri(base, ref))
    return uri, unquote(fragment)


@lru_cache(maxsize=256)
def _defragged(base: str) -> str:
    """The URI urllib gives a fragment-only reference against ``base`` (no "#" in it)."""
    return urldefrag(base + "#")[0]


_Path = tuple[Any, ...]
"""A JSON pointer not yet spelled out: ``(parent, *reference tokens)``, the parent a pointer
string or another ``_Path`` (see :func:`_spelled`)."""


def _spelled(pointer: str | _Path) -> str:
    """The JSON pointer string of ``pointer``."""
    if isinstance(pointer, str):
        return pointer
    parts: list[tuple[Any, ...]] = []
    node: Any = pointer
    while not isinstance(node, str):
        parts.append(node[1:])
        node = node[0]
    spelled: str = node
    for i in range(len(parts) - 1, -1, -1):  # (not reversed(): mypyc 2.4 fails to compile it here)
        spelled = child_pointer(spelled, *parts[i])
    return spelled


class Resolver:
    """Finds the target of ``$ref`` values within the root schema and registered documents."""

    def __init__(
        self, root: Any, documents: Mapping[str, Any] | None = None, *, subschema_ids: bool = True
    ) -> None:
        """``subschema_ids=False`` says that no subschema of ``root`` defines an ``$id``, an
        ``$anchor`` or a ``$dynamicAnchor`` (see :func:`names_no_resources`): the root's
        subschemas are then not walked to find them."""
        self.root = root
        self._resources: dict[str, Location] = {}
        self._anchors: dict[str, Location] = {}
        self._dynamic: dict[str, set[str]] = {}  # $dynamicAnchor name -> resources defining it
        root_uri = self._index(root, "", ROOT_URI, descend=subschema_ids)
        for uri, doc in (documents or {}).items():
            if uri not in self._resources:
                self._resources[uri] = Location(doc, uri + "#", BaseURI(self._index(doc, uri + "#", uri)))
        # Only names defined by several resources make a $dynamicRef depend on the scope.
        definers: dict[str, set[str]] = {}
        for name, uris in self._dynamic.items():
            if len(uris) > 1:
                for uri in uris:
                    definers.setdefault(uri, set()).add(name)
        self._definers = {uri: frozenset(names) for uri, names in definers.items()}
        self.root_base = BaseURI(root_uri, (), self._definers)
        # resolve()'s answers by (reference, base in force): a schema's references repeat (one
        # Github schema resolves "#/definitions/field" 245 times), and each lookup walks the
        # pointer and makes a location anew. The base carries the dynamic scope, so equal keys
        # have equal answers; failures raise each time and are not kept.
        self._resolved: dict[tuple[str, BaseURI], Location] = {}

    def root_location(self) -> Location:
        return Location(self.root, "", self.root_base)

    def _index(self, schema: Any, pointer: str | _Path, base: str, descend: bool = True) -> str:
        """Record resources and anchors under ``schema`` (only its own without ``descend``);
        return the schema's own base.

        ``pointer`` is a string for a document's root and a :data:`_Path` below it: most
        subschemas define no ``$id`` or anchor, and their pointers are never spelled out."""
        doc_base = base
        if isinstance(schema, dict):
            sid = schema.get("$id")
            if isinstance(sid, str) and not sid.startswith("#"):
                base = join_uri(base, sid)
                base = urldefrag(base)[0]
            if doc_base != base or isinstance(pointer, str):
                self._resources.setdefault(base, Location(schema, _spelled(pointer), BaseURI(base)))
            dynamic = schema.get("$dynamicAnchor")
            if isinstance(dynamic, str):
                self._dynamic.setdefault(dynamic, set()).add(base)
            anchors = [f"{base}#{n}" for n in (schema.get("$anchor"), dynamic) if isinstance(n, str)]
            if isinstance(sid, str) and sid.startswith("#"):  # draft-06 style plain-name fragment id
                anchors.append(f"{base}{sid}")
            for anchor in anchors:
                self._anchors.setdefault(anchor, Location(schema, _spelled(pointer), BaseURI(base)))
            if not descend:
                return base
            for key, value in schema.items():
                if key in ("enum", "const", "default", "examples", "example"):
                    continue
                if key in SUBSCHEMA_MAP and isinstance(value, dict):
                    for name, sub in value.items():
                        if isinstance(sub, dict):
                            self._index(sub, (pointer, key, name), base)
                elif key in SUBSCHEMA_LIST and isinstance(value, list):
                    for i, sub in enumerate(value):
                        if isinstance(sub, dict):
                            self._index(sub, (pointer, key, i), base)
                elif key in SUBSCHEMA and isinstance(value, dict):
                    self._index(value, (pointer, key), base)
        return base

    def resolve(self, ref: str, here: Location) -> Location:
        """The location ``ref`` (a ``$ref``) points to, from a schema at ``here``.

        A ``$ref`` is static, but ``jsonschema`` resolves one whose fragment names a
        ``$dynamicAnchor`` like a ``$dynamicRef``: where the two readings pick different
        schemas, the reference is an error rather than either guess.
        """
        key = (ref, here.base)
        hit = self._resolved.get(key)
        if hit is not None:
            return hit
        target = self._lookup(ref, here)
        anchor = target.schema.get("$dynamicAnchor") if isinstance(target.schema, dict) else None
        if anchor is not None and anchor == split_ref(here.base.uri, ref)[1]:
            name: str = anchor
            outermost = target.base.binding(name)
            if outermost is not None and outermost != target.base.uri:
                raise UnsupportedSchemaError(
                    f"$ref {ref!r} names a $dynamicAnchor that {outermost!r} also defines, earlier in the "
                    "dynamic scope: static by the specification, dynamic in jsonschema",
                    keyword="$ref",
                    pointer=here.pointer,
                )
        self._resolved[key] = target
        return target

    def _lookup(self, ref: str, here: Location) -> Location:
        """The static target of ``ref`` from ``here``, whose resource thereby joins the
        dynamic scope."""
        scope = here.base.joined()
        uri, fragment = split_ref(here.base.uri, ref)
        resource = self._resources.get(uri)
        if resource is None:
            raise UnsupportedSchemaError(
                f"cannot resolve $ref {ref!r}: {uri!r} is not a known schema "
                "(remote references are never fetched)",
                keyword="$ref",
                pointer=here.pointer,
            )
        if not fragment:
            return resource.with_base(scope.at(resource.base.uri))
        if not fragment.startswith("/"):
            anchor = self._anchors.get(f"{uri}#{fragment}")
            if anchor is None:
                raise UnsupportedSchemaError(
                    f"$ref {ref!r}: no anchor {fragment!r}", keyword="$ref", pointer=here.pointer
                )
            return anchor.with_base(scope.at(anchor.base.uri))
        node = resource.schema
        pointer = resource.pointer
        base = resource.base.uri
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
        return Location(node, pointer, scope.at(base))

    def resolve_dynamic(self, ref: str, here: Location) -> Location:
        """``$dynamicRef``: the static target of ``ref``, unless that target has a
        ``$dynamicAnchor`` of the fragment's name; then the outermost resource of the
        dynamic scope that defines that dynamic anchor (the static target when none does)."""
        target = self._lookup(ref, here)
        name = split_ref(here.base.uri, ref)[1]
        if not isinstance(target.schema, dict) or target.schema.get("$dynamicAnchor") != name:
            return target
        outermost = target.base.binding(name)  # the scope now holds this resource too
        if outermost is None:
            return target
        anchor = self._anchors[f"{outermost}#{name}"]
        return anchor.with_base(target.base.at(outermost))

    @staticmethod
    def enter(schema: Any, pointer: str, base: BaseURI) -> Location:
        """The location of a subschema: its ``$id`` (if any) changes the base."""
        if isinstance(schema, dict):
            sid = schema.get("$id")
            if isinstance(sid, str) and not sid.startswith("#"):
                base = base.at(urldefrag(join_uri(base.uri, sid))[0])
        return Location(schema, pointer, base)
