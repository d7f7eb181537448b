"""Shared pieces of the side-by-side benchmarks: data, tokenizer, statistics, engine protocol.

Every benchmark in this folder measures engines on the same inputs:

- the Llama-3 128k tokenizer from ``../shared/tokenizers`` (``tokenizers`` library for encoding);
- the MaskBench dev split from ``../shared/datasets/maskbench/dev`` (format in its README);
- each instance serialized with ``json.dumps(data, ensure_ascii=False)``.

Engines are adapters in :mod:`peers` implementing :class:`Engine`; the worker process in
:mod:`worker` drives them. Nothing here imports an engine.
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import platform
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
MASKBENCH_DEV = SHARED / "datasets" / "maskbench" / "dev"
LLAMA3_TOKENIZER = SHARED / "tokenizers" / "hf" / "llama3-128k.tokenizer.json"
# <|end_of_text|> and <|eot_id|>: the stop tokens of Llama-3 instruct models, given to every engine.
LLAMA3_EOS: tuple[int, ...] = (128001, 128009)
RESULTS_DIR = ROOT / "bench" / "results"

# The percentiles every table reports ("max" is the 100th).
PERCENTILES: tuple[tuple[str, float], ...] = (
    ("p50", 50.0),
    ("p90", 90.0),
    ("p99", 99.0),
    ("p99.9", 99.9),
    ("max", 100.0),
)


# --------------------------------------------------------------------------- data
@dataclass
class Instance:
    """One test string: its text, its Llama-3 token ids and whether it should be accepted."""

    text: str
    tokens: list[int]
    valid: bool


@dataclass
class Case:
    """One grammar source and the strings to run through it.

    ``kind`` is what the engine is asked to compile: ``"json_schema"`` (``source`` is the
    schema as JSON text), ``"json"`` (any JSON value; ``source`` unused) or ``"gbnf"``
    (``source`` is a llama.cpp-style GBNF grammar with start rule ``root``).
    """

    name: str
    kind: str
    source: str
    instances: list[Instance] = field(default_factory=list)

    @property
    def group(self) -> str:
        """The MaskBench source (``Github_easy``, ``BFCL``...) or the grammar name."""
        if self.name.startswith(("BFCL_", "JME_")):
            return self.name.split("_")[0]
        return self.name.split("---")[0]


def lower_as_compiler(
    grammar: Any,
    cache: Any,
    limits: Any,
    build: Any = None,
    build_counted: Any = None,
    build_units: Any = None,
) -> Any:
    """Lower ``grammar`` as the compiler does, with ``cache``'s builders unless others are given
    (a bench that times them wraps them): the native lowering and its terminal memo where the
    build has them, else the Python lowering (an older build measured side by side)."""
    builders = (
        cache.get if build is None else build,
        limits,
        cache.get_counted if build_counted is None else build_counted,
        cache.get_counted_units if build_units is None else build_units,
    )
    try:
        from tokensieve.compiler.native_lower import lower_grammar
    except ImportError:
        from tokensieve.compiler.lower import lower

        return lower(grammar, *builders, fragments=cache.fragment)
    return lower_grammar(grammar, *builders, fragments=cache.fragment, memo=cache.native_terminals)


def sample_evenly(items: Sequence[Any], n: int) -> list[Any]:
    """``n`` items spread evenly over ``items`` (all of them when ``n`` is 0 or too large).

    Deterministic, and because the MaskBench files sort by source, the sample covers every
    source in proportion.
    """
    if n <= 0 or n >= len(items):
        return list(items)
    return [items[i * len(items) // n] for i in range(n)]


def load_maskbench(sample: int = 0, data_dir: Path = MASKBENCH_DEV) -> list[Case]:
    """The MaskBench files in sorted order (an even sample of ``sample`` of them if non-zero).

    Instances are serialized and tokenized here, once, so every engine sees the same tokens.
    """
    files = sample_evenly(sorted(data_dir.glob("*.json")), sample)
    if not files:
        raise FileNotFoundError(f"no MaskBench files under {data_dir}")
    tokenizer = load_tokenizer()
    cases = []
    for path in files:
        doc = json.loads(path.read_text(encoding="utf-8"))
        case = Case(name=path.stem, kind="json_schema", source=json.dumps(doc["schema"]))
        for test in doc.get("tests", []):
            text = json.dumps(test["data"], ensure_ascii=False)
            case.instances.append(Instance(text, encode(tokenizer, text), bool(test["valid"])))
        cases.append(case)
    return cases


# --------------------------------------------------------------------------- tokenizer
def load_tokenizer(path: Path = LLAMA3_TOKENIZER) -> Any:
    """The Llama-3 tokenizer (``tokenizers.Tokenizer``), as the upstream MaskBench runner used."""
    import tokenizers

    return tokenizers.Tokenizer.from_file(str(path))


def encode(tokenizer: Any, text: str) -> list[int]:
    """Token ids of ``text`` without BOS/EOS: the tokens a model would have sampled."""
    return list(tokenizer.encode(text, add_special_tokens=False).ids)


def _byte_level_alphabet() -> dict[str, int]:
    """The GPT-2 byte-level alphabet: the printable character standing for each byte."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    printable += range(ord("®"), ord("ÿ") + 1)
    chars = list(printable)
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars, strict=True)}


def byte_level_vocab(path: Path = LLAMA3_TOKENIZER) -> tuple[list[bytes | None], set[int]]:
    """Decoded bytes of every token of a byte-level BPE ``tokenizer.json``, and its special ids.

    Special tokens get ``None``. Adapters that need raw token bytes (outlines-core) use this,
    so they do not depend on tokensieve's own loader.
    """
    doc = json.loads(path.read_text(encoding="utf-8"))
    alphabet = _byte_level_alphabet()
    special = {t["id"] for t in doc.get("added_tokens", []) if t.get("special")}
    ids: dict[int, str] = {i: tok for tok, i in doc["model"]["vocab"].items()}
    ids.update({t["id"]: t["content"] for t in doc.get("added_tokens", [])})
    out: list[bytes | None] = [None] * (max(ids) + 1)
    for i, tok in ids.items():
        if i not in special:
            out[i] = bytes(alphabet[ch] for ch in tok) if all(ch in alphabet for ch in tok) else tok.encode()
    return out, special


# --------------------------------------------------------------------------- engines
class Session(Protocol):
    """One matcher of one engine, with its own mask buffer."""

    def fill(self) -> None:
        """Compute the mask of allowed next tokens into the session's buffer (the timed call)."""

    def allowed(self, token: int) -> bool:
        """Whether ``token`` is set in the mask last computed by :meth:`fill`."""

    def eos_allowed(self) -> bool:
        """Whether any EOS token is set in the mask last computed by :meth:`fill`."""

    def accept(self, token: int) -> bool:
        """Advance by ``token``; ``False`` when the engine refuses it."""

    def error(self) -> str | None:
        """The engine's error state after the last call (e.g. a work limit hit), if it has one."""


class Engine(Protocol):
    """A constrained-decoding engine set up for the Llama-3 vocabulary."""

    name: str

    def version(self) -> str:
        """Package version, for the results file."""

    def settings(self) -> str:
        """The options used, one line, for the results file (fairness is checked by reading it)."""

    def compile(self, kind: str, source: str) -> Any:
        """Compile a :class:`Case` source; raises on a grammar the engine does not accept."""

    def memory_bytes(self, compiled: Any) -> int | None:
        """Memory of a compiled grammar as the engine reports it, or ``None`` if it cannot."""

    def session(self, compiled: Any) -> Session:
        """A fresh matcher at the start of the grammar."""


def bit_set(row: Any, token: int) -> bool:
    """Whether bit ``token`` is set in an int32 bitmask row (numpy array or torch tensor)."""
    return bool((int(row[token >> 5]) >> (token & 31)) & 1)


# --------------------------------------------------------------------------- statistics
def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile by nearest rank (``q=100`` is the max); NaN for no values."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(q / 100.0 * len(sorted_values)))
    return float(sorted_values[min(rank, len(sorted_values)) - 1])


def summarize(values: Sequence[float]) -> dict[str, float]:
    """Count, mean and the :data:`PERCENTILES` of ``values``."""
    s = sorted(values)
    out: dict[str, float] = {"n": float(len(s)), "mean": (sum(s) / len(s)) if s else math.nan}
    for label, q in PERCENTILES:
        out[label] = percentile(s, q)
    return out


# --------------------------------------------------------------------------- environment
def release_free_memory() -> None:
    """Hand free heap pages back to the OS (glibc ``malloc_trim``), so RSS growth measures
    what the next allocation keeps rather than what the allocator had cached."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: RSS deltas are just coarser
        pass


def rss_bytes(pid: int | None = None) -> int:
    """Resident set size of a process (this one by default), from ``/proc``."""
    with open(f"/proc/{pid or os.getpid()}/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, all threads) a process has used so far, from ``/proc``."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    # fields[0] is the state (field 3 of stat(5)); utime and stime are fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_description() -> dict[str, Any]:
    """CPU model, core count, memory and Python version, recorded with every result."""
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": round(mem_gib, 1),
        "os": platform.platform(),
        "python": sys.version.split()[0],
    }
