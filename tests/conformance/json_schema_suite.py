"""Run the JSON Schema Test Suite (draft 2020-12) against the JSON Schema front-end.

    PYTHONPATH=src:tests .venv/bin/python -m conformance.json_schema_suite [--verbose]

A test is judged *right* when the grammar accepts ``json.dumps(data, ensure_ascii=False)``
(checked with the reference oracle, ``tests/oracle.py``) iff the instance is valid. A
schema that fails to convert with ``UnsupportedSchemaError`` makes every test of its case
wrong. ``UnsatisfiableSchemaError`` is the front-end reporting an *empty language* (the
schema ``false``, ``enum: []``...): its tests are judged as an empty grammar would be
(every instance rejected), and counted apart in ``empty``. Objects are converted with
``property_order="any"``: the suite's instances list keys in any order.
"""

from __future__ import annotations

import argparse
import collections
import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tokensieve.errors import TokensieveError, UnsatisfiableSchemaError
from tokensieve.frontends.json_schema import json_schema_to_grammar

try:
    from oracle import Oracle
    from paths import DATASETS
except ImportError:  # imported as tests.conformance...
    from tests.oracle import Oracle  # type: ignore[no-redef]
    from tests.paths import DATASETS  # type: ignore[no-redef]

SUITE = DATASETS / "json-schema-test-suite"
REMOTE_PREFIX = "http://localhost:1234/"


def remote_documents() -> dict[str, Any]:
    """The suite's remote schemas by the URI the tests use for them."""
    docs: dict[str, Any] = {}
    remotes = SUITE / "remotes"
    for path in sorted(remotes.rglob("*.json")):
        docs[REMOTE_PREFIX + path.relative_to(remotes).as_posix()] = json.loads(path.read_text())
    return docs


@dataclass
class Tally:
    """Right/wrong counts, split the way the report needs them."""

    right: int = 0
    wrong: int = 0
    false_accepts: int = 0
    false_rejects: int = 0
    compile_errors: int = 0  # tests made wrong by a conversion error
    empty: int = 0  # tests of schemas reported unsatisfiable (judged as an empty grammar)
    errors_by_keyword: collections.Counter[str] = field(default_factory=collections.Counter)

    @property
    def total(self) -> int:
        return self.right + self.wrong

    def add(self, other: Tally) -> None:
        self.right += other.right
        self.wrong += other.wrong
        self.false_accepts += other.false_accepts
        self.false_rejects += other.false_rejects
        self.compile_errors += other.compile_errors
        self.empty += other.empty
        self.errors_by_keyword.update(other.errors_by_keyword)


def run_file(path: Path, documents: dict[str, Any], verbose: bool = False) -> Tally:
    tally = Tally()
    for case in json.loads(path.read_text()):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                grammar = json_schema_to_grammar(case["schema"], property_order="any", documents=documents)
        except UnsatisfiableSchemaError:
            tally.empty += len(case["tests"])
            for test in case["tests"]:
                if test["valid"]:
                    tally.wrong += 1
                    tally.false_rejects += 1
                else:
                    tally.right += 1
            continue
        except TokensieveError as exc:
            n = len(case["tests"])
            tally.wrong += n
            tally.compile_errors += n
            tally.errors_by_keyword[str(getattr(exc, "keyword", None))] += n
            if verbose:
                print(f"  {path.name}: {case['description']!r}: {exc}")
            continue
        oracle = Oracle(grammar)
        for test in case["tests"]:
            accepted = oracle.is_complete(json.dumps(test["data"], ensure_ascii=False).encode())
            if accepted == test["valid"]:
                tally.right += 1
            else:
                tally.wrong += 1
                if accepted:
                    tally.false_accepts += 1
                else:
                    tally.false_rejects += 1
                if verbose:
                    print(
                        f"  {path.name}: {case['description']!r} / {test['description']!r}: "
                        f"{'accepted invalid' if accepted else 'rejected valid'}"
                    )
    return tally


def run_suite(*, optional: bool = True, verbose: bool = False) -> dict[str, Tally]:
    """Tallies per test file (relative path); ``optional`` includes ``optional/**``."""
    documents = remote_documents()
    base = SUITE / "draft2020-12"
    out: dict[str, Tally] = {}
    for path in sorted(base.rglob("*.json")):
        rel = path.relative_to(base).as_posix()
        if rel.startswith("optional/") and not optional:
            continue
        out[rel] = run_file(path, documents, verbose)
    return out


def summarize(tallies: dict[str, Tally]) -> dict[str, Tally]:
    """Totals for the required part, the optional part and everything."""
    sums = {"required": Tally(), "optional": Tally(), "all": Tally()}
    for rel, t in tallies.items():
        sums["optional" if rel.startswith("optional/") else "required"].add(t)
        sums["all"].add(t)
    return sums


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    tallies = run_suite(verbose=args.verbose)
    print(f"{'file':<44}{'tests':>6}{'right':>6}{'f.acc':>6}{'f.rej':>6}{'c.err':>6}")
    for rel, t in tallies.items():
        print(
            f"{rel:<44}{t.total:>6}{t.right:>6}{t.false_accepts:>6}{t.false_rejects:>6}{t.compile_errors:>6}"
        )
    for name, t in summarize(tallies).items():
        print(
            f"{name.upper():<44}{t.total:>6}{t.right:>6}{t.false_accepts:>6}{t.false_rejects:>6}"
            f"{t.compile_errors:>6}  {100 * t.right / max(t.total, 1):.1f}% right"
        )
    print("compile errors by keyword:", summarize(tallies)["all"].errors_by_keyword.most_common())


if __name__ == "__main__":
    main()
