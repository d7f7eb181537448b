"""``compiler.gc_pause``: the collector is off while compiles run and back on after the last."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

import tokensieve as ts
from tokensieve.compiler.gc_pause import gc_paused
from tokensieve.ir import Grammar, literal


@pytest.fixture(autouse=True)
def _collector_on() -> Iterator[None]:
    gc.enable()
    yield
    gc.enable()


def test_pauses_and_resumes_also_when_nested_and_on_errors() -> None:
    with gc_paused():
        assert not gc.isenabled()
        with pytest.raises(ValueError), gc_paused():
            raise ValueError
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()


def test_a_collector_disabled_by_the_caller_stays_disabled() -> None:
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()


def test_overlapping_pauses_in_threads_resume_after_the_last() -> None:
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def first() -> None:
        with gc_paused():
            first_in.set()
            second_in.wait()
        first_out.set()

    def second() -> None:
        first_in.wait()
        with gc_paused():
            second_in.set()
            first_out.wait()
            seen.append(gc.isenabled())  # the first thread left, this one still compiles

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [False]
    assert gc.isenabled()


def test_the_compiler_pauses_only_when_asked() -> None:
    vocab = ts.Vocabulary([b"a", b"b", b"<eos>"], eos_token_ids=[2], special_token_ids=[2])
    seen: list[bool] = []

    def build(deadline: float) -> Grammar:
        seen.append(gc.isenabled())
        grammar = Grammar()
        grammar.add("root", literal("ab"))
        return grammar

    ts.Compiler(vocab)._cached(("test", 1), build, "test")
    ts.Compiler(vocab, pause_gc=False)._cached(("test", 2), build, "test")
    assert seen == [False, True]
    assert gc.isenabled()


def test_the_grammar_ir_is_freed_before_the_pause_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    """Alive when the collector resumes, the IR of a large schema (thousands of nodes) would be
    walked by the young collection that the compile's allocations trigger at once, just before
    reference counting frees it."""
    import tokensieve.compiler.compiler as compiler_module

    young_grammars: list[int] = []

    class Recording:
        def __enter__(self) -> None:
            gc_paused().__enter__()

        def __exit__(self, *exc: object) -> None:
            young_grammars.append(sum(1 for o in gc.get_objects(0) if type(o) is Grammar))
            gc_paused().__exit__(None, None, None)

    monkeypatch.setattr(compiler_module, "gc_paused", Recording)
    tokens = [b"a", b"b", b"{", b"}", b'"', b":", b"<eos>"]
    vocab = ts.Vocabulary(tokens, eos_token_ids=[6], special_token_ids=[6])
    gc.collect()  # no Grammar of an earlier test is young now
    schema = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(20)}}
    ts.Compiler(vocab).json_schema(schema)
    assert young_grammars == [0]
