"""End-to-end decoding throughput, constrained vs unconstrained, through tokensieve's own decode loop.

    # the embedded SmolLM2-135M-Instruct on CPU (about 3 minutes on 2 cores)
    PYTHONPATH=src .venv/bin/python bench/end_to_end.py [--out PATH]
    # a random Llama with the Llama-3 128k vocabulary on a GPU: mask cost against a fast forward pass
    PYTHONPATH=src python bench/end_to_end.py --model random-llama --device cuda --schemas all

For every schema, four configurations decode greedily from the same prompt with the same
``max_tokens``, taking turns within each repetition (so a change of machine load hits them
all alike; the order rotates from one repetition to the next):

=================================  ==========================================================
``unconstrained``                  no grammar
``constrained``                    the schema's grammar; masks computed after the forward pass
``constrained + overlap``          masks computed on a worker thread during the forward pass
``constrained + overlap + jump``   and grammar-forced text appended without forward passes
=================================  ==========================================================

**What tokens/s means here.** Output tokens are the tokens of the completion, *including*
the tokens jump-forward appended from forced text (they are real output: the text the user
gets), EOS excluded. Because unconstrained output has a different length than constrained
output, totals are not compared: the figure is the **time per output token** in the decode
phase, ``(wall time of decode() - prefill) / (output tokens - 1)``; tokens/s is its inverse.
The prefill (the first forward pass, over the prompt) and the token sampled from it are left
out; the whole-call figure with the prefill is in the JSON (``call_tokens_per_s``).

Statistics: for each schema and configuration the median over repetitions (greedy output is
identical in every repetition, and the JSON says whether it was), then pooled over the
schemas (sum of decode times over sum of decode tokens). The ratio of a configuration to
unconstrained is the ratio of those pooled rates: above 1 means faster per output token.

Whitespace: the grammars are compiled with ``--whitespace compact`` by default. Under the
default (flexible) policy whitespace may follow every JSON token, so the grammar forces
almost nothing and jump-forward has nothing to do (0 forced tokens in a CPU run); compact
JSON is also what a model asked for JSON usually writes.

On CUDA the forward pass only queues kernels; the bench wraps each session so a forward
pass returns after ``torch.cuda.synchronize()``. The loop would wait for the logits a moment
later anyway (it copies them to the host to sample), so wall time is unchanged, while the
loop's :class:`~tokensieve.generation.result.Timings` (prefill, forward, mask wait) become
true device times.

Results: markdown on stdout, and JSON with every run to ``--out`` (keep it out of
``bench/results/*.json``: ``bench/render.py`` renders every summary found there; the
convention is ``bench/results/end_to_end/``).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import shlex
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
if importlib.util.find_spec("tokensieve") is None:  # the dev tree, not installed
    sys.path.append(str(ROOT / "src"))

from bench.common import LLAMA3_TOKENIZER, MASKBENCH_DEV, machine_description  # noqa: E402

# Data copied next to the repository for a machine without ../shared (scripts/device_prepare.sh).
DEVICE_DATA = ROOT / ".device"

SYSTEM_PROMPT = "Reply with only a JSON value that conforms to this JSON Schema:\n{schema}"
USER_PROMPT = "Write one realistic example."


# ----------------------------------------------------------------------------- what is decoded


@dataclass(frozen=True)
class SchemaSpec:
    """A schema of the benchmark: ``file`` is under the repository (``examples/``) or MaskBench."""

    name: str
    file: str
    maskbench: bool

    def path(self, maskbench_dir: Path) -> Path:
        return (maskbench_dir if self.maskbench else ROOT) / self.file

    def load(self, maskbench_dir: Path) -> dict[str, Any]:
        doc = json.loads(self.path(maskbench_dir).read_text(encoding="utf-8"))
        return doc["schema"] if self.maskbench else doc


# Realistic shapes: a flat record with bounds, a nested function call, a form with an array,
# a booking with date formats and an optional field, a record with nullable types, an array
# of objects.
SCHEMAS: tuple[SchemaSpec, ...] = (
    SchemaSpec("person", "examples/person.json", maskbench=False),
    SchemaSpec("BFCL_simple_110", "BFCL_simple_110.json", maskbench=True),
    SchemaSpec("JME_14", "JME_14.json", maskbench=True),
    SchemaSpec("Glaive_book_flight", "Glaiveai2K---book_flight_22ba5334.json", maskbench=True),
    SchemaSpec("Kubernetes_kb_100", "Kubernetes---kb_100_Normalized.json", maskbench=True),
    SchemaSpec("Github_easy_o10295", "Github_easy---o10295.json", maskbench=True),
)
DEFAULT_SCHEMAS = ("person", "BFCL_simple_110", "JME_14")  # keeps the CPU default under 3 minutes
MASKBENCH_FILES = tuple(s.file for s in SCHEMAS if s.maskbench)  # what device_prepare.sh copies


@dataclass(frozen=True)
class Config:
    """One way of decoding; ``constrained=False`` ignores the two other flags."""

    name: str
    constrained: bool
    overlap: bool
    jump_forward: bool


CONFIGS: tuple[Config, ...] = (
    Config("unconstrained", constrained=False, overlap=False, jump_forward=False),
    Config("constrained", constrained=True, overlap=False, jump_forward=False),
    Config("constrained + overlap", constrained=True, overlap=True, jump_forward=False),
    Config("constrained + overlap + jump", constrained=True, overlap=True, jump_forward=True),
)
BASELINE = CONFIGS[0].name


@dataclass
class Run:
    """One timed decode call (one schema, one configuration, one repetition)."""

    schema: str
    config: str
    repeat: int
    output_tokens: int
    forced_tokens: int
    forward_passes: int
    wall_s: float
    prefill_s: float
    forward_s: float
    mask_s: float
    mask_wait_s: float
    stop_reason: str
    json_ok: bool | None  # constrained runs that stopped complete: does the text parse as JSON?
    output_digest: str  # of the token ids: greedy output must repeat exactly across repetitions

    @property
    def decode_tokens(self) -> int:
        """Tokens after the one sampled from the prefill (none if the model ended at once)."""
        return max(0, self.output_tokens - 1)

    @property
    def decode_s(self) -> float:
        return self.wall_s - self.prefill_s


# ----------------------------------------------------------------------------- models


def load_model(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The backend to benchmark and a description of it for the results."""
    import torch

    if args.dtype is not None:
        dtype = args.dtype
    else:
        dtype = "bfloat16" if args.device.startswith("cuda") else "float32"
    if args.model == "embedded":
        from tokensieve.integrations.transformers import load_backend
        from tokensieve.models import default_model_path

        backend = load_backend(None, device=args.device, dtype=dtype)
        info = {"model": "embedded", "path": default_model_path().name}
    else:
        backend, info = random_llama(args, getattr(torch, dtype))
    parameters = sum(p.numel() for p in backend.model.parameters())
    info.update(device=args.device, dtype=dtype, parameters=parameters)
    if args.device.startswith("cuda"):
        info["gpu"] = torch.cuda.get_device_name(torch.device(args.device))
        backend = SyncedBackend(backend)
    return backend, info


def random_llama(args: argparse.Namespace, dtype: Any) -> tuple[Any, dict[str, Any]]:
    """A randomly initialised ``LlamaForCausalLM`` over the Llama-3 128k tokenizer (no weights read).

    Random weights make greedy text meaningless, but under a grammar every step still needs a
    mask, which is all this measures; the sizes set how fast the forward pass is.
    """
    import torch
    import transformers

    import tokensieve
    from tokensieve.generation.backends import TransformersBackend

    tokenizer_path = args.tokenizer or data_path("llama3-128k.tokenizer.json", LLAMA3_TOKENIZER)
    vocab = tokensieve.Vocabulary.from_tokenizer_json(str(tokenizer_path))
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_file=str(tokenizer_path))
    config = transformers.LlamaConfig(
        vocab_size=vocab.size,
        hidden_size=args.hidden,
        intermediate_size=args.intermediate,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        num_key_value_heads=args.kv_heads,
        max_position_embeddings=8192,
        tie_word_embeddings=True,
        bos_token_id=128000,
        eos_token_id=list(vocab.eos_token_ids),
    )
    torch.manual_seed(args.seed)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)  # allocate in the target dtype, directly on the device
    try:
        with torch.device(args.device):
            model = transformers.LlamaForCausalLM(config)
    finally:
        torch.set_default_dtype(previous)
    sizes = {k: getattr(args, k) for k in ("hidden", "intermediate", "layers", "heads", "kv_heads")}
    info = {"model": "random-llama", "tokenizer": tokenizer_path.name, "seed": args.seed, **sizes}
    return TransformersBackend(model, tokenizer, vocabulary=vocab), info


def data_path(name: str, shared: Path) -> Path:
    """``shared`` if this machine has ``../shared``, else the copy under ``.device/``."""
    if shared.exists():
        return shared
    local = DEVICE_DATA / name
    if local.exists():
        return local
    raise FileNotFoundError(f"neither {shared} nor {local} exists (run scripts/device_prepare.sh)")


class SyncedBackend:
    """A CUDA backend whose forward passes return once the device has finished them.

    Everything but :meth:`start` is the wrapped backend's own (same vocabulary, compiler
    cache and jump-forward tables); sessions are wrapped to synchronize after each forward.
    """

    def __init__(self, inner: Any):
        self.inner = inner

    def __getattr__(self, name: str) -> Any:  # vocabulary, compiler, forcer, encode, model, ...
        return getattr(self.inner, name)

    def start(self, batch_size: int) -> Any:
        import torch

        return _SyncedSession(self.inner.start(batch_size), torch.cuda.synchronize)


class _SyncedSession:
    def __init__(self, inner: Any, sync: Any):
        self.inner, self.sync = inner, sync

    def forward(self, new_tokens: Sequence[Sequence[int]]) -> Any:
        logits = self.inner.forward(new_tokens)
        self.sync()
        return logits

    def close(self) -> None:
        self.inner.close()


# ----------------------------------------------------------------------------- measuring


def prompt_ids(backend: Any, schema: dict[str, Any]) -> list[int]:
    """The prompt every configuration of a schema starts from (the chat template if the model has one)."""
    system = SYSTEM_PROMPT.format(schema=json.dumps(schema, ensure_ascii=False))
    if getattr(backend.tokenizer, "chat_template", None):
        messages = [{"role": "system", "content": system}, {"role": "user", "content": USER_PROMPT}]
        return backend.prompt_tokens(messages, chat=True)
    return backend.prompt_tokens(f"{system}\n\n{USER_PROMPT}\n", chat=False)


def decode_once(backend: Any, prompt: list[int], grammar: Any, config: Config, max_tokens: int) -> Any:
    """One greedy decode call; returns ``(row output, timings, wall seconds)``."""
    import tokensieve
    from tokensieve.generation.loop import DecodeOptions, decode

    options = DecodeOptions(max_tokens=max_tokens, overlap=config.overlap, jump_forward=config.jump_forward)
    matcher = tokensieve.Matcher(grammar) if config.constrained else None  # outside the timed call
    start = time.perf_counter()
    (out,), timings = decode(backend, [prompt], [matcher], options)
    return out, timings, time.perf_counter() - start


def measure(
    backend: Any, schemas: dict[str, dict[str, Any]], args: argparse.Namespace, log: Any
) -> tuple[list[Run], dict[str, float]]:
    """Every repetition x schema x configuration, after compiling and a warm-up."""
    compile_ms: dict[str, float] = {}
    work = []
    # The JSON Schema front-end is imported on first use (jsonschema with it, about 0.2 s): a
    # one-time cost of the process, not of the first schema's compile.
    import tokensieve.frontends.json_schema  # noqa: F401
    for name, schema in schemas.items():
        start = time.perf_counter()
        grammar = backend.compiler.json_schema(schema, whitespace=args.whitespace)
        compile_ms[name] = (time.perf_counter() - start) * 1e3
        work.append((name, prompt_ids(backend, schema), grammar))
    # Warm-up, untimed: kernels, the jump-forward tables, the mask worker thread's first start.
    _ = backend.forcer
    for config in CONFIGS:
        decode_once(backend, work[0][1], work[0][2], config, max_tokens=min(4, args.max_tokens))

    table = backend.token_bytes
    runs: list[Run] = []
    for repeat in range(args.repeats):
        # Rotate the order each repetition, so no configuration always runs first after a schema switch.
        order = CONFIGS[repeat % len(CONFIGS):] + CONFIGS[: repeat % len(CONFIGS)]
        for name, prompt, grammar in work:
            for config in order:
                out, t, wall = decode_once(backend, prompt, grammar, config, args.max_tokens)
                json_ok = None
                if config.constrained and out.stop_reason in ("eos", "complete"):
                    json_ok = _parses(b"".join(table[i] for i in out.tokens))
                runs.append(Run(
                    schema=name, config=config.name, repeat=repeat, output_tokens=len(out.tokens),
                    forced_tokens=out.jump_forward_tokens, forward_passes=t.forward_passes,
                    wall_s=wall, prefill_s=t.prefill_s, forward_s=t.forward_s, mask_s=t.mask_s,
                    mask_wait_s=t.mask_wait_s, stop_reason=str(out.stop_reason), json_ok=json_ok,
                    output_digest=hashlib.sha1(repr(out.tokens).encode()).hexdigest()[:12],
                ))
        done = [r for r in runs if r.repeat == repeat]
        log(f"repetition {repeat + 1}/{args.repeats}: {sum(r.output_tokens for r in done)} tokens "
            f"in {sum(r.wall_s for r in done):.1f} s")
    return runs, compile_ms


def _parses(text: bytes) -> bool:
    try:
        json.loads(text.decode("utf-8"))
    except ValueError:
        return False
    return True


# ----------------------------------------------------------------------------- summarizing


def pooled_rate(runs: Sequence[Run]) -> float | None:
    """Decode-phase tokens/s over ``runs``: their decode tokens over their decode seconds."""
    seconds = sum(r.decode_s for r in runs)
    tokens = sum(r.decode_tokens for r in runs)
    return tokens / seconds if seconds > 0 and tokens > 0 else None


def median_cells(runs: Sequence[Run]) -> dict[tuple[str, str], dict[str, float]]:
    """Per (schema, configuration): the median over repetitions of each timed quantity.

    Taking the median per cell, before pooling over schemas, drops a stall that hit one call
    (a shared machine) without discarding the whole repetition it happened in. Greedy output
    is the same in every repetition (``same_output`` checks it), so token counts do not vary.
    """
    cells: dict[tuple[str, str], list[Run]] = {}
    for r in runs:
        cells.setdefault((r.schema, r.config), []).append(r)
    out = {}
    for key, group in cells.items():
        med = {f: statistics.median(getattr(r, f) for r in group)
               for f in ("decode_s", "wall_s", "mask_s", "mask_wait_s", "forward_s")}
        first = group[0]
        out[key] = {
            **med,
            "decode_tokens": first.decode_tokens,
            "output_tokens": first.output_tokens,
            "forced_tokens": first.forced_tokens,
            "forward_passes": first.forward_passes,
            "same_output": all(r.output_digest == first.output_digest for r in group),
        }
    return out


def summarize(runs: Sequence[Run], repeats: int) -> dict[str, Any]:
    """Per configuration: pooled rates from the per-cell medians, ratios, and where the time went."""
    cells = median_cells(runs)
    schemas = list(dict.fromkeys(r.schema for r in runs))

    def pooled(config: str, field: str) -> float:
        return sum(cells[s, config][field] for s in schemas)

    def rate(config: str) -> float | None:
        seconds, tokens = pooled(config, "decode_s"), pooled(config, "decode_tokens")
        return tokens / seconds if seconds > 0 and tokens > 0 else None

    base = rate(BASELINE)
    by_config: dict[str, Any] = {}
    for config in CONFIGS:
        mine = [r for r in runs if r.config == config.name]
        tokens = pooled(config.name, "output_tokens")
        passes = pooled(config.name, "forward_passes")
        mine_rate = rate(config.name)
        complete = [r for r in mine if r.stop_reason in ("eos", "complete")]
        by_config[config.name] = {
            "tokens_per_s": mine_rate,
            "ratio_to_unconstrained": None if mine_rate is None or base is None else mine_rate / base,
            "tokens_per_s_by_repeat": [pooled_rate([r for r in mine if r.repeat == rep])
                                       for rep in range(repeats)],
            "call_tokens_per_s": tokens / pooled(config.name, "wall_s"),
            "output_tokens": tokens,
            "forced_tokens": pooled(config.name, "forced_tokens"),
            "forward_passes_per_token": passes / max(1, tokens),
            "forward_ms_per_pass": 1e3 * pooled(config.name, "forward_s") / max(1, passes),
            "mask_us_per_token": 1e6 * pooled(config.name, "mask_s") / max(1, tokens),
            "mask_wait_us_per_token": 1e6 * pooled(config.name, "mask_wait_s") / max(1, tokens),
            "stop_reasons": dict(Counter(r.stop_reason for r in mine)),
            "complete_json": (f"{sum(bool(r.json_ok) for r in complete)}/{len(mine)}"
                              if config.constrained else "-"),
            "same_output_every_repeat": all(cells[s, config.name]["same_output"] for s in schemas),
        }
    per_schema = {
        s: {
            c.name: {"tokens_per_s": _rate(cells[s, c.name]),
                     "output_tokens": cells[s, c.name]["output_tokens"]}
            for c in CONFIGS
        }
        for s in schemas
    }
    return {"configs": by_config, "per_schema": per_schema}


def _rate(cell: dict[str, float]) -> float | None:
    tokens, seconds = cell["decode_tokens"], cell["decode_s"]
    return tokens / seconds if seconds > 0 and tokens > 0 else None


def fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def markdown_report(report: dict[str, Any]) -> str:
    """The tables of one result file (what the bench prints; ``docs/benchmarks.md`` takes the same)."""
    m, s = report["model"], report["settings"]
    model = f"{m['path']} (embedded)" if m["model"] == "embedded" else (
        f"random Llama (hidden {m['hidden']}, {m['layers']} layers, vocabulary {m['tokenizer']})")
    lines = [
        f"### End to end: {model} on {m['device']} ({report['created']})",
        "",
        f"Command: `{report['command']}`  ",
        f"Machine: {report['machine_text']}; model {fmt(m['parameters'] / 1e6, 0)} M parameters, "
        f"{m['dtype']}  ",
        f"Greedy, max_tokens {s['max_tokens']}, {s['repeats']} repetitions, whitespace {s['whitespace']}, "
        f"schemas: {', '.join(report['schemas'])}",
        "",
        "tokens/s = decode-phase output tokens per second (jump-forward tokens count as output, "
        "EOS does not; prefill excluded), median over repetitions per schema, pooled over the schemas; "
        "ratio = configuration / unconstrained, per token, so different output lengths compare fairly.",
        "",
        "| configuration | tokens/s | ratio | ms/token | output tokens | forward passes/token "
        "| forced tokens | mask us/token | mask wait us/token | complete JSON |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for name, c in report["summary"]["configs"].items():
        rate = c["tokens_per_s"]
        ratio = c["ratio_to_unconstrained"]
        lines.append(
            f"| {name} | {fmt(rate)} | {'-' if ratio is None else f'{ratio:.1%}'} "
            f"| {fmt(None if not rate else 1e3 / rate, 2)} | {c['output_tokens']} "
            f"| {c['forward_passes_per_token']:.2f} | {c['forced_tokens']} | {fmt(c['mask_us_per_token'])} "
            f"| {fmt(c['mask_wait_us_per_token'])} | {c['complete_json']} |"
        )
    names = [c.name for c in CONFIGS]
    lines += ["", "Per schema (median tokens/s, median output tokens):", "",
              "| schema | compile ms | " + " | ".join(names) + " |",
              "|---|--:|" + "--:|" * len(names)]
    for schema, cells in report["summary"]["per_schema"].items():
        row = [f"{fmt(cells[n]['tokens_per_s'])} ({fmt(cells[n]['output_tokens'], 0)})" for n in names]
        lines.append(f"| {schema} | {fmt(report['compile_ms'][schema], 1)} | " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- command line


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=("embedded", "random-llama"), default="embedded",
                    help="the embedded SmolLM2-135M-Instruct, or a random Llama over the Llama-3 vocabulary")
    ap.add_argument("--device", default="cpu", help="torch device (cpu, cuda, cuda:1, ...)")
    ap.add_argument("--dtype", choices=("float32", "bfloat16", "float16"), default=None,
                    help="model dtype (default: bfloat16 on CUDA, float32 on CPU)")
    ap.add_argument("--schemas", default=",".join(DEFAULT_SCHEMAS),
                    help=f"comma-separated names, or 'all' ({', '.join(s.name for s in SCHEMAS)})")
    ap.add_argument("--max-tokens", type=int, default=48, help="completion tokens per call (default 48)")
    ap.add_argument("--repeats", type=int, default=3, help="repetitions; medians are reported (default 3)")
    ap.add_argument("--whitespace", choices=("default", "compact"), default="compact",
                    help="whitespace policy of the schema grammars (default compact: more text is forced)")
    ap.add_argument("--maskbench-dir", type=Path, default=None,
                    help=f"MaskBench dev folder (default: {MASKBENCH_DEV}, else .device/maskbench)")
    ap.add_argument("--tokenizer", type=Path, default=None,
                    help="tokenizer.json for random-llama (default: the shared Llama-3 one, else .device/)")
    ap.add_argument("--hidden", type=int, default=2048, help="random-llama hidden size")
    ap.add_argument("--intermediate", type=int, default=8192, help="random-llama MLP size")
    ap.add_argument("--layers", type=int, default=16, help="random-llama layers")
    ap.add_argument("--heads", type=int, default=32, help="random-llama attention heads")
    ap.add_argument("--kv-heads", type=int, default=8, help="random-llama key/value heads")
    ap.add_argument("--seed", type=int, default=0, help="random-llama initialisation seed")
    ap.add_argument("--threads", type=int, default=None,
                    help="torch CPU threads (default: 1 with --device cpu, else torch's choice)")
    ap.add_argument("--out", type=Path, default=None, help="write the JSON results here")
    args = ap.parse_args(argv)
    if args.max_tokens < 2:
        ap.error("--max-tokens must be at least 2 (the first token comes from the prefill)")
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    if args.threads is not None and args.threads < 1:
        ap.error("--threads must be at least 1")
    return args


def select_schemas(spec: str, maskbench_dir: Path) -> dict[str, dict[str, Any]]:
    known = {s.name: s for s in SCHEMAS}
    names = list(known) if spec == "all" else [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise SystemExit(f"unknown schema(s) {unknown}; choose from {', '.join(known)} or 'all'")
    return {n: known[n].load(maskbench_dir) for n in names}


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    maskbench_dir = args.maskbench_dir or data_path("maskbench", MASKBENCH_DEV)
    schemas = select_schemas(args.schemas, maskbench_dir)

    def log(message: str) -> None:
        print(f"[end_to_end] {message}", file=sys.stderr, flush=True)

    if args.threads is None and args.device == "cpu":
        # One torch thread: on a small shared machine a second one stalls the forward pass
        # whenever another process takes its core, and the mask worker needs a core of its own.
        args.threads = 1
    if args.threads is not None:
        import torch

        torch.set_num_threads(args.threads)
    start = time.perf_counter()
    backend, model_info = load_model(args)
    log(f"model ready in {time.perf_counter() - start:.1f} s: {model_info}")
    runs, compile_ms = measure(backend, schemas, args, log)
    report = build_report(args, argv, model_info, list(schemas), runs, compile_ms)
    print(markdown_report(report))
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        log(f"wrote {args.out}")


def build_report(
    args: argparse.Namespace, argv: Sequence[str] | None, model_info: dict[str, Any],
    schemas: list[str], runs: list[Run], compile_ms: dict[str, float],
) -> dict[str, Any]:
    import torch
    import transformers

    import tokensieve

    machine = machine_description()
    argv = list(sys.argv[1:] if argv is None else argv)
    return {
        "benchmark": "end_to_end",
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        # PYTHONPATH=src only where tokensieve came from the source tree (scripts/device_check.sh
        # runs a build of its own).
        "command": ("PYTHONPATH=src " if Path(tokensieve.__file__).is_relative_to(ROOT / "src") else "")
        + "python bench/end_to_end.py "
        + shlex.join(argv),
        "machine": machine,
        "machine_text": f"{machine['cpu']}, {machine['cores']} cores, Python {machine['python']}, "
        f"torch {torch.__version__} ({torch.get_num_threads()} threads), "
        f"transformers {transformers.__version__}"
        + (f", {model_info['gpu']}" if "gpu" in model_info else ""),
        "versions": {"tokensieve": tokensieve.__version__, "torch": torch.__version__,
                     "transformers": transformers.__version__},
        "model": model_info,
        "settings": {"max_tokens": args.max_tokens, "repeats": args.repeats, "whitespace": args.whitespace,
                     "sampling": "greedy", "configs": [asdict(c) for c in CONFIGS]},
        "schemas": schemas,
        "compile_ms": compile_ms,
        "summary": summarize(runs, args.repeats),
        "runs": [asdict(r) for r in runs],
    }


if __name__ == "__main__":
    main()
