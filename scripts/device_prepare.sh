#!/usr/bin/env bash
# Prepares .device/ for scripts/device_check.sh, here, where ../shared and PyPI are reachable.
#
# The GPU machine gets a copy of the working tree and nothing else: no ../shared, no network.
# This copies what the check needs into .device/ (git-ignored through .git/info/exclude, so it
# never lands in a commit; pass it to the device tool with carry=[".device"]):
#
#   .device/llama3-128k.tokenizer.json   vocabulary of bench/end_to_end.py --model random-llama
#   .device/maskbench/*.json             the MaskBench schemas bench/end_to_end.py uses
#   .device/wheels/                      CPython 3.12 wheels of jsonschema (the JSON Schema
#                                        front-end imports it) and pytest, installed there only
#                                        if the machine lacks them
#
# Usage: scripts/device_prepare.sh      (TOKENSIEVE_SHARED overrides ../shared, PYTHON the venv)
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${TOKENSIEVE_SHARED:-../shared}
PY=${PYTHON:-.venv/bin/python}
DEVICE_PY_VERSION=3.12  # the GPU machine's python3

rm -rf .device
mkdir -p .device/maskbench .device/wheels
cp "$SHARED/tokenizers/hf/llama3-128k.tokenizer.json" .device/
# The schema list lives in the benchmark itself, so the two cannot drift apart.
files=$(PYTHONPATH=. "$PY" -c "from bench.end_to_end import MASKBENCH_FILES; print('\n'.join(MASKBENCH_FILES))")
for f in $files; do
  cp "$SHARED/datasets/maskbench/dev/$f" .device/maskbench/
done

# Binary wheels only, for the device's interpreter and platform (rpds-py, under jsonschema, is compiled).
"$PY" -m pip download --quiet --dest .device/wheels --only-binary=:all: \
  --python-version "$DEVICE_PY_VERSION" --implementation cp \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform any \
  "jsonschema>=4.18" "pytest>=8"

exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qxF '/.device/' "$exclude" 2>/dev/null || echo '/.device/' >> "$exclude"

echo "prepared .device/ ($(du -sh .device | cut -f1)): $(ls .device/maskbench | wc -l) schemas, $(ls .device/wheels | wc -l) wheels"
git check-ignore -q .device/llama3-128k.tokenizer.json && echo ".device/ is ignored by git (carry it: carry=[\".device\"])"
