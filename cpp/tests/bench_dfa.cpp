// Build-time benchmark for build_dfa: `cpp/tests/run.sh bench`. Prints the mean time per build
// (best of 5 rounds) for terminals typical of JSON grammars and for a wide bounded repeat.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "regex_program.hpp"
#include "tokensieve/dfa.hpp"
#include "tokensieve/error.hpp"

namespace {

using namespace regex_program;

void bench(const char* name, const Program& p, int iterations) {
  double best = 1e300;
  int32_t states = 0;
  for (int round = 0; round < 5; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) {
      try {
        states = tokensieve::build_dfa(p.data(), p.size()).num_states();
      } catch (const tokensieve::Error&) {
        states = -1;  // a limit was hit: the time measured is the time to fail
      }
    }
    const std::chrono::duration<double, std::micro> dt = std::chrono::steady_clock::now() - t0;
    best = std::min(best, dt.count() / iterations);
  }
  std::printf("%-34s %10.2f us   (%d states, %zu program words)\n", name, best, states, p.size());
}

}  // namespace

int main() {
  const Program hex = bytes({{'0', '9'}, {'a', 'f'}, {'A', 'F'}});
  const Program digit = bytes({{'0', '9'}});
  const Program number = seq({opt(byte('-')), alt({byte('0'), seq({bytes({{'1', '9'}}), star(digit)})}),
                              opt(seq({byte('.'), rep(1, -1, digit)})),
                              opt(seq({bytes({{'e', 'e'}, {'E', 'E'}}), opt(bytes({{'+', '+'}, {'-', '-'}})),
                                       rep(1, -1, digit)}))});
  bench("json string (UTF-8)", json_string(), 20000);
  bench("json number", number, 20000);
  bench("literal \"true\"", lit("true"), 100000);
  bench("uuid-ish hex{8}-hex{4}", seq({rep(8, 8, hex), byte('-'), rep(4, 4, hex)}), 20000);
  bench("[a-z]{0,1000}", rep(0, 1000, bytes({{'a', 'z'}})), 200);
  bench("[a-z]{0,100000000} (limit)", rep(0, 100000000, bytes({{'a', 'z'}})), 20000);
  bench("(a|b)*a(a|b){12}", seq({star(bytes({{'a', 'b'}})), byte('a'), rep(12, 12, bytes({{'a', 'b'}}))}), 3);
  return 0;
}
