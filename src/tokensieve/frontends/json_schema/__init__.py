"""JSON Schema front-end: a schema becomes a grammar whose language is exactly the JSON
serializations of its valid instances. Reading order: :mod:`.converter` (entry point),
:mod:`.composition`, then one module per keyword family."""

from .converter import json_schema_to_grammar, load_schema
from .validate import validate

__all__ = ["json_schema_to_grammar", "load_schema", "validate"]
