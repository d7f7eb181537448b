"""Where a schema is: :class:`Location` (a schema, its JSON pointer, the base URI in force),
:class:`BaseURI` and :func:`child_pointer`.

The converter makes a location for every subschema it visits and keys its memos by them, so
these are compiled classes with their methods written out (a dataclass-generated
``__init__`` or ``__hash__`` would run as plain Python even when compiled).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["BaseURI", "Bindings", "Location", "child_pointer"]


Bindings = tuple[tuple[str, str], ...]
"""``$dynamicAnchor`` name -> URI of the outermost resource in the dynamic scope defining it,
sorted by name."""


class BaseURI:
    """The base URI in force at a schema location, with the dynamic scope that reached it.

    ``uri`` is the URI (``str(base)`` too). Equality and hashing also include ``dynamic``, the
    bindings of the contested ``$dynamicAnchor`` names (see :mod:`.refs`): a base without
    bindings equals the plain URI string, and hashes like it. Immutable.
    """

    def __init__(
        self, uri: str, dynamic: Bindings = (), definers: Mapping[str, frozenset[str]] | None = None
    ) -> None:
        self.uri: Final = uri
        self.dynamic: Final = dynamic
        self.definers: Final[Mapping[str, frozenset[str]]] = {} if definers is None else definers
        """Resource URI -> contested dynamic anchor names it defines (shared by the Resolver)."""
        # Computed once: every memo key of the conversion holds a base, and is hashed at
        # each lookup (2.5% of a WashingtonPost front-end when computed at each call).
        self._hash: Final = hash((uri, dynamic)) if dynamic else hash(uri)

    def __str__(self) -> str:
        return self.uri

    def __repr__(self) -> str:
        return f"BaseURI({self.uri!r}, {self.dynamic!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, BaseURI):
            return self.uri == other.uri and self.dynamic == other.dynamic
        if isinstance(other, str):
            return not self.dynamic and self.uri == other
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return self._hash

    def at(self, uri: str) -> BaseURI:
        """The base URI ``uri`` in the same dynamic scope."""
        return BaseURI(uri, self.dynamic, self.definers)

    def joined(self) -> BaseURI:
        """This base once its resource has joined the dynamic scope (a reference is
        followed from it): it binds the contested names it defines that are still free."""
        bound = dict(self.dynamic)
        fresh = {name: self.uri for name in self.definers.get(self.uri, ()) if name not in bound}
        if not fresh:  # the outermost definer of a name stays bound
            return self
        return BaseURI(self.uri, tuple(sorted({**bound, **fresh}.items())), self.definers)

    def binding(self, name: str) -> str | None:
        """The resource bound to the dynamic anchor ``name`` in this scope, if any."""
        return dict(self.dynamic).get(name)


def child_pointer(pointer: str, *parts: str | int) -> str:
    """Append reference tokens to a JSON pointer (escaping ``~`` and ``/``)."""
    # Made for every subschema the conversion enters (3% of a WashingtonPost compile): a
    # token with nothing to escape is not scanned twice more, and one format builds the result.
    for p in parts:
        token = p if isinstance(p, str) else str(p)
        if "~" in token or "/" in token:
            token = token.replace("~", "~0").replace("/", "~1")
        pointer = f"{pointer}/{token}"
    return pointer


class Location:
    """A schema together with where it is: its JSON pointer (from the root document, or
    ``uri#pointer`` for other documents) and the base URI in force there. Immutable.

    ``scope`` holds the keys of the schemas this one was reached from *in place* (``allOf``,
    ``$ref``, ``anyOf``...): what ``unevaluatedProperties``/``unevaluatedItems`` can see.
    ``annotates`` is False under a ``not``: a negation contributes no annotations.
    """

    __match_args__ = ("schema", "pointer", "base", "scope", "annotates")

    def __init__(
        self, schema: Any, pointer: str, base: BaseURI, scope: tuple[str, ...] = (), annotates: bool = True
    ) -> None:
        self.schema: Final = schema
        self.pointer: Final = pointer
        self.base: Final = base
        self.scope: Final = scope
        self.annotates: Final = annotates

    @property
    def key(self) -> str:
        return f"{self.base}#{self.pointer}"

    def inside(self, child: Location) -> Location:
        """``child`` as an in-place subschema of this one."""
        scope = (*self.scope, self.key)
        return Location(child.schema, child.pointer, child.base, scope, self.annotates and child.annotates)

    def with_schema(self, schema: Any) -> Location:
        return Location(schema, self.pointer, self.base, self.scope, self.annotates)

    def with_base(self, base: BaseURI) -> Location:
        return Location(self.schema, self.pointer, base, self.scope, self.annotates)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Location):
            return NotImplemented
        return (
            self.schema == other.schema
            and self.pointer == other.pointer
            and self.base == other.base
            and self.scope == other.scope
            and self.annotates == other.annotates
        )

    def __hash__(self) -> int:  # the schema (often a dict) is left out; equal locations agree
        return hash((self.pointer, self.base, self.scope, self.annotates))

    def __repr__(self) -> str:
        return (
            f"Location(schema={self.schema!r}, pointer={self.pointer!r}, base={self.base!r}, "
            f"scope={self.scope!r}, annotates={self.annotates!r})"
        )
