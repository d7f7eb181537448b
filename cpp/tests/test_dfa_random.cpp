// Differential test: random small regexes over the alphabet {a, b, c}; for every string of length
// <= 6 the DFA must agree with a direct set-of-positions evaluation of the regex tree, both on
// acceptance and on "is a prefix of some accepted string" (the DFA state is not dead). Random
// set differences and products are checked the same way on acceptance, and every DFA must be
// trimmed and minimal (dfa_checks::invariant_violation). The range-automaton entry points
// (determinize, dfa_from_ranges, to_ranges) must give the same DFA as the program builder.
#include <array>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "check.hpp"
#include "dfa_checks.hpp"
#include "regex_program.hpp"
#include "tokensieve/dfa.hpp"

namespace {

using regex_program::Program;

// A regex tree, kept beside its program so the oracle need not parse.
struct Node {
  int32_t op = tokensieve::OP_SEQ;
  std::vector<std::pair<int, int>> ranges;  // OP_BYTES
  int32_t min = 0, max = 0;                 // OP_REPEAT
  std::vector<Node> kids;
};

Program encode(const Node& n) {
  std::vector<Program> kids;
  for (const Node& k : n.kids) kids.push_back(encode(k));
  switch (n.op) {
    case tokensieve::OP_BYTES: return regex_program::bytes(n.ranges);
    case tokensieve::OP_SEQ: return regex_program::seq(kids);
    case tokensieve::OP_ALT: return regex_program::alt(kids);
    default: return regex_program::rep(n.min, n.max, kids[0]);
  }
}

std::string describe(const Node& n) {
  std::string out;
  switch (n.op) {
    case tokensieve::OP_BYTES:
      out = "[";
      for (auto [lo, hi] : n.ranges) out += std::string(1, char(lo)) + "-" + char(hi);
      return out + "]";
    case tokensieve::OP_SEQ: out = "seq("; break;
    case tokensieve::OP_ALT: out = "alt("; break;
    default: out = "rep" + std::to_string(n.min) + "," + std::to_string(n.max) + "(";
  }
  for (const Node& k : n.kids) out += describe(k) + " ";
  return out + ")";
}

Node random_node(std::mt19937& rng, int depth) {
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  Node n;
  const int kind = depth == 0 ? 0 : pick(4);
  if (kind == 0) {
    n.op = tokensieve::OP_BYTES;
    const int count = pick(8) == 0 ? 0 : 1 + pick(2);  // now and then the empty set
    for (int i = 0; i < count; ++i) {
      const int lo = 'a' + pick(3);
      n.ranges.push_back({lo, lo + pick('c' - lo + 1)});
    }
    return n;
  }
  if (kind == 3) {
    n.op = tokensieve::OP_REPEAT;
    n.min = pick(3);
    n.max = pick(3) == 0 ? -1 : n.min + pick(3);
    n.kids.push_back(random_node(rng, depth - 1));
    return n;
  }
  n.op = kind == 1 ? tokensieve::OP_SEQ : tokensieve::OP_ALT;
  for (int i = pick(4); i > 0; --i) n.kids.push_back(random_node(rng, depth - 1));
  return n;
}

bool nonempty(const Node& n) {
  switch (n.op) {
    case tokensieve::OP_BYTES: return !n.ranges.empty();
    case tokensieve::OP_SEQ:
      for (const Node& k : n.kids) {
        if (!nonempty(k)) return false;
      }
      return true;
    case tokensieve::OP_ALT:
      for (const Node& k : n.kids) {
        if (nonempty(k)) return true;
      }
      return false;
    default: return n.min == 0 || nonempty(n.kids[0]);
  }
}

// Matching `n` against w from every start position in `from` (bit p = position p):
// `ends` = positions where a match can end; `over` = from some start, the rest of w is a proper
// prefix of a string in L(n) (the match would run past the end of w).
struct Eval {
  uint32_t ends = 0;
  bool over = false;
};

Eval eval(const Node& n, const std::string& w, uint32_t from) {
  const uint32_t len = static_cast<uint32_t>(w.size());
  const bool at_end = (from >> len) & 1;
  Eval r;
  switch (n.op) {
    case tokensieve::OP_BYTES:
      for (uint32_t p = 0; p < len; ++p) {
        if (!((from >> p) & 1)) continue;
        for (auto [lo, hi] : n.ranges) {
          if (w[p] >= lo && w[p] <= hi) r.ends |= 1u << (p + 1);
        }
      }
      r.over = at_end && !n.ranges.empty();
      return r;
    case tokensieve::OP_SEQ: {
      uint32_t cur = from;
      for (size_t i = 0; i < n.kids.size(); ++i) {
        const Eval k = eval(n.kids[i], w, cur);
        bool rest_nonempty = true;
        for (size_t j = i + 1; j < n.kids.size(); ++j) rest_nonempty = rest_nonempty && nonempty(n.kids[j]);
        r.over = r.over || (k.over && rest_nonempty);
        cur = k.ends;
      }
      r.ends = cur;
      return r;
    }
    case tokensieve::OP_ALT:
      for (const Node& kid : n.kids) {
        const Eval k = eval(kid, w, from);
        r.ends |= k.ends;
        r.over = r.over || k.over;
      }
      return r;
    default: {
      const Node& kid = n.kids[0];
      uint32_t cur = from;
      for (int32_t i = 0; i < n.min; ++i) {  // required copies: later ones must be matchable
        const Eval k = eval(kid, w, cur);
        r.over = r.over || (k.over && (i + 1 == n.min || nonempty(kid)));
        cur = k.ends;
      }
      uint32_t all = cur, frontier = cur;
      for (int32_t i = n.min; n.max < 0 || i < n.max; ++i) {  // optional copies
        const Eval k = eval(kid, w, frontier);
        r.over = r.over || k.over;
        frontier = k.ends & ~all;  // only new positions can lead anywhere new
        if (frontier == 0) break;
        all |= frontier;
      }
      r.ends = all;
      return r;
    }
  }
}

// All strings over {a, b, c} of length <= max_len.
std::vector<std::string> all_strings(size_t max_len) {
  std::vector<std::string> out{""};
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].size() == max_len) continue;
    for (char c : {'a', 'b', 'c'}) out.push_back(out[i] + c);
  }
  return out;
}

}  // namespace

void run_random_tests() {
  std::mt19937 rng(12345);
  const std::vector<std::string> strings = all_strings(6);
  const int programs = 1500;
  int mismatched = 0, broken = 0, nonempty_languages = 0;
  for (int t = 0; t < programs; ++t) {
    const Node tree = random_node(rng, 1 + static_cast<int>(rng() % 4));
    const tokensieve::Dfa d = dfa_checks::build(encode(tree));
    const std::string violation = dfa_checks::invariant_violation(d);
    if (!violation.empty()) {
      if (++broken <= 5) std::fprintf(stderr, "%s: %s\n", violation.c_str(), describe(tree).c_str());
    }
    nonempty_languages += d.start() != tokensieve::Dfa::kDead;
    for (const std::string& w : strings) {
      const Eval e = eval(tree, w, 1u);
      const bool accepted = (e.ends >> w.size()) & 1;
      const bool prefix = accepted || e.over;
      if (dfa_checks::accepts(d, w) != accepted || dfa_checks::viable(d, w) != prefix) {
        if (++mismatched <= 5) {
          std::fprintf(stderr, "mismatch on \"%s\" (oracle accept=%d prefix=%d): %s\n", w.c_str(),
                       accepted, prefix, describe(tree).c_str());
        }
        break;
      }
    }
    // Bytes outside the alphabet lead nowhere.
    if (d.start() != tokensieve::Dfa::kDead && dfa_checks::viable(d, "d")) ++mismatched;
  }
  CHECK(mismatched == 0);
  CHECK(broken == 0);
  CHECK(nonempty_languages > programs / 2);  // the generator exercises real languages
  std::printf("random: %d programs, %d non-empty languages\n", programs, nonempty_languages);
}

namespace {

// `n` with every unbounded repetition bounded: a finite language (an acyclic DFA).
Node bounded(Node n) {
  if (n.op == tokensieve::OP_REPEAT && n.max < 0) n.max = n.min + 2;
  for (Node& k : n.kids) k = bounded(std::move(k));
  return n;
}

bool matches(const Node& n, const std::string& w) { return (eval(n, w, 1u).ends >> w.size()) & 1; }

}  // namespace

void run_random_difference_tests() {
  std::mt19937 rng(4242);
  const std::vector<std::string> strings = all_strings(6);
  const int programs = 1500;
  int mismatched = 0, broken = 0, nonempty_languages = 0, direct_built = 0, differs = 0;
  for (int t = 0; t < programs; ++t) {
    const Node left = random_node(rng, 1 + static_cast<int>(rng() % 4));
    Node right = random_node(rng, 1 + static_cast<int>(rng() % 4));
    if (t % 2 == 0) right = bounded(std::move(right));  // "any string but these names"
    const bool nested = t % 3 == 0;  // "a" then the difference: built through an OP_AUTOMATON
    Program program = nested ? Program{tokensieve::OP_SEQ, 2} : Program{};
    if (nested) {
      const Program a = regex_program::lit("a");
      program.insert(program.end(), a.begin(), a.end());
    }
    program.push_back(tokensieve::OP_DIFFERENCE);
    for (const Node* operand : {&left, static_cast<const Node*>(&right)}) {
      const Program p = encode(*operand);
      program.insert(program.end(), p.begin(), p.end());
    }
    const tokensieve::Dfa d = dfa_checks::build(program);
    const std::string violation = dfa_checks::invariant_violation(d);
    if (!violation.empty()) {
      if (++broken <= 5) {
        std::fprintf(stderr, "%s: %s minus %s\n", violation.c_str(), describe(left).c_str(),
                     describe(right).c_str());
      }
    }
    nonempty_languages += d.start() != tokensieve::Dfa::kDead;
    if (!nested) {
      // A finite right side takes the direct construction; it must give the automaton that
      // the general product, determinized and minimized again, gives.
      const tokensieve::Dfa l = dfa_checks::build(encode(left)), r = dfa_checks::build(encode(right));
      tokensieve::Dfa direct;
      if (tokensieve::difference_of_finite(l, r, 1 << 20, direct)) {
        ++direct_built;
        Program general;
        tokensieve::append_difference(l, r, 1 << 20, general);
        const tokensieve::Dfa g = dfa_checks::build(general);
        if (!dfa_checks::identical(direct, g) || !dfa_checks::identical(d, g)) {
          if (++differs <= 5) {
            std::fprintf(stderr, "direct difference differs: %s minus %s\n", describe(left).c_str(),
                         describe(right).c_str());
          }
        }
      }
    }
    for (const std::string& w : strings) {
      std::string rest = w;
      if (nested) {
        if (w.empty() || w[0] != 'a') {
          if (dfa_checks::accepts(d, w)) ++mismatched;
          continue;
        }
        rest = w.substr(1);
      }
      const bool accepted = matches(left, rest) && !matches(right, rest);
      if (dfa_checks::accepts(d, w) != accepted) {
        if (++mismatched <= 5) {
          std::fprintf(stderr, "difference mismatch on \"%s\" (oracle %d): %s minus %s\n", w.c_str(), accepted,
                       describe(left).c_str(), describe(right).c_str());
        }
        break;
      }
    }
  }
  CHECK(mismatched == 0);
  CHECK(broken == 0);
  CHECK(nonempty_languages > programs / 3);
  CHECK(differs == 0);
  CHECK(direct_built > programs / 4);  // finite right sides: the bounded half, and some others
  std::printf("random differences: %d programs, %d non-empty languages, %d built directly\n", programs,
              nonempty_languages, direct_built);
}

namespace {

// A Thompson NFA of `n` between states `from` and `to` of `nfa`.
void thompson(const Node& n, int32_t from, int32_t to, std::vector<std::vector<std::array<int32_t, 3>>>& edges,
              std::vector<std::vector<int32_t>>& eps) {
  auto fresh = [&] {
    edges.emplace_back();
    eps.emplace_back();
    return static_cast<int32_t>(edges.size()) - 1;
  };
  switch (n.op) {
    case tokensieve::OP_BYTES:
      for (auto [lo, hi] : n.ranges) edges[from].push_back({lo, hi, to});
      return;
    case tokensieve::OP_SEQ: {
      int32_t cur = from;
      for (const Node& k : n.kids) {
        const int32_t next = fresh();
        thompson(k, cur, next, edges, eps);
        cur = next;
      }
      eps[cur].push_back(to);
      return;
    }
    case tokensieve::OP_ALT:
      for (const Node& k : n.kids) thompson(k, from, to, edges, eps);
      return;
    default: {
      int32_t cur = from;
      for (int32_t i = 0; i < n.min; ++i) {
        const int32_t next = fresh();
        thompson(n.kids[0], cur, next, edges, eps);
        cur = next;
      }
      if (n.max < 0) {
        const int32_t loop = fresh();
        eps[cur].push_back(loop);
        thompson(n.kids[0], loop, loop, edges, eps);
        eps[loop].push_back(to);
        return;
      }
      for (int32_t i = n.min; i < n.max; ++i) {
        const int32_t next = fresh();
        eps[cur].push_back(to);
        thompson(n.kids[0], cur, next, edges, eps);
        cur = next;
      }
      eps[cur].push_back(to);
    }
  }
}

tokensieve::RangeNfa range_nfa(const Node& n) {
  std::vector<std::vector<std::array<int32_t, 3>>> edges(2);
  std::vector<std::vector<int32_t>> eps(2);
  thompson(n, 0, 1, edges, eps);
  tokensieve::RangeNfa nfa;
  nfa.start = 0;
  nfa.final = 1;
  for (size_t s = 0; s < edges.size(); ++s) {
    for (const auto& [lo, hi, t] : edges[s]) {
      nfa.lo.push_back(lo);
      nfa.hi.push_back(hi);
      nfa.target.push_back(t);
    }
    nfa.edge_begin.push_back(static_cast<int32_t>(nfa.lo.size()));
    nfa.eps.insert(nfa.eps.end(), eps[s].begin(), eps[s].end());
    nfa.eps_begin.push_back(static_cast<int32_t>(nfa.eps.size()));
  }
  return nfa;
}

bool same_rows(const tokensieve::RangeRows& a, const tokensieve::RangeRows& b) {
  return a.edge_begin == b.edge_begin && a.lo == b.lo && a.hi == b.hi && a.target == b.target &&
         a.accepting == b.accepting;
}

}  // namespace

void run_random_range_and_product_tests() {
  std::mt19937 rng(777);
  const std::vector<std::string> strings = all_strings(5);
  const int programs = 1000;
  int mismatched = 0, broken = 0, different = 0;
  for (int t = 0; t < programs; ++t) {
    const Node a = random_node(rng, 1 + static_cast<int>(rng() % 4));
    Node b = random_node(rng, 1 + static_cast<int>(rng() % 4));
    if (t % 2 == 0) b = bounded(std::move(b));
    const tokensieve::Dfa da = dfa_checks::build(encode(a)), db = dfa_checks::build(encode(b));
    // The range entry points agree with the program builder, row for row.
    const tokensieve::RangeRows rows_a = tokensieve::to_ranges(da);
    if (!same_rows(tokensieve::to_ranges(tokensieve::determinize(range_nfa(a), 100000)), rows_a)) ++different;
    if (!same_rows(tokensieve::to_ranges(tokensieve::dfa_from_ranges(rows_a)), rows_a)) ++different;
    for (const auto op : {tokensieve::ProductOp::And, tokensieve::ProductOp::Or, tokensieve::ProductOp::Minus}) {
      const tokensieve::Dfa d = tokensieve::product_dfa(da, db, op, 100000);
      const std::string violation = dfa_checks::invariant_violation(d);
      if (!violation.empty() && ++broken <= 5) {
        std::fprintf(stderr, "product %d: %s: %s, %s\n", static_cast<int>(op), violation.c_str(),
                     describe(a).c_str(), describe(b).c_str());
      }
      for (const std::string& w : strings) {
        const bool in_a = matches(a, w), in_b = matches(b, w);
        const bool expected = op == tokensieve::ProductOp::And  ? in_a && in_b
                              : op == tokensieve::ProductOp::Or ? in_a || in_b
                                                                : in_a && !in_b;
        if (dfa_checks::accepts(d, w) != expected) {
          if (++mismatched <= 5) {
            std::fprintf(stderr, "product %d mismatch on \"%s\": %s, %s\n", static_cast<int>(op), w.c_str(),
                         describe(a).c_str(), describe(b).c_str());
          }
          break;
        }
      }
    }
  }
  CHECK(mismatched == 0);
  CHECK(broken == 0);
  CHECK(different == 0);
  std::printf("random products and range automata: %d pairs\n", programs);
}

namespace {

// A random chain of choices or alternation of chains (see build_choice_trie in dfa.cpp): a
// chain is a sequence of items, each one string of byte sets or an alternation of such
// strings. Items come from a small pool, so that chains share items and prefixes. Now and then
// an item has overlapping or prefix-related choices, or an empty set, or two items overlap,
// which the direct construction leaves to the general pipeline.
Node random_chain(std::mt19937& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  auto string_node = [&]() {
    Node s;
    s.op = tokensieve::OP_SEQ;
    for (int i = 1 + pick(3); i > 0; --i) {
      Node b;
      b.op = tokensieve::OP_BYTES;
      const int lo = 'a' + pick(3);
      if (pick(12) != 0) b.ranges.push_back({lo, pick(4) == 0 ? lo + pick('c' - lo + 1) : lo});
      s.kids.push_back(b);
    }
    return s;
  };
  std::vector<Node> pool;
  for (int i = 0; i < 4; ++i) {
    if (pick(3) == 0) {
      pool.push_back(string_node());
      continue;
    }
    Node item;
    item.op = tokensieve::OP_ALT;
    for (int k = 1 + pick(3); k > 0; --k) item.kids.push_back(string_node());
    pool.push_back(item);
  }
  auto chain = [&]() {
    Node c;
    c.op = tokensieve::OP_SEQ;
    for (int i = pick(5); i > 0; --i) c.kids.push_back(pool[pick(static_cast<int>(pool.size()))]);
    return c;
  };
  if (pick(2) == 0) return chain();
  Node any;
  any.op = tokensieve::OP_ALT;
  for (int i = 1 + pick(4); i > 0; --i) any.kids.push_back(chain());
  return any;
}

}  // namespace

void run_random_chain_tests() {
  std::mt19937 rng(777);
  const std::vector<std::string> strings = all_strings(6);
  const int programs = 3000;
  int mismatched = 0, broken = 0, differs = 0;
  for (int t = 0; t < programs; ++t) {
    const Node chain = random_chain(rng);
    const Program program = encode(chain);
    // The same language through the general pipeline: a repetition is never a chain.
    const Program general = regex_program::rep(1, 1, program);
    const tokensieve::Dfa d = dfa_checks::build(program);
    if (!dfa_checks::identical(d, dfa_checks::build(general))) {
      if (++differs <= 5) std::fprintf(stderr, "chain and general DFAs differ: %s\n", describe(chain).c_str());
    }
    const std::string violation = dfa_checks::invariant_violation(d);
    if (!violation.empty() && ++broken <= 5) std::fprintf(stderr, "%s: %s\n", violation.c_str(), describe(chain).c_str());
    for (const std::string& w : strings) {
      if (dfa_checks::accepts(d, w) != matches(chain, w)) {
        if (++mismatched <= 5) std::fprintf(stderr, "chain mismatch on \"%s\": %s\n", w.c_str(), describe(chain).c_str());
        break;
      }
    }
  }
  CHECK(mismatched == 0);
  CHECK(broken == 0);
  CHECK(differs == 0);

  // A JSON-quoted name's shape: quote, per character its raw byte or a \u escape with hex
  // letters in either case, quote.
  std::vector<Program> items{regex_program::byte('"')};
  for (char c : std::string("name_of_the_thing")) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "%04x", static_cast<unsigned char>(c));
    std::vector<Program> escape{regex_program::byte('\\'), regex_program::byte('u')};
    for (const char* h = hex; *h != 0; ++h) {
      escape.push_back(*h >= 'a' ? regex_program::bytes({{*h - 32, *h - 32}, {*h, *h}}) : regex_program::byte(*h));
    }
    items.push_back(regex_program::alt({regex_program::byte(c), regex_program::seq(escape)}));
  }
  items.push_back(regex_program::byte('"'));
  const Program name = regex_program::seq(items);
  const tokensieve::Dfa direct = dfa_checks::build(name);
  CHECK(dfa_checks::accepts(direct, "\"name_of_the_thing\""));
  CHECK(dfa_checks::accepts(direct, "\"n\\u0061me_of_the_thing\""));
  CHECK(dfa_checks::accepts(direct, "\"name\\u005Fof_the\\u005fthing\""));
  CHECK(!dfa_checks::accepts(direct, "\"name_of_the_thin\""));
  CHECK(!dfa_checks::accepts(direct, "\"name\\u005gof_the_thing\""));
  CHECK(dfa_checks::invariant_violation(direct).empty());
  CHECK(dfa_checks::identical(direct, dfa_checks::build(regex_program::rep(1, 1, name))));
  std::printf("random chains of choices: %d programs\n", programs);
}

namespace {

// `item` repeated min..max times (max -1: unbounded) without a repetition of four copies or
// more: min copies, then nested optional copies item(item(item)?)?, or a loop. The builder
// determinizes nothing in a program without such a repetition.
Program unrolled(int min, int max, const Program& item) {
  std::vector<Program> parts(static_cast<size_t>(min), item);
  if (max < 0) {
    parts.push_back(regex_program::star(item));
  } else {
    Program tail = regex_program::empty_string();
    for (int i = max - min; i > 0; --i) {
      tail = regex_program::alt({regex_program::seq({item, tail}), regex_program::empty_string()});
    }
    parts.push_back(tail);
  }
  return regex_program::seq(parts);
}

// A random item large enough to be determinized before it is repeated: an alternation of
// random sequences and repetitions, its NFA 16 states or more.
Node random_item(std::mt19937& rng) {
  Node item;
  item.op = tokensieve::OP_ALT;
  for (int i = 3 + static_cast<int>(rng() % 3); i > 0; --i) item.kids.push_back(random_node(rng, 2));
  return item;
}

// A random alternation of short strings of byte sets, without repetition (as a character
// class is, spelled in UTF-8), its NFA 16 states or more.
Node random_class(std::mt19937& rng) {
  Node alternation;
  alternation.op = tokensieve::OP_ALT;
  for (int i = 5 + static_cast<int>(rng() % 3); i > 0; --i) {
    Node chain;
    for (int j = 1 + static_cast<int>(rng() % 3); j > 0; --j) chain.kids.push_back(random_node(rng, 0));
    alternation.kids.push_back(chain);
  }
  return alternation;
}

}  // namespace

void run_random_repeated_item_tests() {
  std::mt19937 rng(4242);
  const std::vector<std::string> strings = all_strings(6);
  const int programs = 800;
  int mismatched = 0, broken = 0, differs = 0;
  for (int t = 0; t < programs; ++t) {
    Node repeat;
    repeat.op = tokensieve::OP_REPEAT;
    repeat.min = static_cast<int>(rng() % 5);
    repeat.max = rng() % 4 == 0 ? -1 : std::max(repeat.min, 4) + static_cast<int>(rng() % 4);
    if (repeat.max < 0) repeat.min = std::max(repeat.min, 3);
    repeat.kids.push_back(random_item(rng));
    // Sometimes between neighbours, as a pattern's words are: small ones, or large ones that
    // the builder determinizes too (an alternation, or a loop of one, as `\S+` after the
    // words of `(\S+\s+){0,49}\S+`).
    Node tree = repeat;
    if (rng() % 2 == 0) {
      auto neighbour = [&rng]() {
        const unsigned kind = rng() % 4;
        if (kind == 0) return random_node(rng, 1);
        if (kind == 1) return random_class(rng);
        Node loop;
        loop.op = tokensieve::OP_REPEAT;
        loop.min = 1;
        loop.max = -1;
        loop.kids.push_back(kind == 2 ? random_class(rng) : random_item(rng));
        return loop;
      };
      tree.op = tokensieve::OP_SEQ;
      tree.kids = {neighbour(), repeat, neighbour()};
    }
    const tokensieve::Dfa d = dfa_checks::build(encode(tree));
    Program general = unrolled(repeat.min, repeat.max, encode(repeat.kids[0]));
    if (tree.op == tokensieve::OP_SEQ) {
      general = regex_program::seq({encode(tree.kids[0]), general, encode(tree.kids[2])});
    }
    if (!dfa_checks::identical(d, dfa_checks::build(general))) {
      if (++differs <= 5) std::fprintf(stderr, "repeated item differs from its unrolling: %s\n", describe(tree).c_str());
    }
    const std::string violation = dfa_checks::invariant_violation(d);
    if (!violation.empty() && ++broken <= 5) std::fprintf(stderr, "%s: %s\n", violation.c_str(), describe(tree).c_str());
    for (const std::string& w : strings) {
      const Eval e = eval(tree, w, 1u);
      const bool accepted = (e.ends >> w.size()) & 1;
      if (dfa_checks::accepts(d, w) != accepted || dfa_checks::viable(d, w) != (accepted || e.over)) {
        if (++mismatched <= 5) std::fprintf(stderr, "repeated item mismatch on \"%s\": %s\n", w.c_str(), describe(tree).c_str());
        break;
      }
    }
  }
  CHECK(mismatched == 0);
  CHECK(broken == 0);
  CHECK(differs == 0);
  std::printf("random repeated items: %d programs\n", programs);
}
