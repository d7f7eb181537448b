"""Semantic validation after generation: :func:`validate` with the ``jsonschema`` package.

Formats are asserted (``FormatChecker``); a format whose checker needs an optional
package that is missing is not checked by ``jsonschema`` (see its documentation).
"""

from __future__ import annotations

from typing import Any

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from .converter import load_schema
from .refs import ROOT_URI, Resolver

__all__ = ["make_validator", "validate"]


def make_validator(schema: Any, resolver: Resolver | None = None) -> Any:
    """A draft 2020-12 validator for ``schema`` that asserts formats and never fetches."""
    root = dict(schema) if isinstance(schema, dict) else schema
    if isinstance(root, dict) and "$id" not in root:
        root["$id"] = ROOT_URI
    resource = Resource.from_contents(root, default_specification=DRAFT202012)
    registry: Registry = Registry().with_resource(ROOT_URI, resource)
    if isinstance(root, dict):
        registry = registry.with_resource(root["$id"], resource)
    cls = jsonschema.validators.validator_for(root, default=jsonschema.Draft202012Validator)
    return cls(root, registry=registry, format_checker=cls.FORMAT_CHECKER)


def validate(schema: Any, value: Any) -> list[str]:
    """Error messages for ``value`` under ``schema`` (dict, JSON text, Pydantic model...);
    an empty list means valid."""
    validator = make_validator(load_schema(schema))
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
        for e in validator.iter_errors(value)
    ]
