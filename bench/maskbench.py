"""MaskBench with the tokensieve engine: coverage, exactness and timing, per source.

For every schema of the dev split: compile with ``property_order="any"`` (time to first
mask = compile + first mask); for every test instance: serialize with
``json.dumps(data, ensure_ascii=False)``, tokenize with the Llama-3 tokenizer, compute the
mask before each token (timed), check the token is allowed and accept it, and at the end
check EOS is allowed. A valid instance is right when every token and EOS are allowed; an
invalid one when some token or EOS is rejected.

    python bench/maskbench.py                      # whole dev split, prints the report
    python bench/maskbench.py --sample 200 --json out.json
    python bench/maskbench.py --no-masks           # exactness only (accept checks), faster

The same code backs the ratchet test ``tests/conformance/test_maskbench.py``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import tokensieve as ts

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "maskbench" / "dev"
DEFAULT_TOKENIZER = (
    Path(__file__).resolve().parents[2] / "shared" / "tokenizers" / "hf" / "llama3-128k.tokenizer.json"
)


@dataclass
class Report:
    """Counts by source and outcome, plus timing samples (seconds)."""

    schemas: Counter[str] = field(default_factory=Counter)
    compiled: Counter[str] = field(default_factory=Counter)
    errors: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    valid_ok: Counter[str] = field(default_factory=Counter)
    valid_bad: Counter[str] = field(default_factory=Counter)
    invalid_ok: Counter[str] = field(default_factory=Counter)
    invalid_bad: Counter[str] = field(default_factory=Counter)
    compile_times: list[float] = field(default_factory=list)
    mask_times: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def totals(self) -> dict[str, Any]:
        n = sum(self.schemas.values())
        c = sum(self.compiled.values())
        vo, vb = sum(self.valid_ok.values()), sum(self.valid_bad.values())
        io, ib = sum(self.invalid_ok.values()), sum(self.invalid_bad.values())
        return {
            "schemas": n,
            "compiled": c,
            "compiled_pct": 100.0 * c / n if n else 0.0,
            "valid_accepted": vo,
            "valid_rejected": vb,
            "invalid_rejected": io,
            "invalid_accepted": ib,
            "valid_accepted_pct": 100.0 * vo / (vo + vb) if vo + vb else 100.0,
            "invalid_rejected_pct": 100.0 * io / (io + ib) if io + ib else 100.0,
            "compile_ms": _percentiles(self.compile_times),
            "mask_us": _percentiles(self.mask_times, scale=1e6),
        }


def _percentiles(samples: list[float], scale: float = 1e3) -> dict[str, float]:
    if not samples:
        return {}
    a = np.asarray(samples) * scale
    return {
        "p50": float(np.percentile(a, 50)),
        "p90": float(np.percentile(a, 90)),
        "p99": float(np.percentile(a, 99)),
        "p99.9": float(np.percentile(a, 99.9)),
        "max": float(a.max()),
        "n": len(a),
    }


def source_of(path: Path) -> str:
    name = path.stem
    if "---" in name:
        return name.split("---")[0]
    return name.split("_")[0]


def load_files(data_dir: Path, sample: int | None = None, seed: int = 0) -> list[Path]:
    files = sorted(data_dir.glob("*.json"))
    if sample is not None and sample < len(files):
        files = sorted(random.Random(seed).sample(files, sample))
    return files


def run(
    files: list[Path],
    vocab: ts.Vocabulary,
    tokenizer: Any,
    *,
    masks: bool = True,
    progress: bool = False,
) -> Report:
    report = Report()
    bitmask = ts.allocate_bitmask(1, vocab.size)
    eos = vocab.eos_token_ids[0]
    for i, path in enumerate(files):
        if progress and i % 100 == 0:
            print(f"  {i}/{len(files)}", file=sys.stderr)
        entry = json.loads(path.read_text())
        src = source_of(path)
        report.schemas[src] += 1
        compiler = ts.Compiler(vocab)  # a fresh cache per schema: compile time is measured cold
        started = time.perf_counter()
        try:
            grammar = compiler.json_schema(entry["schema"], property_order="any")
            ts.Matcher(grammar).fill_bitmask(bitmask, 0)
        except ts.TokensieveError as e:
            report.errors[src][type(e).__name__] += 1
            continue
        except Exception as e:  # a bug, never an acceptable outcome: counted and listed
            report.errors[src]["internal:" + type(e).__name__] += 1
            report.failures.append(f"internal error: {path.name}: {type(e).__name__}: {e}")
            continue
        report.compile_times.append(time.perf_counter() - started)
        report.compiled[src] += 1
        for test in entry.get("tests", []):
            text = json.dumps(test["data"], ensure_ascii=False)
            ids = tokenizer.encode(text, add_special_tokens=False).ids
            ok = _check_instance(grammar, ids, eos, bitmask, report.mask_times if masks else None)
            if test["valid"]:
                (report.valid_ok if ok else report.valid_bad)[src] += 1
                if not ok:
                    report.failures.append(f"valid rejected: {path.name}: {text[:200]}")
            else:
                (report.invalid_bad if ok else report.invalid_ok)[src] += 1
                if ok:
                    report.failures.append(f"invalid accepted: {path.name}: {text[:200]}")
    return report


def _check_instance(
    grammar: ts.CompiledGrammar, ids: list[int], eos: int, bitmask: np.ndarray, mask_times: list[float] | None
) -> bool:
    """True when every token and then EOS are allowed."""
    matcher = ts.Matcher(grammar)
    for t in [*ids, eos]:
        if mask_times is not None:
            started = time.perf_counter()
            try:
                matcher.fill_bitmask(bitmask, 0)
            except ts.NoTokenAllowed:
                return False
            mask_times.append(time.perf_counter() - started)
            allowed = bool((bitmask[0, t >> 5] >> (t & 31)) & 1)
            if allowed != matcher.accept_token(t):
                raise AssertionError(f"mask and accept_token disagree on token {t}")
            if not allowed:
                return False
        elif not matcher.accept_token(t):
            return False
    return matcher.is_terminated()


def format_report(report: Report) -> str:
    lines = [
        "| source | schemas | compiled | valid ok | valid rejected | invalid rejected | invalid accepted |",
        "|---|--:|--:|--:|--:|--:|--:|",
    ]
    for src in sorted(report.schemas):
        lines.append(
            f"| {src} | {report.schemas[src]} | {report.compiled[src]} | {report.valid_ok[src]} | "
            f"{report.valid_bad[src]} | {report.invalid_ok[src]} | {report.invalid_bad[src]} |"
        )
    t = report.totals()
    lines.append(
        f"| **all** | {t['schemas']} | {t['compiled']} ({t['compiled_pct']:.1f}%) | {t['valid_accepted']} | "
        f"{t['valid_rejected']} | {t['invalid_rejected']} | {t['invalid_accepted']} |"
    )
    errors: Counter[str] = Counter()
    for c in report.errors.values():
        errors.update(c)
    lines.append("")
    lines.append(f"compile errors by kind: {dict(errors)}")
    lines.append(f"time to first mask (ms): {json.dumps(t['compile_ms'])}")
    lines.append(f"mask time (us): {json.dumps(t['mask_us'])}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--tokenizer", type=Path, default=DEFAULT_TOKENIZER)
    ap.add_argument("--sample", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-masks", action="store_true", help="check exactness with accept_token only")
    ap.add_argument("--json", type=Path, default=None, help="write totals and failures as JSON")
    ap.add_argument("--show-failures", type=int, default=20)
    args = ap.parse_args(argv)

    from tokenizers import Tokenizer

    vocab = ts.Vocabulary.from_tokenizer_json(args.tokenizer)
    tokenizer = Tokenizer.from_file(str(args.tokenizer))
    files = load_files(args.data, args.sample, args.seed)
    report = run(files, vocab, tokenizer, masks=not args.no_masks, progress=True)
    print(format_report(report))
    for f in report.failures[: args.show_failures]:
        print("  " + f)
    if args.json:
        args.json.write_text(json.dumps({"totals": report.totals(), "failures": report.failures}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
