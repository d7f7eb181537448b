"""Generate C for the compile path's Python modules with mypyc, for CMake to build.

    python scripts/mypyc_generate.py OUT_DIR        (run from src/, as CMakeLists.txt does)

The JSON Schema front-end and the lowering are typed Python that runs once per schema; mypyc
compiles them to C extension modules that CPython imports in place of the .py files (the
sources stay in the wheel, and the development tree runs them uncompiled). This script only
generates: it writes the C sources under OUT_DIR and ``OUT_DIR/extensions.cmake``, which
declares one Python module target per extension (the shared code module and one small
module per compiled file) and where the wheel installs it.

The list below is the modules that compile and pay: IR construction and its regex programs,
the regex and JSON Schema front-ends, their automata, and the lowering.
"""

from __future__ import annotations

import sys
from pathlib import Path

MODULES = [
    "tokensieve/ir.py",
    "tokensieve/program.py",
    "tokensieve/compiler/lower.py",
    "tokensieve/compiler/native_lower.py",
    "tokensieve/compiler/terminal_cache.py",
    "tokensieve/frontends/charsets.py",
    "tokensieve/frontends/regex.py",
    "tokensieve/frontends/regex_parser.py",
    "tokensieve/frontends/whitespace.py",
    "tokensieve/frontends/json_schema/arrays.py",
    "tokensieve/frontends/json_schema/automata.py",
    "tokensieve/frontends/json_schema/composition.py",
    "tokensieve/frontends/json_schema/converter.py",
    "tokensieve/frontends/json_schema/digits.py",
    "tokensieve/frontends/json_schema/disjoint.py",
    "tokensieve/frontends/json_schema/drafts.py",
    "tokensieve/frontends/json_schema/formats.py",
    "tokensieve/frontends/json_schema/keywords.py",
    "tokensieve/frontends/json_schema/labeled.py",
    "tokensieve/frontends/json_schema/literals.py",
    "tokensieve/frontends/json_schema/location.py",
    "tokensieve/frontends/json_schema/negated_keywords.py",
    "tokensieve/frontends/json_schema/negation.py",
    "tokensieve/frontends/json_schema/nfa.py",
    "tokensieve/frontends/json_schema/numbers.py",
    "tokensieve/frontends/json_schema/objects.py",
    "tokensieve/frontends/json_schema/refs.py",
    "tokensieve/frontends/json_schema/strings.py",
]


def _cmake_list(items: list[str]) -> str:
    return " ".join(f'"{item}"' for item in items)


def main() -> None:
    out = Path(sys.argv[1]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    from mypyc.build import mypycify  # imported here: a build-time dependency only

    options = ["--ignore-missing-imports", "--follow-imports=silent"]
    # multi_file: several C files, which the build compiles in parallel.
    extensions = mypycify(
        options + MODULES, target_dir=str(out), opt_level="3", multi_file=True, group_name="tokensieve"
    )
    lines = []
    for i, ext in enumerate(extensions):
        *package, module = ext.name.split(".")
        target = f"mypyc_{i}"
        sources = [str(Path(s).resolve()) for s in ext.sources]
        includes = [str(Path(d).resolve()) for d in ext.include_dirs]
        lines += [
            f"Python_add_library({target} MODULE WITH_SOABI {_cmake_list(sources)})",
            f"target_include_directories({target} PRIVATE {_cmake_list(includes)})",
            f"target_compile_options({target} PRIVATE {_cmake_list(list(ext.extra_compile_args))})",
            f'set_target_properties({target} PROPERTIES OUTPUT_NAME "{module}" PREFIX "")',
            f'install(TARGETS {target} LIBRARY DESTINATION "{"/".join(package) or "."}")',
        ]
    (out / "extensions.cmake").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"mypyc: {len(extensions)} extension modules for {len(MODULES)} files in {out}")


if __name__ == "__main__":
    main()
