"""MaskBench schema coverage of the JSON Schema front-end (compile outcome per source).

    PYTHONPATH=src .venv/bin/python bench/maskbench_schemas.py [--order any|declared]
        [--oracle N] [--limit N] [--json out.json]

For every schema of ``../shared/datasets/maskbench/dev/`` (sorted), convert it and record
the outcome: ``ok``, ``unsupported:<keyword>``, ``unsatisfiable`` or ``crash:<type>``.
With ``--oracle N``, the first N compiled schemas with tests (every k-th, spread over
the set) are also checked with the reference oracle (``tests/oracle.py``, slow): each
valid instance serialized with ``json.dumps(data, ensure_ascii=False)`` must be complete,
each invalid one must not be.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "datasets" / "maskbench" / "dev"
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))

from tokensieve.errors import UnsatisfiableSchemaError, UnsupportedSchemaError  # noqa: E402
from tokensieve.frontends.json_schema import json_schema_to_grammar  # noqa: E402


def source_of(name: str) -> str:
    if name.startswith(("BFCL_", "JME_")):
        return name.split("_")[0]
    return name.split("---")[0]


def compile_outcome(schema: object, order: str) -> tuple[str, object]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return "ok", json_schema_to_grammar(schema, property_order=order)  # type: ignore[arg-type]
    except UnsatisfiableSchemaError:
        return "unsatisfiable", None
    except UnsupportedSchemaError as exc:
        return f"unsupported:{exc.keyword}", None
    except RecursionError:
        return "crash:RecursionError", None
    except Exception as exc:  # a crash is an outcome to report, not to hide
        return f"crash:{type(exc).__name__}:{exc}"[:120], None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--order", default="any", choices=["any", "declared"])
    ap.add_argument(
        "--oracle", type=int, default=0, help="check instances of N compiled schemas with the oracle"
    )
    ap.add_argument("--limit", type=int, default=0, help="only the first N files")
    ap.add_argument("--json", help="write per-file outcomes here")
    args = ap.parse_args()
    files = sorted(DATA.glob("*.json"))
    if args.limit:
        files = files[: args.limit]
    by_source: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    outcomes: dict[str, str] = {}
    millis: dict[str, float] = {}
    compiled: list[tuple[str, object, list[dict]]] = []
    times: list[float] = []
    for f in files:
        doc = json.loads(f.read_text())
        t0 = time.perf_counter()
        outcome, grammar = compile_outcome(doc["schema"], args.order)
        times.append(time.perf_counter() - t0)
        millis[f.name] = round(1000 * times[-1], 1)
        outcomes[f.name] = outcome
        by_source[source_of(f.name)][outcome.split(":")[0]] += 1
        if grammar is not None and doc.get("tests"):
            compiled.append((f.name, grammar, doc["tests"]))
    total = collections.Counter(o.split(":")[0] for o in outcomes.values())
    print(f"{'source':<16}{'schemas':>8}{'ok':>7}{'unsup':>7}{'unsat':>7}{'crash':>7}{'ok %':>8}")
    for src in sorted(by_source):
        c = by_source[src]
        n = sum(c.values())
        print(
            f"{src:<16}{n:>8}{c['ok']:>7}{c['unsupported']:>7}{c['unsatisfiable']:>7}{c['crash']:>7}"
            f"{100 * c['ok'] / n:>7.1f}%"
        )
    n = len(outcomes)
    print(
        f"{'TOTAL':<16}{n:>8}{total['ok']:>7}{total['unsupported']:>7}{total['unsatisfiable']:>7}"
        f"{total['crash']:>7}{100 * total['ok'] / max(n, 1):>7.1f}%"
    )
    times.sort()
    if times:
        print(
            f"convert time p50 {1000 * times[len(times) // 2]:.1f} ms, "
            f"p99 {1000 * times[int(len(times) * 0.99)]:.1f} ms,"
            f" max {1000 * times[-1]:.0f} ms"
        )
    reasons = collections.Counter(o for o in outcomes.values() if o != "ok")
    print("top failure reasons:", reasons.most_common(15))
    if args.oracle:
        check_instances(compiled, args.oracle)
    if args.json:
        report = {name: [outcome, millis[name]] for name, outcome in outcomes.items()}
        Path(args.json).write_text(json.dumps(report, indent=1))


def check_instances(compiled: list[tuple[str, object, list[dict]]], count: int) -> None:
    from oracle import Oracle

    step = max(1, len(compiled) // count)
    sample = compiled[::step][:count]
    stats = collections.Counter()
    for name, grammar, tests in sample:
        oracle = Oracle(grammar)  # type: ignore[arg-type]
        for t in tests:
            text = json.dumps(t["data"], ensure_ascii=False).encode()
            accepted = oracle.is_complete(text)
            kind = "valid" if t["valid"] else "invalid"
            right = accepted == t["valid"]
            stats[f"{kind}_{'right' if right else 'wrong'}"] += 1
            if not right:
                print(
                    f"  WRONG {name}: {kind} instance "
                    f"{'rejected' if t['valid'] else 'accepted'}: {text[:100]!r}"
                )
    print(f"oracle check on {len(sample)} schemas:", dict(stats))


if __name__ == "__main__":
    main()
