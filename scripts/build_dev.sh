#!/usr/bin/env bash
# Development build: compiles tokensieve._core with CMake into build/dev and places the
# module next to the sources, so `PYTHONPATH=src python ...` uses the fresh build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
NB_DIR=$("$PY" -c "import nanobind; print(nanobind.cmake_dir())")
cmake -S . -B build/dev -G Ninja -DSKBUILD=ON -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} \
  -DTOKENSIEVE_MYPYC=OFF -Dnanobind_DIR="$NB_DIR" -DPython_EXECUTABLE="$(command -v "$PY")" >/dev/null
cmake --build build/dev -j "${JOBS:-2}"
for so in build/dev/_core*.so; do cp -f "$so" "src/tokensieve/.$(basename "$so").tmp" && mv -f "src/tokensieve/.$(basename "$so").tmp" "src/tokensieve/$(basename "$so")"; done  # atomic: running processes keep the old file
echo "built $(ls src/tokensieve/_core*.so)"
