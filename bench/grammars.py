"""Grammar benchmark: any-JSON and three CFGs, tokensieve vs xgrammar vs llguidance.

    PYTHONPATH=src .venv/bin/python bench/grammars.py [--engines a,b] [--strings N]
        [--timeout S] [--out PATH]

Four grammars, each engine given the same text (GBNF, llama.cpp syntax with start rule
``root``; xgrammar reads GBNF natively, llguidance through its own GBNF-to-Lark converter)
and the same Llama-3 token sequences:

- **any-JSON**: each engine's built-in JSON grammar (tokensieve ``compiler.json()``,
  xgrammar ``compile_builtin_json_grammar()``, llguidance the empty schema ``{}``), on
  valid MaskBench instances serialized with ``json.dumps``;
- **arithmetic**: expressions with precedence, unary minus and parentheses;
- **C-like**: functions, declarations, ``if``/``while``/``return``, calls, expressions;
- **nested lists**: lists of numbers, strings and lists, as ``json.dumps`` writes them.

The strings are generated from a fixed seed (every string is valid). For each engine
and grammar: time to first mask (compile + first mask, one measurement) and mask times
(p50/p99/max over every token of every string), plus how many strings were accepted to
the end with EOS allowed, a sanity check that the numbers measure the intended language.
Each engine runs in its own child process with a timeout (:mod:`bench.worker`).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import shlex
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
if importlib.util.find_spec("tokensieve") is None:  # the dev tree, not installed
    sys.path.append(str(ROOT / "src"))

from bench.common import (  # noqa: E402
    MASKBENCH_DEV,
    RESULTS_DIR,
    Case,
    Instance,
    encode,
    load_tokenizer,
    machine_description,
    sample_evenly,
    summarize,
)
from bench.render import grammar_report  # noqa: E402
from bench.worker import CLOCK_NAMES, EngineUnavailable, EngineWorker  # noqa: E402

GRAMMAR_ENGINES = ("tokensieve", "xgrammar", "llguidance")  # outlines-core has no CFGs

ARITHMETIC = r"""
root   ::= expr
expr   ::= term (ws [-+] ws term)*
term   ::= factor (ws [*/] ws factor)*
factor ::= number | "(" ws expr ws ")" | "-" factor
number ::= [0-9]+ ("." [0-9]+)?
ws     ::= [ ]?
"""

C_LIKE = r"""
root     ::= ws (function ws)+
function ::= type " " ident "(" ws (params ws)? ")" ws block
params   ::= param (ws "," ws param)*
param    ::= type " " ident
type     ::= "int" | "float" | "char" | "void"
block    ::= "{" ws (stmt ws)* "}"
stmt     ::= decl | assign | ifstmt | whilestmt | retstmt | block | call ws ";"
decl     ::= type " " ident (ws "=" ws expr)? ws ";"
assign   ::= ident ws "=" ws expr ws ";"
ifstmt   ::= "if" ws "(" ws expr ws ")" ws block (ws "else" ws block)?
whilestmt ::= "while" ws "(" ws expr ws ")" ws block
retstmt  ::= "return" (" " ws expr)? ws ";"
call     ::= ident "(" ws (args ws)? ")"
args     ::= expr (ws "," ws expr)*
expr     ::= sum (ws cmpop ws sum)?
cmpop    ::= "<" | ">" | "<=" | ">=" | "==" | "!="
sum      ::= prod (ws [-+] ws prod)*
prod     ::= unary (ws [*/%] ws unary)*
unary    ::= "-" unary | atom
atom     ::= number | call | ident | "(" ws expr ws ")"
ident    ::= [a-zA-Z_] [a-zA-Z0-9_]*
number   ::= [0-9]+
ws       ::= [ \t\n]*
"""

NESTED_LISTS = r"""
root   ::= list
list   ::= "[" ws (item (ws "," ws item)* ws)? "]"
item   ::= list | number | string
number ::= "-"? [0-9]+
string ::= "\"" [a-z ]* "\""
ws     ::= [ ]?
"""


# --------------------------------------------------------------------------- strings
def arithmetic_string(rng: random.Random, depth: int = 0) -> str:
    """A random expression of the ARITHMETIC grammar (spaces around binary operators)."""
    roll = rng.random()
    if depth > 3 or roll < 0.3:
        n = str(rng.randint(0, 10**rng.randint(1, 6)))
        return n + (f".{rng.randint(0, 999)}" if rng.random() < 0.3 else "")
    if roll < 0.4:
        return "-" + arithmetic_string(rng, depth + 1)
    if roll < 0.55:
        return "(" + arithmetic_string(rng, depth + 1) + ")"
    op = rng.choice("+-*/")
    return f"{arithmetic_string(rng, depth + 1)} {op} {arithmetic_string(rng, depth + 1)}"


def nested_list_string(rng: random.Random) -> str:
    """A random nested list, serialized by ``json.dumps``."""
    def value(depth: int) -> Any:
        roll = rng.random()
        if depth < 4 and roll < 0.3:
            return [value(depth + 1) for _ in range(rng.randint(0, 5))]
        if roll < 0.65:
            return rng.randint(-10**6, 10**6)
        return "".join(rng.choice("abcdefghij klmnop") for _ in range(rng.randint(0, 12)))
    return json.dumps([value(1) for _ in range(rng.randint(1, 6))])


def c_like_string(rng: random.Random) -> str:
    """A random program of the C_LIKE grammar: a few functions with nested statements."""
    names = ["x", "y", "count", "total", "i", "n", "value", "acc", "tmp_1"]
    types = ["int", "float", "char"]

    def expr(depth: int = 0) -> str:
        roll = rng.random()
        if depth > 2 or roll < 0.35:
            return rng.choice([str(rng.randint(0, 999)), rng.choice(names)])
        if roll < 0.5:
            return f"f{rng.randint(0, 3)}({', '.join(expr(depth + 1) for _ in range(rng.randint(0, 2)))})"
        if roll < 0.6:
            return f"({expr(depth + 1)})"
        return f"{expr(depth + 1)} {rng.choice('+-*/%')} {expr(depth + 1)}"

    def cond() -> str:  # the grammar allows one comparison, at the top of an expression
        return f"{expr()} {rng.choice(['<', '==', '>=', '!='])} {expr()}" if rng.random() < 0.7 else expr()

    def block(indent: int, depth: int) -> str:
        pad = "    " * (indent + 1)
        lines = [pad + stmt(indent + 1, depth + 1) for _ in range(rng.randint(1, 4))]
        return "{\n" + "\n".join(lines) + "\n" + "    " * indent + "}"

    def stmt(indent: int, depth: int) -> str:
        roll = rng.random()
        if depth < 3 and roll < 0.15:
            tail = " else " + block(indent, depth) if rng.random() < 0.4 else ""
            return f"if ({cond()}) " + block(indent, depth) + tail
        if depth < 3 and roll < 0.25:
            return f"while ({cond()}) " + block(indent, depth)
        if roll < 0.5:
            return f"{rng.choice(types)} {rng.choice(names)} = {expr()};"
        if roll < 0.75:
            return f"{rng.choice(names)} = {expr()};"
        if roll < 0.85:
            return f"return {expr()};"
        return f"f{rng.randint(0, 3)}({expr()});"

    functions = []
    for k in range(rng.randint(1, 3)):
        params = ", ".join(f"{rng.choice(types)} {n}" for n in rng.sample(names, rng.randint(0, 3)))
        functions.append(f"{rng.choice(types + ['void'])} f{k}({params}) " + block(0, 0))
    return "\n\n".join(functions) + "\n"


def json_strings(n: int) -> list[str]:
    """``n`` valid MaskBench instances, evenly sampled, serialized as the MaskBench runner does."""
    texts = []
    for path in sorted(MASKBENCH_DEV.glob("*.json")):
        for test in json.loads(path.read_text(encoding="utf-8")).get("tests", []):
            if test["valid"]:
                texts.append(json.dumps(test["data"], ensure_ascii=False))
    return sample_evenly(texts, n)


def build_cases(n: int, seed: int = 0) -> list[Case]:
    """The four grammars with ``n`` strings each, tokenized with the Llama-3 tokenizer."""
    rng = random.Random(seed)
    tokenizer = load_tokenizer()
    sources = [
        ("any-JSON", "json", "", json_strings(n)),
        ("arithmetic", "gbnf", ARITHMETIC, [arithmetic_string(rng) for _ in range(n)]),
        ("C-like", "gbnf", C_LIKE, [c_like_string(rng) for _ in range(n)]),
        ("nested lists", "gbnf", NESTED_LISTS, [nested_list_string(rng) for _ in range(n)]),
    ]
    return [
        Case(name, kind, source, [Instance(t, encode(tokenizer, t), True) for t in texts])
        for name, kind, source, texts in sources
    ]


# --------------------------------------------------------------------------- main
def run(
    engines: Sequence[str], cases: Sequence[Case], timeout_s: float, max_rss: int, clock: str
) -> dict[str, Any]:
    """Every case under every engine; returns ``{"versions": ..., "grammars": ...}``."""
    versions: dict[str, str] = {}
    grammars: dict[str, dict[str, Any]] = {}
    for c in cases:
        tokens = sum(len(i.tokens) for i in c.instances)
        grammars[c.name] = {"strings": len(c.instances), "tokens": tokens, "engines": {}}
    for engine in engines:
        print(f"running {engine}", file=sys.stderr)
        worker = EngineWorker(engine, timeout_s, max_rss, clock)
        try:
            for case in cases:
                res = worker.run(case)
                entry: dict[str, Any] = {"status": res.status, "error": res.error, "compile_s": res.compile_s}
                if res.status == "compiled":
                    entry["mask_s"] = summarize(res.mask_times)
                    entry["accepted"] = sum(i.outcome == "accepted" for i in res.instances)
                    entry["failures"] = [f"{i.outcome}: {i.detail}" for i in res.instances
                                         if i.outcome != "accepted"][:5]
                grammars[case.name]["engines"][engine] = entry
            versions[engine] = worker.version
        except EngineUnavailable as exc:
            print(f"  skipped: {exc}", file=sys.stderr)
        finally:
            worker.close()
    return {"versions": versions, "grammars": grammars}


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engines", default=",".join(GRAMMAR_ENGINES))
    ap.add_argument("--strings", type=int, default=50, help="strings per grammar")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds for one compile and for one string")
    ap.add_argument("--max-rss-mib", type=int, default=6144)
    ap.add_argument("--clock", choices=CLOCK_NAMES, default="cpu", help="as in bench/compare.py")
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "grammars.json")
    args = ap.parse_args(argv)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    bad = [e for e in engines if e not in GRAMMAR_ENGINES]
    if bad:
        raise SystemExit(f"no CFG support for {bad}; choose from {', '.join(GRAMMAR_ENGINES)}")

    cases = build_cases(args.strings)
    report = {
        "benchmark": "grammars",
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "PYTHONPATH=src .venv/bin/python bench/grammars.py " + " ".join(
            shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv)),
        "machine": machine_description(),
        "clock": args.clock,
        **run(engines, cases, args.timeout, args.max_rss_mib * 2**20, args.clock),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(grammar_report(report))
    print(f"\nwrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
