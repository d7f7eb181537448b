// Build-time benchmark for build_dfa: `cpp/tests/run.sh bench`. Times terminals typical of JSON
// grammars, a wide bounded repeat, a limit failure and a DFA with exponential blowup.
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

// Times `batches` batches of `per_batch` builds and prints the per-build time of the fastest
// batch and of the median one (the minimum filters out preemption on a shared machine).
void bench(const char* name, const Program& p, int per_batch, int batches = 200) {
  std::vector<double> per_build;
  int32_t states = 0;
  for (int batch = 0; batch < batches; ++batch) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < per_batch; ++i) {
      try {
        states = tokensieve::build_dfa(p.data(), p.size()).num_states();
      } catch (const tokensieve::Error&) {
        states = -1;  // a limit was hit: the time measured is the time to fail
      }
    }
    const std::chrono::duration<double, std::micro> dt = std::chrono::steady_clock::now() - t0;
    per_build.push_back(dt.count() / per_batch);
  }
  std::sort(per_build.begin(), per_build.end());
  std::printf("%-30s min %9.2f us  median %9.2f us  (%d states, %zu program words)\n", name,
              per_build.front(), per_build[per_build.size() / 2], states, p.size());
}

}  // namespace

int main() {
  const Program hex = bytes({{'0', '9'}, {'a', 'f'}, {'A', 'F'}});
  const Program digit = bytes({{'0', '9'}});
  const Program number = seq({opt(byte('-')), alt({byte('0'), seq({bytes({{'1', '9'}}), star(digit)})}),
                              opt(seq({byte('.'), rep(1, -1, digit)})),
                              opt(seq({bytes({{'e', 'e'}, {'E', 'E'}}), opt(bytes({{'+', '+'}, {'-', '-'}})),
                                       rep(1, -1, digit)}))});
  bench("json string (UTF-8)", json_string(), 10);
  bench("json number", number, 20);
  bench("literal \"true\"", lit("true"), 50);
  bench("uuid-ish hex{8}-hex{4}", seq({rep(8, 8, hex), byte('-'), rep(4, 4, hex)}), 20);
  bench("[a-z]{0,1000}", rep(0, 1000, bytes({{'a', 'z'}})), 1);
  bench("[a-z]{0,100000000} (limit)", rep(0, 100000000, bytes({{'a', 'z'}})), 50);
  const Program ab = bytes({{'a', 'b'}});
  bench("(a|b)*a(a|b){12}", seq({star(ab), byte('a'), rep(12, 12, ab)}), 1, 20);
  return 0;
}
