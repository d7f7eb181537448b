// Helpers shared by the DFA tests: running strings through a Dfa and checking its invariants.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "regex_program.hpp"
#include "tokensieve/dfa.hpp"

namespace dfa_checks {

using tokensieve::Dfa;

inline Dfa build(const regex_program::Program& p, const tokensieve::DfaLimits& limits = {}) {
  return tokensieve::build_dfa(p.data(), p.size(), limits);
}

// State after reading `s` from the start, or kDead.
inline int32_t walk(const Dfa& d, const std::string& s) {
  int32_t state = d.start();
  for (unsigned char c : s) {
    if (state == Dfa::kDead) break;
    state = d.next(state, c);
  }
  return state;
}
inline bool accepts(const Dfa& d, const std::string& s) {
  const int32_t state = walk(d, s);
  return state != Dfa::kDead && d.accepting(state);
}
inline bool viable(const Dfa& d, const std::string& s) { return walk(d, s) != Dfa::kDead; }

// Moore's partition refinement on the finished DFA (an independent check of the minimizer):
// the number of Myhill-Nerode classes among its states. Cost O(rounds * states * 256).
inline int32_t moore_classes(const Dfa& d) {
  const int32_t n = d.num_states();
  std::vector<int32_t> cls(n);
  for (int32_t s = 0; s < n; ++s) cls[s] = d.accepting(s);
  int32_t count = -1;
  while (true) {
    std::map<std::vector<int32_t>, int32_t> ids;
    std::vector<int32_t> next_cls(n);
    for (int32_t s = 0; s < n; ++s) {
      std::vector<int32_t> sig{cls[s]};
      for (int b = 0; b < 256; ++b) {
        const int32_t t = d.next(s, static_cast<uint8_t>(b));
        sig.push_back(t == Dfa::kDead ? -1 : cls[t]);
      }
      next_cls[s] = ids.emplace(sig, static_cast<int32_t>(ids.size())).first->second;
    }
    cls.swap(next_cls);
    if (static_cast<int32_t>(ids.size()) == count) return count;
    count = static_cast<int32_t>(ids.size());
  }
}

// The first broken invariant of a built DFA, or "" when all hold: start is 0 (or kDead with no
// states), every state is reachable and reaches acceptance, has_successor() is right, and, for
// DFAs small enough to check, no two states are equivalent.
inline std::string invariant_violation(const Dfa& d) {
  const int32_t n = d.num_states();
  if (d.start() == Dfa::kDead) return n == 0 ? "" : "empty language with states";
  if (d.start() != 0) return "start is not state 0";
  std::vector<std::vector<int32_t>> preds(n);
  std::vector<uint8_t> reached(n, 0);
  std::vector<int32_t> queue{0};
  reached[0] = 1;
  for (size_t q = 0; q < queue.size(); ++q) {
    const int32_t s = queue[q];
    bool successor = false;
    for (int b = 0; b < 256; ++b) {
      const int32_t t = d.next(s, static_cast<uint8_t>(b));
      if (t == Dfa::kDead) continue;
      successor = true;
      preds[t].push_back(s);
      if (!reached[t]) {
        reached[t] = 1;
        queue.push_back(t);
      }
    }
    if (successor != d.has_successor(s)) return "wrong has_successor for state " + std::to_string(s);
  }
  if (static_cast<int32_t>(queue.size()) != n) return "unreachable states";
  std::vector<uint8_t> live(n, 0);
  queue.clear();
  for (int32_t s = 0; s < n; ++s) {
    if (d.accepting(s)) {
      live[s] = 1;
      queue.push_back(s);
    }
  }
  for (size_t q = 0; q < queue.size(); ++q) {
    for (int32_t p : preds[queue[q]]) {
      if (!live[p]) {
        live[p] = 1;
        queue.push_back(p);
      }
    }
  }
  if (static_cast<int32_t>(queue.size()) != n) return "states that cannot reach acceptance";
  if (n <= 300 && moore_classes(d) != n) return "not minimal";
  return "";
}

// True when a and b have the same states, numbering and transitions (byte by byte).
inline bool identical(const Dfa& a, const Dfa& b) {
  if (a.start() != b.start() || a.num_states() != b.num_states()) return false;
  for (int32_t s = 0; s < a.num_states(); ++s) {
    if (a.accepting(s) != b.accepting(s)) return false;
    for (int c = 0; c < 256; ++c) {
      if (a.next(s, static_cast<uint8_t>(c)) != b.next(s, static_cast<uint8_t>(c))) return false;
    }
  }
  return true;
}

}  // namespace dfa_checks
