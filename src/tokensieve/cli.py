"""The ``tokensieve`` command line.

``tokensieve generate``: run a local model (by default the embedded SmolLM2-135M-Instruct)
on a prompt with a constraint; the output goes to stdout, progress and timings to stderr::

    tokensieve generate --schema examples/person.json "Extract: Bob is 30 and lives in Paris"

``tokensieve check``: compile a schema, grammar or regex for a vocabulary and print its
statistics, or the precise error (line and column, or JSON pointer and keyword)::

    tokensieve check --grammar examples/arithmetic.gbnf

Exit status: 0 on success; 1 when the input is rejected, the output is truncated or fails
validation; 2 for bad command-line usage.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tokensieve`` command; returns the exit status."""
    # tokensieve never downloads; make sure no library underneath tries to either.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    from .errors import TokensieveError

    try:
        return int(args.run(args))
    except TokensieveError as err:
        _err(f"error: {_describe(err, args)}")
        return 1
    except (OSError, ValueError) as err:
        _err(f"error: {err}")
        return 1


# ----------------------------------------------------------------------------- arguments


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tokensieve", description="Structured generation with exact token masks."
    )
    sub = parser.add_subparsers(dest="command")

    gen = sub.add_parser("generate", help="generate constrained output with a local model")
    gen.add_argument("prompt", help="the prompt (a user message); '-' reads it from stdin")
    _constraint_args(gen)
    gen.add_argument(
        "--choices", nargs="+", metavar="TEXT", help="the output is exactly one of these strings"
    )
    gen.add_argument(
        "--tools", type=Path, metavar="FILE", help="JSON file with OpenAI-style tool definitions"
    )
    gen.add_argument("--tool-choice", default="auto", help="auto (default), required, none, or a tool name")
    gen.add_argument("--parallel-tool-calls", action="store_true", help="allow a list of several calls")
    gen.add_argument(
        "--model", help="local GGUF file or model folder (default: embedded SmolLM2-135M-Instruct)"
    )
    gen.add_argument("--backend", default="transformers", choices=["transformers", "llama_cpp"])
    gen.add_argument("--max-tokens", type=int, default=256)
    gen.add_argument("--temperature", type=float, default=0.0, help="0 (default) is greedy decoding")
    gen.add_argument("--top-p", type=float, default=1.0)
    gen.add_argument("--top-k", type=int, default=0)
    gen.add_argument("--seed", type=int, default=None)
    gen.add_argument("--system", help="system message (default: describes the schema or tools)")
    gen.add_argument(
        "--no-chat", action="store_true", help="send the prompt as raw text, without chat template"
    )
    gen.add_argument("--no-jump-forward", action="store_true", help="sample forced text token by token")
    gen.add_argument("--no-overlap", action="store_true", help="compute masks after the forward pass")
    gen.set_defaults(run=_generate)

    check = sub.add_parser(
        "check", help="compile a schema, grammar or regex and print statistics or the error"
    )
    _constraint_args(check)
    check.add_argument(
        "--tokenizer", type=Path, help="tokenizer.json, .gguf or .tiktoken file (default: the model's)"
    )
    check.add_argument("--model", help="take the vocabulary of this local model (default: the embedded one)")
    check.set_defaults(run=_check)
    return parser


def _constraint_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--schema", type=Path, metavar="FILE", help="JSON Schema file")
    parser.add_argument(
        "--grammar", type=Path, metavar="FILE", help="EBNF / GBNF grammar file (start rule: root)"
    )
    parser.add_argument("--regex", metavar="PATTERN", help="regular expression the whole output must match")
    parser.add_argument("--json", action="store_true", help="any JSON value")
    parser.add_argument(
        "--whitespace", default=None, help="JSON whitespace: default, compact, or a maximum run"
    )
    parser.add_argument("--strict", action="store_true", help="strict structured-output schema semantics")
    parser.add_argument("--property-order", choices=["declared", "any"], default="declared")


def _whitespace(value: str | None) -> str | int | None:
    return int(value) if value is not None and value.isdigit() else value


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({what}): {err}") from None


# ----------------------------------------------------------------------------- generate


def _generate(args: argparse.Namespace) -> int:
    from .errors import Truncated
    from .generation import GenerationResult, generate, resolve_backend

    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    constraint: dict[str, Any] = {}
    if args.schema:
        constraint["schema"] = _read_json(args.schema, "schema")
    if args.grammar:
        constraint["grammar"] = args.grammar.read_text(encoding="utf-8")
    if args.regex is not None:
        constraint["regex"] = args.regex
    if args.json:
        constraint["json"] = True
    if args.choices:
        constraint["choices"] = args.choices
    if args.tools:
        constraint["tools"] = _read_json(args.tools, "tools")
        constraint.update(tool_choice=args.tool_choice, parallel_tool_calls=args.parallel_tool_calls)

    _err(f"loading {args.model or 'the embedded SmolLM2-135M-Instruct'} ({args.backend})...")
    start = time.perf_counter()
    backend = resolve_backend(args.model, args.backend)
    _ = backend.vocabulary
    _err(f"loaded in {time.perf_counter() - start:.1f} s; generating...")
    try:
        result = generate(
            prompt,
            backend=backend,
            chat=not args.no_chat,
            system=args.system,
            max_tokens=args.max_tokens,
            temperature=args.temperature,
            top_p=args.top_p,
            top_k=args.top_k,
            seed=args.seed,
            jump_forward=not args.no_jump_forward,
            overlap=not args.no_overlap,
            whitespace=_whitespace(args.whitespace),
            strict=args.strict,
            property_order=args.property_order,
            **constraint,
        )
    except Truncated as err:
        print(err.text)
        _err(f"error: {err}")
        return 1
    result = cast(GenerationResult, result)  # one prompt in, one result out
    print(result.text)
    t = result.timings
    _err(
        f"{result.completion_tokens} tokens in {t.total_s:.2f} s ({result.tokens_per_s:.1f} tokens/s; "
        f"prefill {t.prefill_s:.2f} s, {t.forward_passes} forward passes, "
        f"{result.jump_forward_tokens} tokens by jump-forward, mask {t.mask_s * 1e3:.1f} ms, "
        f"{t.overlap:.0%} of it overlapped); stop: {result.stop_reason}"
    )
    for message in result.validation_errors:
        _err(f"validation error: {message}")
    return 0 if result.valid else 1


# ----------------------------------------------------------------------------- check


def _check(args: argparse.Namespace) -> int:
    import tokensieve as ts

    vocab = _vocabulary(args)
    compiler = ts.Compiler(vocab)
    kinds = [k for k in ("schema", "grammar", "regex") if getattr(args, k) is not None] + (
        ["json"] if args.json else []
    )
    if len(kinds) != 1:
        raise ValueError("pass exactly one of --schema, --grammar, --regex, --json")
    ws = _whitespace(args.whitespace)
    start = time.perf_counter()
    if args.schema:
        schema = _read_json(args.schema, "schema")
        grammar = compiler.json_schema(
            schema, whitespace=ws, strict=args.strict, property_order=args.property_order
        )
    elif args.grammar:
        grammar = compiler.ebnf(args.grammar.read_text(encoding="utf-8"))
    elif args.regex is not None:
        grammar = compiler.regex(args.regex)
    else:
        grammar = compiler.json(whitespace=ws)
    compiled_s = time.perf_counter() - start
    matcher = ts.Matcher(grammar)
    bitmask = ts.allocate_bitmask(1, vocab.size)
    start = time.perf_counter()
    matcher.fill_bitmask(bitmask, row=0)
    mask_s = time.perf_counter() - start
    allowed = int(ts.unpack_bitmask(bitmask, vocab.size).sum())
    stats = grammar.stats
    print(f"ok: {kinds[0]} compiled for {vocab.name} ({vocab.size} tokens)")
    print(f"  terminals        {stats.terminals}")
    print(f"  DFA states       {stats.dfa_states}")
    print(f"  productions      {stats.productions}")
    print(f"  nonterminals     {stats.nonterminals}")
    print(f"  memory           {stats.memory_bytes} bytes")
    print(f"  compile time     {compiled_s * 1e3:.2f} ms")
    print(f"  first mask       {mask_s * 1e6:.0f} us, {allowed} tokens allowed")
    forced = matcher.jump_forward()
    if forced:
        print(f"  forced prefix    {forced.decode('utf-8', errors='replace')!r}")
    return 0


def _vocabulary(args: argparse.Namespace) -> Any:
    from .models import locate_model

    if args.tokenizer is not None:
        return _load_vocabulary(str(args.tokenizer))
    location = locate_model(args.model)
    return _load_vocabulary(str(location.path if location.is_gguf else location.folder / "tokenizer.json"))


@functools.lru_cache(maxsize=4)
def _load_vocabulary(path: str) -> Any:
    """The vocabulary in a tokenizer file, by extension (cached: GGUF files take seconds to read)."""
    import tokensieve as ts

    suffix = Path(path).suffix.lower()
    if suffix == ".gguf":
        return ts.Vocabulary.from_gguf(path)
    if suffix == ".tiktoken":
        return ts.Vocabulary.from_tiktoken(path)
    return ts.Vocabulary.from_tokenizer_json(path)


# ----------------------------------------------------------------------------- messages


def _describe(err: Exception, args: argparse.Namespace) -> str:
    """An error message that names the file and the location inside it."""
    from .errors import GrammarSyntaxError, UnsupportedSchemaError

    if isinstance(err, GrammarSyntaxError):
        source = args.grammar if getattr(args, "grammar", None) else err.source
        return f"{source}:{err.line}:{err.column}: {err.message}"
    if isinstance(err, UnsupportedSchemaError) and getattr(args, "schema", None):
        return f"{args.schema}: {err}"
    return str(err)


def _err(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
