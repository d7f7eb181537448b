// L(left) \ L(right) as an OP_AUTOMATON program fragment: the product of the two DFAs.
#include <string>
#include <unordered_map>
#include <vector>

#include "tokensieve/dfa.hpp"
#include "tokensieve/error.hpp"

namespace tokensieve {

void append_difference(const Dfa& left, const Dfa& right, int32_t max_states, std::vector<int32_t>& out) {
  if (left.start() == Dfa::kDead) {  // empty language: an alternation of nothing
    out.push_back(OP_ALT);
    out.push_back(0);
    return;
  }
  // Product states (l, r), r = kDead once `right` can no longer match; numbered breadth-first.
  auto key = [](int32_t l, int32_t r) { return (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(r); };
  std::unordered_map<uint64_t, int32_t> index;
  std::vector<std::pair<int32_t, int32_t>> states;
  auto state_of = [&](int32_t l, int32_t r) {
    auto [it, inserted] = index.try_emplace(key(l, r), static_cast<int32_t>(states.size()));
    if (inserted) {
      if (static_cast<int64_t>(states.size()) >= max_states) {
        throw Error(ErrorKind::LimitExceeded,
                    "a set difference of regular languages needs more than " + std::to_string(max_states) +
                        " automaton states",
                    "max_dfa_states");
      }
      states.push_back({l, r});
    }
    return it->second;
  };
  state_of(left.start(), right.start());
  struct Edge {
    int32_t target;
    std::vector<int32_t> ranges;  // lo, hi pairs
  };
  std::vector<std::vector<Edge>> edges;
  for (size_t s = 0; s < states.size(); ++s) {
    const auto [l, r] = states[s];
    std::vector<Edge> row;
    int32_t prev_target = Dfa::kDead;
    for (int b = 0; b < 256; ++b) {
      const int32_t l2 = left.next(l, static_cast<uint8_t>(b));
      if (l2 == Dfa::kDead) {
        prev_target = Dfa::kDead;
        continue;
      }
      const int32_t r2 = r == Dfa::kDead ? Dfa::kDead : right.next(r, static_cast<uint8_t>(b));
      const int32_t t = state_of(l2, r2);
      Edge* edge = nullptr;
      for (auto& e : row) {
        if (e.target == t) edge = &e;
      }
      if (edge == nullptr) {
        row.push_back({t, {}});
        edge = &row.back();
      }
      if (prev_target == t && !edge->ranges.empty() && edge->ranges.back() == b - 1) {
        edge->ranges.back() = b;  // extend the current range
      } else {
        edge->ranges.push_back(b);
        edge->ranges.push_back(b);
      }
      prev_target = t;
    }
    edges.push_back(std::move(row));
  }
  out.push_back(OP_AUTOMATON);
  out.push_back(static_cast<int32_t>(states.size()));
  for (size_t s = 0; s < states.size(); ++s) {
    const auto [l, r] = states[s];
    const bool accept = left.accepting(l) && !(r != Dfa::kDead && right.accepting(r));
    out.push_back(accept ? 1 : 0);
    out.push_back(static_cast<int32_t>(edges[s].size()));
    for (const Edge& e : edges[s]) out.push_back(e.target);
  }
  for (const auto& row : edges) {
    for (const Edge& e : row) {
      out.push_back(OP_BYTES);
      out.push_back(static_cast<int32_t>(e.ranges.size() / 2));
      out.insert(out.end(), e.ranges.begin(), e.ranges.end());
    }
  }
}

}  // namespace tokensieve
