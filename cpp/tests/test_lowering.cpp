// Native tests of the lowering (cpp/src/lowering.cpp) on its own, with a terminal source of the
// test's making: the checks of the IR words (which Python cannot reach: the binding's reader
// writes only well-formed words), and the programs handed to the source (their hash, length
// and comparison agree with their words; programs of equal hash stay apart).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "check.hpp"
#include "tokensieve/lowering.hpp"

using tokensieve::ErrorKind;
using tokensieve::IrGrammar;
using tokensieve::LoweringLimits;
using tokensieve::ProgramText;
using tokensieve::TerminalSource;

namespace {

uint64_t polynomial_hash(const std::string& program) {
  uint64_t h = 0;
  for (size_t at = 0; at + 4 <= program.size(); at += 4) {
    uint32_t w;
    std::memcpy(&w, program.data() + at, sizeof w);
    h = h * tokensieve::kProgramHashBase + w;
  }
  return h;
}

// Every DFA terminal fits, one handle per distinct program; each program handed over is checked
// against its own words.
class RecordingSource final : public TerminalSource {
 public:
  int32_t dfa(const ProgramText& program, int64_t, int64_t, int64_t& states) override {
    // Compared with every program seen before it is written out (then the lowering walks its
    // parts), and the verdicts checked against the words once it is.
    std::vector<bool> verdicts;
    for (const auto& seen : handles) verdicts.push_back(program.equals(seen.first));
    const std::string& text = program.text();
    size_t k = 0;
    for (const auto& seen : handles) CHECK(verdicts[k++] == (seen.first == text));
    CHECK(static_cast<int64_t>(text.size()) == 4 * program.num_words());
    CHECK(program.hash() == polynomial_hash(text));
    CHECK(program.equals(text));
    if (!text.empty()) {  // one word changed, or one word fewer: not equal
      std::string changed = text;
      changed[changed.size() - 1] = static_cast<char>(changed[changed.size() - 1] ^ 1);
      CHECK(!program.equals(changed));
      CHECK(!program.equals(text.substr(0, text.size() - 4)));
    }
    ++calls;
    states = 1;
    const auto found = handles.find(text);
    if (found != handles.end()) return found->second;
    const auto handle = static_cast<int32_t>(handles.size());
    handles.emplace(text, handle);
    return handle;
  }
  int32_t counted(const std::string*, const std::string&, int64_t, int64_t, const std::string*, int64_t&) override {
    return -1;
  }
  int32_t units(const std::string*, const std::vector<bool>&, const std::vector<UnitEdge>&, int64_t, int64_t,
                const std::string*, int64_t&) override {
    return -1;
  }
  bool has_counted() const override { return false; }
  bool has_units() const override { return false; }

  int calls = 0;
  std::map<std::string, int32_t> handles;
};

LoweringLimits limits() {
  LoweringLimits l;
  l.deadline = 1e300;
  l.max_compile_seconds = "10";
  return l;
}

// A grammar of one rule over the given words (its body the last node).
IrGrammar one_rule(std::vector<int64_t> words, int32_t body) {
  IrGrammar g;
  g.words = std::move(words);
  g.rule_body = {body};
  g.rule_names = {"root"};
  return g;
}

void malformed_words_are_refused() {
  RecordingSource source;
  const auto refused = [&](std::vector<int64_t> words, int32_t body) {
    CHECK_THROWS(tokensieve::lower_grammar(one_rule(std::move(words), body), source, limits()),
                 ErrorKind::InvalidArgument, "");
  };
  refused({0, 2, 97, 97}, 0);              // a byte set missing a range
  refused({42}, 0);                        // no such kind
  refused({1, 1, 1, 0, 1, 97, 97}, 1);     // a sequence whose item comes after it
  refused({1, -1}, 0);                     // a negative count
  refused({4, 7}, 0);                      // a reference to rule 7 of 1
  refused({0, 1, 97, 97}, 5);              // a rule body that is no node
  CHECK(source.calls == 0);
}

void programs_agree_with_their_words() {
  // root = "a" ("b" | "cd")* "e": the source checks every program it is handed.
  RecordingSource source;
  const IrGrammar g = one_rule(
      {
          0, 1, 97, 97,          // 0: a
          0, 1, 98, 98,          // 1: b
          0, 1, 99, 99,          // 2: c
          0, 1, 100, 100,        // 3: d
          1, 2, 2, 3,            // 4: cd
          2, 2, 1, 4,            // 5: b | cd
          3, 5, 0, -1,           // 6: (b | cd)*
          0, 1, 101, 101,        // 7: e
          1, 3, 0, 6, 7,         // 8: a (b | cd)* e
      },
      8);
  const auto lowered = tokensieve::lower_grammar(g, source, limits());
  CHECK(source.calls >= 1);
  CHECK(lowered.terminals.size() == 1);
}

// Thue-Morse: 512 one-byte items spelling the word, or its complement, hash alike for any odd
// base (see tests/differential/test_native_lowering.py); the lowering must build both.
void programs_of_equal_hash_stay_apart() {
  std::vector<int64_t> words;
  std::vector<int64_t> items[2];
  for (int side = 0; side < 2; ++side) {
    for (int i = 0; i < 512; ++i) {
      const int64_t c = 97 + ((__builtin_popcount(static_cast<unsigned>(i)) + side) & 1);
      items[side].push_back(static_cast<int64_t>(words.size() / 4));
      words.insert(words.end(), {0, 1, c, c});
    }
  }
  const int64_t first = static_cast<int64_t>(words.size() / 4);  // (every node so far has 4 words)
  std::vector<int32_t> nodes;
  auto add = [&](std::vector<int64_t> node) {
    nodes.push_back(static_cast<int32_t>(nodes.empty() ? first : nodes.back() + 1));
    words.insert(words.end(), node.begin(), node.end());
    return nodes.back();
  };
  std::vector<int64_t> seq0{1, 512}, seq1{1, 512};
  seq0.insert(seq0.end(), items[0].begin(), items[0].end());
  seq1.insert(seq1.end(), items[1].begin(), items[1].end());
  const int32_t word0 = add(seq0), word1 = add(seq1);
  const int32_t special = add({5, 7});
  const int32_t branch0 = add({1, 2, word0, special}), branch1 = add({1, 2, word1, special});
  const int32_t body = add({2, 2, branch0, branch1});
  RecordingSource source;
  const auto lowered = tokensieve::lower_grammar(one_rule(words, body), source, limits());
  CHECK(source.handles.size() == 2);          // the two words, each built
  CHECK(lowered.terminals.size() == 3);       // and the special token
}

}  // namespace

int main() {
  malformed_words_are_refused();
  programs_agree_with_their_words();
  programs_of_equal_hash_stay_apart();
  std::printf("lowering: %d passed, %d failed\n", check::passed, check::failed);
  return check::failed == 0 ? 0 : 1;
}
