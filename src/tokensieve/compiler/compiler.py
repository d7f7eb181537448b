"""``Compiler``: sources -> :class:`CompiledGrammar` for one vocabulary, with a bounded cache."""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Literal

from .. import _core
from ..errors import LimitExceeded, UnsupportedSchemaError
from ..frontends.whitespace import WhitespacePolicy
from ..ir import Grammar
from ..limits import Limits
from ..vocabulary import Vocabulary
from .compiled import CompiledGrammar, TerminalCache, compile_grammar
from .gc_pause import gc_paused

__all__ = ["Compiler"]


class Compiler:
    """Compiles grammars for one vocabulary and caches them.

    The cache key is (kind of source, source, options, vocabulary fingerprint); the cache
    holds at most ``limits.cache_bytes`` of compiled grammars, least recently used first out,
    counting what their mask caches and head indexes grow to as they serve masks (see
    :attr:`cache_bytes`). A compiler is safe to use from several threads.

    With ``pause_gc`` (the default), Python's cyclic garbage collector is paused while a
    grammar compiles (see :mod:`tokensieve.compiler.gc_pause`): fewer, later collections.
    """

    def __init__(self, vocab: Vocabulary, *, limits: Limits | None = None, pause_gc: bool = True) -> None:
        self.vocab = vocab
        self.limits = limits or Limits()
        self.pause_gc = pause_gc
        self._cache: OrderedDict[tuple[Any, ...], CompiledGrammar] = OrderedDict()
        self._cache_bytes = 0
        self._lock = threading.Lock()
        self.cache_hits = 0
        self.cache_misses = 0
        self._terminals = TerminalCache.shared(vocab, self.limits)
        # The JSON Schema front-end is what most compiles need, and importing it takes tens of
        # milliseconds (its modules are compiled with mypyc): it loads with the compiler, so
        # that a server's first schema does not pay for it (in bench/compare.py's worker the
        # first schema took 42.5 ms to compile, the same schema compiled later 0.5 ms).
        # Kept here, not imported in json_schema(): a `from package import name` statement
        # runs importlib's Python code for the package each time (11 us with cold caches).
        from ..frontends.json_schema import json_schema_to_grammar

        self._json_schema_to_grammar = json_schema_to_grammar
        # The cached grammars' caches grow after they are cached; they report it here, so the
        # cache's bound holds without asking every grammar at every insert.
        self._meter = _core.MemoryMeter()

    # ------------------------------------------------------------------ sources
    def grammar(self, grammar: Grammar) -> CompiledGrammar:
        """Compile a grammar IR directly (not cached: IR objects are mutable)."""
        with self._compiling():
            return compile_grammar(grammar, self.vocab, self.limits, "grammar", self._terminals)

    def regex(self, pattern: str) -> CompiledGrammar:
        """Output must match ``pattern`` entirely (Python ``re`` / ECMAScript common subset)."""
        from ..frontends.regex import parse_regex

        def build(deadline: float) -> Grammar:
            g = Grammar()
            g.add("root", parse_regex(pattern))
            return g

        return self._cached(("regex", pattern), build, "regex")

    def ebnf(self, text: str, *, start: str = "root") -> CompiledGrammar:
        """A GBNF-compatible EBNF grammar; ``start`` names the start rule."""
        from ..frontends.ebnf import parse_ebnf

        return self._cached(
            ("ebnf", text, start),
            lambda deadline: parse_ebnf(text, start=start, special_tokens=self.vocab.token_id),
            "ebnf",
        )

    def json(self, *, whitespace: WhitespacePolicy | str | int | None = None) -> CompiledGrammar:
        """Any JSON value (RFC 8259)."""
        from ..frontends.json_value import json_grammar

        ws = WhitespacePolicy.coerce(whitespace)
        return self._cached(("json", ws.key()), lambda deadline: json_grammar(ws), "json")

    def choice(self, options: Sequence[str]) -> CompiledGrammar:
        """Exactly one of ``options``."""
        from ..frontends.choice import choice_grammar

        opts = tuple(options)
        return self._cached(("choice", opts), lambda deadline: choice_grammar(opts), "choice")

    def json_schema(
        self,
        schema: Any,
        *,
        whitespace: WhitespacePolicy | str | int | None = None,
        strict: bool = False,
        property_order: Literal["declared", "any"] = "declared",
        relax: bool | Iterable[str] = False,
    ) -> CompiledGrammar:
        """A JSON value valid under ``schema`` (dict, JSON text, Pydantic model or type hint)."""
        json_schema_to_grammar = self._json_schema_to_grammar
        ws = WhitespacePolicy.coerce(whitespace)
        relax_key: Any = relax if isinstance(relax, bool) else tuple(sorted(relax))
        try:
            source_key: Any = schema if isinstance(schema, str) else json.dumps(schema, sort_keys=True)
        except TypeError:
            source_key = ("object", id(schema), schema)  # classes and type hints: keyed by identity
        except RecursionError:
            raise UnsupportedSchemaError("the schema nests too deeply to convert") from None

        def build(deadline: float) -> Grammar:
            return json_schema_to_grammar(
                schema,
                whitespace=ws,
                strict=strict,
                property_order=property_order,
                relax=relax,
                deadline=deadline,
            )

        return self._cached(
            ("json_schema", source_key, ws.key(), strict, property_order, relax_key), build, "json_schema"
        )

    # ------------------------------------------------------------------ cache
    def _cached(
        self, key: tuple[Any, ...], build: Callable[[float], Grammar], source: str
    ) -> CompiledGrammar:
        """The cached grammar for ``key``, or ``build(deadline)`` compiled and cached; one
        ``Limits.max_compile_seconds`` deadline covers the front-end and the compile."""
        full_key = (*key, self.vocab.fingerprint)
        with self._lock:
            hit = self._cache.get(full_key)
            if hit is not None:
                self._cache.move_to_end(full_key)
                self.cache_hits += 1
                return hit
            self.cache_misses += 1
        deadline = time.monotonic() + self.limits.max_compile_seconds
        with self._compiling():
            compiled = self._compile(build, deadline, source)
        with self._lock:
            if full_key not in self._cache:
                self._cache[full_key] = compiled
                self._cache_bytes += compiled.stats.memory_bytes
                while self.cache_bytes > self.limits.cache_bytes and len(self._cache) > 1:
                    _, old = self._cache.popitem(last=False)
                    self._cache_bytes -= old.stats.memory_bytes
                    del old  # its caches give their bytes back to the meter if nothing else holds it
        return compiled

    def _compile(self, build: Callable[[float], Grammar], deadline: float, source: str) -> CompiledGrammar:
        """``build(deadline)`` compiled. Its own function so that the grammar IR dies when it
        returns, inside the collector's pause: the IR is thousands of tracked objects (8,400 for
        Kubernetes kb_144), and still alive when the pause ended, they were all walked by the
        young collection that the compile's allocations trigger right after it (1-5 ms for the
        largest MaskBench schemas), only to be freed a moment later by reference counting."""
        try:
            grammar = build(deadline)
        except RecursionError:  # a parser's own recursion (regex or EBNF nesting)
            raise LimitExceeded(
                f"the {source} nests too deeply to parse", limit="max_grammar_depth"
            ) from None
        return compile_grammar(
            grammar, self.vocab, self.limits, source, self._terminals, deadline, self._meter
        )

    @property
    def cache_bytes(self) -> int:
        """Bytes charged to the cache now: the compile-time sizes of the cached grammars plus
        what the mask caches and head indexes of the grammars it handed out (and that are
        still alive) have grown to."""
        return self._cache_bytes + int(self._meter.bytes)

    def _compiling(self) -> AbstractContextManager[None]:
        """The context a compile runs in: the garbage collector paused, unless ``pause_gc`` is off."""
        return gc_paused() if self.pause_gc else nullcontext()

    def clear_cache(self) -> None:
        with self._lock:
            self._cache.clear()
            self._cache_bytes = 0
