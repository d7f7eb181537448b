// Native tests of build_dfa and Dfa. Run with cpp/tests/run.sh.
#include <chrono>
#include <climits>
#include <cstdio>
#include <string>
#include <vector>

#include "check.hpp"
#include "dfa_checks.hpp"
#include "regex_program.hpp"
#include "tokensieve/dfa.hpp"
#include "tokensieve/error.hpp"

using namespace regex_program;
using dfa_checks::accepts;
using dfa_checks::build;
using dfa_checks::viable;
using tokensieve::Dfa;
using tokensieve::DfaLimits;
using tokensieve::ErrorKind;

void run_random_tests();             // test_dfa_random.cpp
void run_random_difference_tests();  // test_dfa_random.cpp
void run_random_range_and_product_tests();  // test_dfa_random.cpp
void run_random_chain_tests();  // test_dfa_random.cpp
void run_random_repeated_item_tests();  // test_dfa_random.cpp
void run_scratch_allocator_tests();  // test_scratch_allocator.cpp

namespace {

#define CHECK_INVARIANTS(dfa) CHECK(dfa_checks::invariant_violation(dfa).empty())

void test_literals() {
  const Dfa d = build(lit("hello"));
  CHECK_INVARIANTS(d);
  CHECK(accepts(d, "hello"));
  CHECK(!accepts(d, "hell") && viable(d, "hell"));
  CHECK(!viable(d, "help"));
  CHECK(!viable(d, "hello!"));
  CHECK(!d.nullable());
  CHECK(d.num_states() == 6);
  CHECK(d.has_successor(d.start()) && !d.has_successor(dfa_checks::walk(d, "hello")));
  const Dfa nul = build(seq({byte(0), byte(255), byte(0)}));  // NUL and 0xFF are ordinary bytes
  CHECK(accepts(nul, std::string("\x00\xff\x00", 3)));
  CHECK(!viable(nul, std::string("\x00\x00", 2)));
}

void test_classes() {
  const Dfa az = build(star(bytes({{'a', 'z'}})));
  CHECK(az.num_classes() == 2);
  CHECK(az.num_states() == 1);
  CHECK(accepts(az, "abcxyz") && !viable(az, "abC"));
  const Dfa overlap = build(alt({bytes({{'a', 'c'}}), bytes({{'b', 'd'}})}));
  CHECK(overlap.num_classes() == 4);  // {a}, {b,c}, {d}, the rest
  CHECK(accepts(overlap, "a") && accepts(overlap, "c") && accepts(overlap, "d") && !viable(overlap, "e"));
  const Dfa any = build(bytes({{0, 255}}));
  CHECK(any.num_classes() == 1);
  bool all = true;
  for (int b = 0; b < 256; ++b) all = all && accepts(any, std::string(1, static_cast<char>(b)));
  CHECK(all);
  // Scattered ranges in one set still give one class for the set.
  const Dfa scattered = build(rep(2, 2, bytes({{'0', '9'}, {'A', 'F'}, {'a', 'f'}})));
  CHECK(scattered.num_classes() == 2);
  CHECK(accepts(scattered, "fA") && accepts(scattered, "09") && !viable(scattered, "g"));
}

void test_alternation() {
  const Dfa d = build(alt({lit("cat"), lit("car"), lit("dog")}));
  CHECK_INVARIANTS(d);
  CHECK(accepts(d, "cat") && accepts(d, "car") && accepts(d, "dog"));
  CHECK(viable(d, "ca") && !accepts(d, "ca") && !viable(d, "cab") && !viable(d, "do g"));
  CHECK(d.num_states() == 6);  // start, c, ca, d, do, end
  CHECK(dfa_checks::identical(build(alt({lit("ab"), lit("ab")})), build(lit("ab"))));
  CHECK(dfa_checks::identical(build(alt({lit("ab")})), build(lit("ab"))));
}

void test_repeats() {
  const Dfa d = build(rep(2, 3, rep(1, 2, lit("ab"))));  // (ab){2..6}
  CHECK_INVARIANTS(d);
  for (int k = 0; k <= 7; ++k) {
    std::string s;
    for (int i = 0; i < k; ++i) s += "ab";
    CHECK(accepts(d, s) == (k >= 2 && k <= 6));
    CHECK(viable(d, s) == (k <= 6));
  }
  const Dfa bounded = build(rep(3, 5, byte('a')));
  CHECK(!accepts(bounded, "aa") && viable(bounded, "aa"));
  CHECK(accepts(bounded, "aaa") && accepts(bounded, "aaaaa") && !viable(bounded, "aaaaaa"));
  const Dfa at_least = build(rep(2, -1, byte('a')));
  CHECK(!accepts(at_least, "a") && accepts(at_least, "aa") && accepts(at_least, std::string(50, 'a')));
  CHECK(at_least.num_states() == 3);
  CHECK(dfa_checks::identical(build(rep(1, 1, lit("xy"))), build(lit("xy"))));
  CHECK(dfa_checks::identical(build(rep(0, 0, lit("xy"))), build(empty_string())));
  // {2,4} is x x (x x?)?: the minimal DFA, hence the same numbering, whichever way it is written.
  const Program x = bytes({{'a', 'b'}});
  CHECK(dfa_checks::identical(build(rep(2, 4, x)), build(seq({x, x, opt(seq({x, opt(x)}))}))));
  // Stars of nullable bodies loop on epsilon edges; the closure must still terminate.
  const Dfa nullable_loop = build(star(star(opt(byte('a')))));
  CHECK(nullable_loop.num_states() == 1 && accepts(nullable_loop, "aaaa") && nullable_loop.nullable());
  const Dfa wide = build(rep(0, 1000, bytes({{'a', 'z'}})));
  CHECK(wide.num_states() == 1001);
  CHECK(accepts(wide, std::string(1000, 'q')) && !viable(wide, std::string(1001, 'q')));
  CHECK(!wide.has_successor(dfa_checks::walk(wide, std::string(1000, 'q'))));
  // An epsilon-only body repeated (even 2^31-1 times) is the empty string, built instantly.
  const Dfa eps = build(rep(INT32_MAX, INT32_MAX, rep(0, 0, byte('a'))));
  CHECK(eps.num_states() == 1 && eps.nullable() && !eps.has_successor(0));
}

void test_empty() {
  const Dfa eps = build(empty_string());
  CHECK(eps.nullable() && eps.num_states() == 1 && !eps.has_successor(eps.start()));
  CHECK(!viable(eps, "a"));
  for (const Program& p : {empty_language(), bytes({}), seq({byte('a'), empty_language()}),
                           rep(1, 5, empty_language()), seq({star(byte('a')), bytes({})})}) {
    const Dfa none = build(p);
    CHECK(none.start() == Dfa::kDead && none.num_states() == 0 && !none.nullable());
  }
  CHECK(build(star(empty_language())).nullable());
  CHECK(build(rep(0, 3, bytes({}))).num_states() == 1);
  // A branch that cannot finish is trimmed: "b" must be dead, not a live prefix.
  const Dfa trimmed = build(alt({byte('a'), seq({byte('b'), empty_language()})}));
  CHECK_INVARIANTS(trimmed);
  CHECK(accepts(trimmed, "a") && !viable(trimmed, "b"));
}

void test_nullable() {
  CHECK(build(opt(byte('a'))).nullable());
  CHECK(build(star(lit("ab"))).nullable());
  CHECK(!build(rep(1, -1, lit("ab"))).nullable());
  CHECK(build(seq({opt(byte('a')), star(byte('b'))})).nullable());
  CHECK(!build(seq({opt(byte('a')), byte('b')})).nullable());
  CHECK(build(alt({byte('a'), empty_string()})).nullable());
}

// Strict decoder: true when s is exactly one well-formed UTF-8 encoded scalar value.
bool one_utf8_char(const std::string& s) {
  if (s.empty()) return false;
  const auto* u = reinterpret_cast<const unsigned char*>(s.data());
  size_t len = u[0] < 0x80 ? 1 : u[0] >= 0xC2 && u[0] <= 0xDF ? 2 : u[0] >= 0xE0 && u[0] <= 0xEF ? 3
                                : u[0] >= 0xF0 && u[0] <= 0xF4 ? 4 : 0;
  if (len == 0 || s.size() != len) return false;
  uint32_t cp = len == 1 ? u[0] : u[0] & (0x7F >> len);
  for (size_t i = 1; i < len; ++i) {
    if ((u[i] & 0xC0) != 0x80) return false;
    cp = (cp << 6) | (u[i] & 0x3F);
  }
  const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
  return cp >= min[len] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
}

void test_utf8() {
  const Dfa any = build(utf8_range(0, 0x10FFFF));
  CHECK_INVARIANTS(any);
  int wrong = 0;
  for (int a = 0; a < 256; ++a) {
    std::string s1(1, static_cast<char>(a));
    wrong += accepts(any, s1) != one_utf8_char(s1);
    for (int b = 0; b < 256; ++b) {
      std::string s2 = s1 + static_cast<char>(b);
      wrong += accepts(any, s2) != one_utf8_char(s2);
      if (a < 0xE0 || a > 0xF4) continue;
      for (int c = 0; c < 256; c += (a >= 0xF0 ? 5 : 1)) {
        std::string s3 = s2 + static_cast<char>(c);
        wrong += accepts(any, s3) != one_utf8_char(s3);
        if (a >= 0xF0) wrong += accepts(any, s3 + '\x80') != one_utf8_char(s3 + '\x80');
      }
    }
  }
  CHECK(wrong == 0);
  const Dfa word = build(lit("h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));  // "hé€😀"
  CHECK(accepts(word, "h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80") && viable(word, "h\xc3"));
  const Dfa greek = build(star(utf8_range(0x391, 0x3C9)));  // Α..ω
  CHECK(accepts(greek, "\xce\xb1\xce\xb2\xcf\x89") && !viable(greek, "\xce\x90") && viable(greek, "\xcf"));

  const Dfa json = build(json_string());
  CHECK_INVARIANTS(json);
  CHECK(accepts(json, "\"\"") && accepts(json, "\"h\xc3\xa9llo \\n\\\" \\u00e9\\uABcd \xf0\x9f\x98\x80\""));
  CHECK(viable(json, "\"abc\\u12") && !viable(json, "\"abc\\u12g") && !viable(json, "\"\\x"));
  CHECK(!viable(json, "\"a\x01") && !viable(json, "\"\xc0\x80") && !viable(json, "\"\xed\xa0\x80"));
  CHECK(!viable(json, "\"\xf5") && !viable(json, "\"a\"b") && viable(json, "\"\xf4\x8f\xbf"));
  std::printf("json string DFA: %d states, %d classes\n", json.num_states(), json.num_classes());
}

void test_limits() {
  const Program huge = rep(0, 100000000, bytes({{'a', 'z'}}));
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS(build(huge), ErrorKind::LimitExceeded, "max_nfa_states");
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  CHECK(ms < 50);  // sized before anything is allocated
  CHECK_THROWS(build(rep(0, INT32_MAX, rep(INT32_MAX, -1, rep(0, INT32_MAX, byte('a'))))),
               ErrorKind::LimitExceeded, "max_nfa_states");  // saturating size arithmetic
  DfaLimits tight;
  tight.max_nfa_states = 7;  // "abcdef": six byte states and the accepting state
  CHECK(build(lit("abcdef"), tight).num_states() == 7);
  tight.max_nfa_states = 6;
  CHECK_THROWS(build(lit("abcdef"), tight), ErrorKind::LimitExceeded, "max_nfa_states");
  // (a|b)*a(a|b){15} needs 2^16 DFA states.
  const Program ab = bytes({{'a', 'b'}});
  const Program blowup = seq({star(ab), byte('a'), rep(15, 15, ab)});
  DfaLimits few;
  few.max_dfa_states = 1000;
  CHECK_THROWS(build(blowup, few), ErrorKind::LimitExceeded, "max_dfa_states");
  few.max_dfa_states = 3;  // "abc" needs 4 states before minimization
  CHECK_THROWS(build(lit("abc"), few), ErrorKind::LimitExceeded, "max_dfa_states");
  few.max_dfa_states = 4;
  CHECK(build(lit("abc"), few).num_states() == 4);
}

void test_malformed() {
  const std::vector<Program> bad = {
      {},                                     // empty
      {7},                                    // unknown opcode
      {-1, 0},                                // unknown opcode
      {OP_SEQ},                               // missing count
      {OP_SEQ, 2, OP_BYTES, 1, 'a', 'a'},     // missing second child
      {OP_BYTES, 2, 'a', 'a'},                // truncated ranges
      {OP_BYTES, 1, 'b', 'a'},                // lo > hi
      {OP_BYTES, 1, 0, 256},                  // byte > 255
      {OP_BYTES, 1, -1, 5},                   // byte < 0
      {OP_BYTES, -1},                         // negative range count
      {OP_ALT, -2},                           // negative child count
      {OP_REPEAT, 3, 2, OP_SEQ, 0},           // min > max
      {OP_REPEAT, -1, 2, OP_SEQ, 0},          // negative min
      {OP_REPEAT, 0, -2, OP_SEQ, 0},          // max below -1
      {OP_REPEAT, 0, 1},                      // missing child
      {OP_SEQ, 0, OP_SEQ, 0},                 // trailing words
      {OP_SEQ, INT32_MAX, OP_SEQ, 0},         // absurd child count
      {OP_BYTES, INT32_MAX, 'a', 'a'},        // absurd range count
  };
  for (const Program& p : bad) {
    CHECK_THROWS(build(p), ErrorKind::InvalidArgument, "");
  }
  CHECK_THROWS(tokensieve::build_dfa(nullptr, 3), ErrorKind::InvalidArgument, "");
}

void test_program_node_end() {
  using tokensieve::program_node_end;
  // A difference whose operands are a JSON string and an automaton with labels: the split
  // point is where the right operand starts.
  const Program left = json_string();
  Program automaton = {tokensieve::OP_AUTOMATON, 2, 0, 1, 1, 1, 0};  // state 0 -a-> 1, accepting 1
  const Program label = byte('a');
  automaton.insert(automaton.end(), label.begin(), label.end());
  Program difference = {tokensieve::OP_DIFFERENCE};
  difference.insert(difference.end(), left.begin(), left.end());
  difference.insert(difference.end(), automaton.begin(), automaton.end());
  CHECK(program_node_end(difference.data(), difference.size(), 0) == difference.size());
  CHECK(program_node_end(difference.data(), difference.size(), 1) == 1 + left.size());
  CHECK(program_node_end(difference.data(), difference.size(), 1 + left.size()) == difference.size());
  const Program repeat = rep(2, 3, seq({byte('x'), alt({byte('y'), seq({})})}));
  CHECK(program_node_end(repeat.data(), repeat.size(), 0) == repeat.size());
  for (const Program& p : std::vector<Program>{{OP_SEQ, 2, OP_BYTES, 1, 'a', 'a'}, {OP_BYTES, 2, 'a', 'a'}, {9}}) {
    CHECK_THROWS(program_node_end(p.data(), p.size(), 0), ErrorKind::InvalidArgument, "");
  }
}

void test_deep_nesting() {
  const int depth = 5000;
  Program nested;  // SEQ 1 (SEQ 1 (... 'a'))
  for (int i = 0; i < depth; ++i) nested.insert(nested.end(), {OP_SEQ, 1});
  nested.insert(nested.end(), {OP_BYTES, 1, 'a', 'a'});
  CHECK(dfa_checks::identical(build(nested), build(byte('a'))));
  Program optionals;  // (((a)?)?...)?
  for (int i = 0; i < depth; ++i) optionals.insert(optionals.end(), {OP_REPEAT, 0, 1});
  optionals.insert(optionals.end(), {OP_BYTES, 1, 'a', 'a'});
  CHECK(dfa_checks::identical(build(optionals), build(opt(byte('a')))));
  Program alts;  // a | (b | (a | ...)) with a dead end at the bottom
  for (int i = 0; i < depth; ++i) alts.insert(alts.end(), {OP_ALT, 2, OP_BYTES, 1, 'a' + i % 2, 'a' + i % 2});
  alts.insert(alts.end(), {OP_ALT, 0});
  CHECK(dfa_checks::identical(build(alts), build(bytes({{'a', 'b'}}))));
  std::vector<Program> items(20000, bytes({{'a', 'z'}}));  // a long flat SEQ
  const Dfa long_seq = build(seq(items));
  CHECK(long_seq.num_states() == 20001 && accepts(long_seq, std::string(20000, 'k')));
}

void test_raw_constructor() {
  std::vector<uint8_t> class_of(256, 0);
  class_of['a'] = 1;
  // state 0 --a--> state 1 (accepting, no successor)
  const Dfa d(2, class_of, {Dfa::kDead, 1, Dfa::kDead, Dfa::kDead}, {0, 1}, 0);
  CHECK(d.num_states() == 2 && d.has_successor(0) && !d.has_successor(1));
  CHECK(d.next(0, 'a') == 1 && d.next(0, 'b') == Dfa::kDead && d.accepting(1) && !d.nullable());
  CHECK(d.memory_bytes() >= 256 + 4 * sizeof(int32_t));
  CHECK(build(rep(0, 1000, byte('a'))).memory_bytes() > build(rep(0, 10, byte('a'))).memory_bytes());
  const Dfa empty;
  CHECK(empty.start() == Dfa::kDead && empty.num_states() == 0);
  CHECK_THROWS(Dfa(0, class_of, {}, {}, Dfa::kDead), ErrorKind::InvalidArgument, "");
  CHECK_THROWS(Dfa(1, class_of, {}, {}, Dfa::kDead), ErrorKind::InvalidArgument, "");  // class 1 >= 1
  CHECK_THROWS(Dfa(2, std::vector<uint8_t>(10, 0), {}, {}, Dfa::kDead), ErrorKind::InvalidArgument, "");
  CHECK_THROWS(Dfa(2, class_of, {Dfa::kDead}, {0}, 0), ErrorKind::InvalidArgument, "");
  CHECK_THROWS(Dfa(2, class_of, {Dfa::kDead, 2}, {0}, 0), ErrorKind::InvalidArgument, "");
  CHECK_THROWS(Dfa(2, class_of, {Dfa::kDead, 0}, {0}, 1), ErrorKind::InvalidArgument, "");
}

}  // namespace

int main() {
  test_literals();
  test_classes();
  test_alternation();
  test_repeats();
  test_empty();
  test_nullable();
  test_utf8();
  test_limits();
  test_malformed();
  test_program_node_end();
  test_deep_nesting();
  test_raw_constructor();
  run_random_tests();
  run_random_difference_tests();
  run_random_range_and_product_tests();
  run_random_chain_tests();
  run_random_repeated_item_tests();
  run_scratch_allocator_tests();
  std::printf("%d passed, %d failed\n", check::passed, check::failed);
  return check::failed == 0 ? 0 : 1;
}
