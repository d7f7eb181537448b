"""Run one engine in a child process, so that a hang, a crash or runaway memory is an outcome.

The parent (:class:`EngineWorker`) sends one :class:`~bench.common.Case` at a time; the child
(:func:`worker_main`) compiles it, times the first mask, then runs each instance and streams
one message per instance back. The parent waits for every message with a timeout and watches
the child's resident memory; on a timeout, a dead child or memory over the cap it kills the
child, records the outcome and starts a fresh child for the next case.

Timing happens in the child around the engine calls only, so the pipe and the parent's
polling never enter the numbers. Two clocks (see :class:`Clocks`):

- ``cpu`` (default): CPU time, the process's for compiles (all threads: xgrammar compiles
  on several) and the thread's for masks and accepts. On a shared, loaded machine it
  measures the work, not the time slices lost to other programs; timeouts then count the
  child's CPU seconds too (with a wall-clock backstop for a child that hangs idle).
- ``wall``: ``perf_counter``, for a quiet machine.

Reading a CPU clock is a system call (about 1 us); its cost, calibrated once per child, is
subtracted from every interval so that microsecond masks are not inflated.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import statistics
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from .common import Case, Engine, cpu_seconds, release_free_memory, rss_bytes

# Seconds an engine may take to load its tokenizer before the run gives up on it.
STARTUP_TIMEOUT_S = 600.0
# How often the parent checks the child's memory while waiting (does not affect timings).
POLL_S = 0.05
# With the cpu clock, a child idle this many times the timeout (wall clock) is hung.
WALL_BACKSTOP_FACTOR = 10.0
CLOCK_NAMES = ("cpu", "wall")


class Clocks:
    """The child's two timers, for compiles and for steps (one mask or one accept).

    Usage: ``t0 = clocks.step_now(); ...; seconds = clocks.step_since(t0)`` (same with
    ``compile_now`` / ``compile_since``). ``*_now`` return raw nanoseconds; ``*_since``
    return seconds with the calibrated cost of one clock read taken off.
    """

    def __init__(self, name: str) -> None:
        if name not in CLOCK_NAMES:
            raise ValueError(f"clock must be one of {CLOCK_NAMES}, not {name!r}")
        self.name = name
        self.compile_now: Callable[[], int] = time.process_time_ns if name == "cpu" else time.perf_counter_ns
        self.step_now: Callable[[], int] = time.thread_time_ns if name == "cpu" else time.perf_counter_ns
        self.compile_overhead_ns = self._overhead(self.compile_now)
        self.step_overhead_ns = self._overhead(self.step_now)

    @staticmethod
    def _overhead(clock: Callable[[], int]) -> int:
        """Median cost of one clock read, as seen by a back-to-back pair."""
        return int(statistics.median(-(clock() - clock()) for _ in range(2001)))

    def compile_since(self, t0: int) -> float:
        return max(0, self.compile_now() - t0 - self.compile_overhead_ns) * 1e-9

    def step_since(self, t0: int) -> float:
        return max(0, self.step_now() - t0 - self.step_overhead_ns) * 1e-9


# --------------------------------------------------------------------------- results
@dataclass
class InstanceResult:
    """What happened to one instance: its label and the engine's verdict.

    ``outcome`` is ``"accepted"`` (every token allowed and EOS allowed at the end),
    ``"rejected_token"`` (a token was masked out), ``"rejected_eos"`` (all tokens allowed,
    EOS not), ``"refused"`` (the mask allowed a token that ``accept`` then refused),
    ``"engine_error"`` (the engine raised or entered an error state) or ``"timeout"`` /
    ``"crash"`` / ``"oom"`` (the child was killed or died).
    """

    valid: bool
    outcome: str
    detail: str = ""


@dataclass
class CaseResult:
    """One case under one engine: compile outcome and time, memory, instance verdicts, times.

    ``status`` is ``"compiled"``, ``"compile_error"``, ``"timeout"``, ``"crash"`` or ``"oom"``
    (the last three for the compile step). Times are in seconds. ``mask_times`` holds every
    mask computed for the instances (the first mask of the compile step is part of
    ``compile_s``, time to first mask, and not repeated there).
    """

    name: str
    group: str
    status: str
    error: str = ""
    compile_s: float | None = None
    memory_reported: int | None = None
    rss_delta: int | None = None
    instances: list[InstanceResult] = field(default_factory=list)
    mask_times: array = field(default_factory=lambda: array("d"))
    accept_times: array = field(default_factory=lambda: array("d"))


# --------------------------------------------------------------------------- child side
def _run_instance(
    engine: Engine, compiled: Any, tokens: list[int], valid: bool, clocks: Clocks, conn: Connection
) -> None:
    """Feed ``tokens`` one by one, timing each mask and accept; send the verdict and times."""
    masks = array("d")
    accepts = array("d")
    outcome, detail = "accepted", ""
    clock, since = clocks.step_now, clocks.step_since
    try:
        session = engine.session(compiled)
        for i, token in enumerate(tokens):
            t0 = clock()
            session.fill()
            masks.append(since(t0))
            error = session.error()
            if error:
                outcome, detail = "engine_error", error
                break
            if not session.allowed(token):
                outcome, detail = "rejected_token", f"token {i} ({token})"
                break
            t0 = clock()
            ok = session.accept(token)
            accepts.append(since(t0))
            if not ok:
                outcome, detail = "refused", f"token {i} ({token}) allowed by the mask, refused by accept"
                break
        else:
            t0 = clock()
            session.fill()
            masks.append(since(t0))
            error = session.error()
            if error:
                outcome, detail = "engine_error", error
            elif not session.eos_allowed():
                outcome = "rejected_eos"
    except Exception as exc:  # any engine failure is an outcome of this instance, not of the run
        outcome, detail = "engine_error", f"{type(exc).__name__}: {exc}"[:300]
    conn.send(("instance", InstanceResult(valid, outcome, detail), masks.tobytes(), accepts.tobytes()))


def _run_case(engine: Engine, case: Case, clocks: Clocks, conn: Connection) -> None:
    gc.collect()
    release_free_memory()
    rss0 = rss_bytes()
    t0 = clocks.compile_now()
    try:
        compiled = engine.compile(case.kind, case.source)
        first = engine.session(compiled)
        first.fill()
        error = first.error()
        if error:  # llguidance reports some grammar problems only at the first mask
            raise RuntimeError(error)
    except Exception as exc:  # a grammar the engine rejects (or fails on) is an outcome
        conn.send(("compile_error", f"{type(exc).__name__}: {exc}"[:300]))
        return
    compile_s = clocks.compile_since(t0)
    conn.send(("compiled", compile_s, engine.memory_bytes(compiled), rss_bytes() - rss0))
    for inst in case.instances:
        _run_instance(engine, compiled, inst.tokens, inst.valid, clocks, conn)
    del compiled


def worker_main(engine_name: str, clock: str, conn: Connection) -> None:
    """Child entry point: load the engine, then serve cases until the parent sends ``None``."""
    from .peers import load_engine

    engine = load_engine(engine_name)
    clocks = Clocks(clock)
    overhead = {"compile_ns": clocks.compile_overhead_ns, "step_ns": clocks.step_overhead_ns}
    conn.send(("ready", engine.version(), engine.settings(), overhead))
    while True:
        case = conn.recv()
        if case is None:
            return
        _run_case(engine, case, clocks, conn)


# --------------------------------------------------------------------------- parent side
class EngineUnavailable(RuntimeError):
    """The engine could not even start (not installed, tokenizer failed to load)."""


class EngineWorker:
    """The parent's handle on one engine's child process; restarts the child when needed."""

    def __init__(self, engine: str, timeout_s: float, max_rss_bytes: int, clock: str = "cpu") -> None:
        if clock not in CLOCK_NAMES:
            raise ValueError(f"clock must be one of {CLOCK_NAMES}, not {clock!r}")
        self.engine = engine
        self.clock = clock
        self.timeout_s = timeout_s
        self.max_rss_bytes = max_rss_bytes
        self.version = ""
        self.settings = ""
        self.clock_overhead: dict[str, int] = {}  # calibrated cost of one clock read, subtracted
        self.restarts = 0
        self._ctx = mp.get_context("spawn")  # a clean interpreter: no state inherited from the parent
        self._proc: Any = None
        self._conn: Connection | None = None

    # -- process management
    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=worker_main, args=(self.engine, self.clock, child),
                                       daemon=True)
        self._proc.start()
        child.close()
        self._conn = parent
        kind, payload = self._wait(STARTUP_TIMEOUT_S, cpu_budget=False)
        if kind != "ready":
            self._kill()
            raise EngineUnavailable(f"{self.engine} failed to start: {kind} {payload}")
        self.version, self.settings, self.clock_overhead = payload[1], payload[2], payload[3]

    def _kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.join()
        if self._conn is not None:
            self._conn.close()
        self._proc = self._conn = None

    def close(self) -> None:
        """Stop the child (politely if it is idle)."""
        if self._conn is not None and self._proc is not None and self._proc.is_alive():
            try:
                self._conn.send(None)
                self._proc.join(timeout=10)
            except (BrokenPipeError, OSError):
                pass
        self._kill()

    def _wait(self, timeout_s: float, cpu_budget: bool = True) -> tuple[str, Any]:
        """The child's next message, or ``("timeout"|"crash"|"oom", detail)``.

        With the cpu clock (and ``cpu_budget``) the timeout counts the child's CPU seconds,
        and a wall-clock backstop of :data:`WALL_BACKSTOP_FACTOR` times it catches idle hangs.
        """
        assert self._conn is not None and self._proc is not None
        by_cpu = cpu_budget and self.clock == "cpu"
        pid = self._proc.pid
        cpu0 = cpu_seconds(pid) if by_cpu else 0.0
        wall_limit = timeout_s * (WALL_BACKSTOP_FACTOR if by_cpu else 1.0)
        deadline = time.monotonic() + wall_limit
        while True:
            try:
                if self._conn.poll(POLL_S):
                    msg = self._conn.recv()
                    return msg[0], msg
            except (EOFError, OSError):
                pass  # the child died; reported below
            if not self._proc.is_alive():
                self._proc.join()
                return "crash", f"exit code {self._proc.exitcode}"
            try:
                rss = rss_bytes(pid)
                cpu = cpu_seconds(pid) - cpu0 if by_cpu else 0.0
            except OSError:
                continue  # exiting right now; the next round reports it
            if rss > self.max_rss_bytes:
                return "oom", f"resident memory {rss / 2**20:.0f} MiB over the cap"
            if cpu > timeout_s:
                return "timeout", f"no answer within {timeout_s:g} CPU seconds"
            if time.monotonic() > deadline:
                return "timeout", f"no answer within {wall_limit:g} s (wall clock)"

    # -- one case
    def run(self, case: Case) -> CaseResult:
        """Compile ``case`` and run its instances; never raises for engine misbehaviour."""
        if self._proc is None:
            try:
                self._start()
            except EngineUnavailable as exc:
                if not self.version:
                    raise  # never started: the engine is unusable, not this case
                # A restart after a crash failed: count it against this case and retry on the next.
                return CaseResult(case.name, case.group, "crash", error=str(exc))
        assert self._conn is not None
        self._conn.send(case)
        kind, msg = self._wait(self.timeout_s)
        if kind == "compile_error":
            return CaseResult(case.name, case.group, "compile_error", error=msg[1])
        if kind != "compiled":
            self._restart()
            return CaseResult(case.name, case.group, kind, error=str(msg))
        result = CaseResult(case.name, case.group, "compiled",
                            compile_s=msg[1], memory_reported=msg[2], rss_delta=msg[3])
        for n in range(len(case.instances)):
            kind, msg = self._wait(self.timeout_s)
            if kind != "instance":
                # The child hung or died on this instance: it and the rest of the case get the outcome.
                self._restart()
                for rest in case.instances[n:]:
                    result.instances.append(InstanceResult(rest.valid, kind, str(msg)))
                break
            result.instances.append(msg[1])
            result.mask_times.frombytes(msg[2])
            result.accept_times.frombytes(msg[3])
        return result

    def _restart(self) -> None:
        self._kill()
        self.restarts += 1  # the next run() starts a fresh child
