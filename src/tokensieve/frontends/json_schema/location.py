"""Where a schema is: :class:`Location` (a schema, its JSON pointer, the base URI in force)
and :func:`child_pointer`.

Kept apart from :mod:`.refs` so that it is compiled with the rest of the front-end (``refs``
stays plain Python: its :class:`~.refs.BaseURI` subclasses ``str``): the converter makes a
location for every subschema it visits, and a dataclass-generated ``__init__`` would run as
plain Python each time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from .refs import BaseURI

__all__ = ["Location", "child_pointer"]


def child_pointer(pointer: str, *parts: str | int) -> str:
    """Append reference tokens to a JSON pointer (escaping ``~`` and ``/``)."""
    for p in parts:
        pointer += "/" + str(p).replace("~", "~0").replace("/", "~1")
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
