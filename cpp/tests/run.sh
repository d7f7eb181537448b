#!/usr/bin/env bash
# Builds and runs the native tests: the DFA's (only cpp/src/dfa.cpp and dfa_product.cpp, with the
# scratch allocator their temporaries use), the token trie's (only cpp/src/token_trie.cpp) and
# the lowering's (only cpp/src/lowering.cpp, with a terminal source of the test's own).
#   cpp/tests/run.sh          tests
#   cpp/tests/run.sh bench    build-time benchmark (bench_dfa.cpp)
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${TMPDIR:-/tmp}/tokensieve-native-tests"
mkdir -p "$out"
flags=(-std=c++17 -O2 -Wall -Wextra -Icpp/include)
if [[ "${1:-}" == "bench" ]]; then
  g++ "${flags[@]}" cpp/src/dfa.cpp cpp/src/dfa_product.cpp cpp/src/json_literal.cpp cpp/tests/bench_dfa.cpp -o "$out/bench_dfa"
  exec "$out/bench_dfa"
fi
g++ "${flags[@]}" cpp/src/token_trie.cpp cpp/tests/test_token_trie.cpp -o "$out/test_token_trie"
"$out/test_token_trie"
g++ "${flags[@]}" cpp/src/lowering.cpp cpp/tests/test_lowering.cpp -o "$out/test_lowering"
"$out/test_lowering"
g++ "${flags[@]}" cpp/src/dfa.cpp cpp/src/dfa_product.cpp cpp/src/json_literal.cpp cpp/tests/test_dfa.cpp cpp/tests/test_dfa_random.cpp \
  cpp/tests/test_scratch_allocator.cpp -pthread -o "$out/test_dfa"
exec "$out/test_dfa"
