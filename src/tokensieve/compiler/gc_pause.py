"""Pausing Python's cyclic garbage collector while grammars compile.

A compile allocates tens of thousands of short-lived objects (IR nodes, programs, tuples), and
CPython starts a collection every few hundred allocations; a full collection walks every
tracked object in the process, the caches of earlier compiles included. On the MaskBench dev
sample, collections took 16% of all compile time, most of it in the largest schemas. Almost
everything a compile allocates is freed by reference counting anyway, so the collector is
paused for the compile and resumed after it: the cycles it would have found are found by the
next collection, and far fewer collections run in all.

The pause is a small class rather than a ``@contextmanager`` generator: it runs once per
compile, usually right after something else has had the CPU, and the generator machinery
(a context-manager object, a generator frame, ``next`` on entry and exit) is Python code that
then runs from cold caches. Measured with a full collection before each use (as
``bench/compare.py``'s worker does): about 50 us for the generator, 11 us for the class.
"""

from __future__ import annotations

import gc
import threading
from types import TracebackType

__all__ = ["gc_paused"]

# The collector is one per process, so the pause is too: nested and concurrent compiles
# share it, and the last one out resumes collection if it was running when the first came in.
_lock = threading.Lock()
_depth = 0
_resume = False


class _Paused:
    """The context :func:`gc_paused` returns (stateless: the state is the module's)."""

    __slots__ = ()

    def __enter__(self) -> None:
        global _depth, _resume
        with _lock:
            if _depth == 0:
                _resume = gc.isenabled()
                gc.disable()
            _depth += 1

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        global _depth
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()


_PAUSED = _Paused()


def gc_paused() -> _Paused:
    """A context that runs its body with automatic garbage collection off (reentrant,
    thread-safe). If the collector was already disabled when the first pause began, it stays
    disabled."""
    return _PAUSED
