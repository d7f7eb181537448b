#!/usr/bin/env bash
# The GPU check, run on a lent GPU machine from the root of a copy of the working tree:
#
#   1. the machine: nvidia-smi, python, torch, CUDA;
#   2. build tokensieve (C++ core included) into a temporary folder, PYTHONPATH points there;
#   3. tests/integrations/test_cuda_paths.py (masks on CUDA tensors, the LogitsProcessor, the
#      decode loop on a CUDA model) with pytest;
#   4. bench/end_to_end.py --model random-llama --device cuda, short: a 1.1B-parameter random
#      Llama (16 layers) and a 4-layer one (faster forward pass, so masks weigh more), if the
#      time budget allows.
#
# Needs .device/ from scripts/device_prepare.sh (there is no ../shared and no network on that
# machine). Everything goes to $OUT (default /tmp/out): one log per step, summary.txt, and the
# benchmark JSON. Every step has its own timeout; the whole script stays under 6 minutes.
# A failing step does not stop the next ones; the exit status is that of the first failure.
#
#   OUT=/tmp/out scripts/device_check.sh
#
# Knobs for trying it elsewhere: DEVICE=cpu (same steps on the CPU), JOBS (build parallelism),
# BUILD_WITH=cmake (CMake without pip), BENCH_ARGS (appended to both benchmark command lines,
# e.g. smaller model sizes), DEADLINE (seconds for the whole script, default 340) and
# BUILD_LIMIT (default 180).
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/out}
export PY=${PYTHON:-python3}
export DEVICE=${DEVICE:-cuda}
export WORK=${WORK:-/tmp/tokensieve-device}
export SITE="$WORK/site"    # tokensieve itself
export EXTRA="$WORK/extra"  # third-party packages the machine lacks, from .device/wheels
export JOBS=${JOBS:-$(nproc)}
export BENCH_ARGS=${BENCH_ARGS:-}
mkdir -p "$OUT" "$WORK"
: >"$OUT/summary.txt"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONDONTWRITEBYTECODE=1
START=$(date +%s)
DEADLINE=${DEADLINE:-340}  # seconds; every step's limit is cut to what is left of it
STATUS=0

# step NAME LIMIT_SECONDS FUNCTION ARGS...: run with a timeout, log to $OUT/NAME.log, show its tail.
step() {
  local name=$1 limit=$2
  shift 2
  local t0 left
  t0=$(date +%s)
  left=$((DEADLINE - (t0 - START)))
  if [ "$left" -lt 15 ]; then
    echo "$name: skipped, the ${DEADLINE} s budget is spent" | tee -a "$OUT/summary.txt"
    return 1
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  echo "=== $name (limit ${limit}s, at +$((t0 - START))s)"
  # The functions run in a child bash (timeout cannot run a shell function itself).
  timeout --kill-after=5 "$limit" bash -c '"$@"' _ "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  tail -n 45 "$OUT/$name.log"
  echo "$name: rc=$rc, $(($(date +%s) - t0)) s" | tee -a "$OUT/summary.txt"
  if [ "$rc" -ne 0 ] && [ "$STATUS" -eq 0 ]; then STATUS=$rc; fi
  return "$rc"
}

machine() {
  nvidia-smi --query-gpu=name,memory.total,memory.used,utilization.gpu,driver_version --format=csv || true
  nproc
  "$PY" - <<'EOF'
import sys
from importlib import metadata

import torch

print("python", sys.version.split()[0], "| torch", torch.__version__, "| CUDA", torch.version.cuda,
      "| available", torch.cuda.is_available(), "| devices", torch.cuda.device_count())
for dist in ("transformers", "tokenizers", "numpy", "nanobind", "scikit-build-core", "jsonschema",
             "pytest", "gguf", "hypothesis"):
    try:
        print(f"  {dist} {metadata.version(dist)}")
    except metadata.PackageNotFoundError:
        print(f"  {dist} missing")
EOF
}

# Unpack from .device/wheels only the distributions whose modules this interpreter cannot
# import (no network; nothing the machine has, such as its typing_extensions, is shadowed).
# A wheel is a zip archive laid out for site-packages, so unpacking needs no pip.
extras() {
  [ -d .device/wheels ] || { echo "no .device/wheels: run scripts/device_prepare.sh and carry .device"; return 1; }
  "$PY" - "$EXTRA" <<'EOF'
import importlib.util, pathlib, sys, zipfile
target = pathlib.Path(sys.argv[1])
modules = {"jsonschema": "jsonschema", "attr": "attrs", "referencing": "referencing",
           "jsonschema_specifications": "jsonschema_specifications", "rpds": "rpds_py",
           "typing_extensions": "typing_extensions", "pytest": "pytest", "pluggy": "pluggy",
           "iniconfig": "iniconfig", "packaging": "packaging", "pygments": "pygments"}
missing = [dist for module, dist in modules.items() if importlib.util.find_spec(module) is None]
print("missing here:", " ".join(missing) or "nothing")
wheels = sorted(pathlib.Path(".device/wheels").glob("*.whl"))
for dist in missing:
    found = [w for w in wheels if w.name.lower().startswith(dist.lower() + "-")]
    if not found:
        sys.exit(f"no wheel for {dist} in .device/wheels")
    zipfile.ZipFile(found[-1]).extractall(target)
    print("unpacked", found[-1].name)
EOF
}

# tokensieve with its C++ core into $SITE: pip + scikit-build-core (the package's own build),
# or CMake directly (as scripts/build_dev.sh does) where pip is missing or BUILD_WITH=cmake.
# Without mypyc (TOKENSIEVE_MYPYC=OFF): the device has no network to fetch mypy, and this
# check is about the CUDA paths, not compile speed.
build() {
  local nb_dir
  nb_dir=$("$PY" -c "import nanobind; print(nanobind.cmake_dir())") || return 1
  if [ "${BUILD_WITH:-pip}" = pip ] && "$PY" -m pip --version >/dev/null 2>&1; then
    CMAKE_BUILD_PARALLEL_LEVEL=$JOBS "$PY" -m pip install --no-build-isolation --no-deps --no-index \
      --target "$SITE" --upgrade \
      --config-settings=build-dir="$WORK/build" \
      --config-settings=cmake.define.nanobind_DIR="$nb_dir" \
      --config-settings=cmake.define.TOKENSIEVE_MYPYC=OFF \
      . || return 1
  else
    echo "building with CMake directly"
    cmake -S . -B "$WORK/build-cmake" -G Ninja -DSKBUILD=ON -DCMAKE_BUILD_TYPE=Release -DTOKENSIEVE_MYPYC=OFF \
      -Dnanobind_DIR="$nb_dir" -DPython_EXECUTABLE="$(command -v "$PY")" || return 1
    cmake --build "$WORK/build-cmake" -j "$JOBS" || return 1
    rm -rf "$SITE/tokensieve" && mkdir -p "$SITE" && cp -r src/tokensieve "$SITE/" || return 1
    rm -f "$SITE"/tokensieve/_core*.so && cp "$WORK"/build-cmake/_core*.so "$SITE/tokensieve/" || return 1
  fi
  "$PY" -c "import tokensieve, tokensieve._core as c; print('tokensieve', tokensieve.__version__, 'from', c.__file__)"
}

tests() {
  "$PY" -m pytest -q -p no:cacheprovider -rs tests/integrations/test_cuda_paths.py \
    --junitxml="$OUT/test_cuda_paths.xml"
}

bench() {  # bench NAME EXTRA_ARGS...
  local name=$1
  shift
  # shellcheck disable=SC2086  # BENCH_ARGS is a list of arguments
  "$PY" bench/end_to_end.py --model random-llama --device "$DEVICE" --schemas all \
    --max-tokens 64 --repeats 3 --out "$OUT/$name.json" "$@" $BENCH_ARGS
}

export -f machine extras build tests bench
step machine 30 machine
step extras 40 extras
export PYTHONPATH="$SITE:.:$EXTRA${PYTHONPATH:+:$PYTHONPATH}"
if step build "${BUILD_LIMIT:-180}" build; then
  step tests 90 tests
  # On an H200 (2026-12-04) the 16-layer run took 20 s to build the model, then 46, 27 and 27 s
  # for its repetitions (the first one warms CUDA up): 120 s was too short, hence 180.
  step end_to_end_16_layers 180 bench end_to_end_16_layers --layers 16
  step end_to_end_4_layers 80 bench end_to_end_4_layers --layers 4
fi
echo "=== done in $(($(date +%s) - START)) s, status $STATUS"
cat "$OUT/summary.txt"
exit "$STATUS"
