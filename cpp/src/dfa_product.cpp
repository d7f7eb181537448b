// L(left) op L(right): the product of two DFAs, as an automaton or (a difference) an
// OP_AUTOMATON fragment; and a DFA's transitions as byte ranges.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokensieve/dfa.hpp"
#include "tokensieve/error.hpp"

namespace tokensieve {

ProductAutomaton product(const Dfa& left, const Dfa& right, ProductOp op, int32_t max_states) {
  ProductAutomaton product;
  // Joint classes: bytes that fall in one class of both DFAs have the same edges in every
  // product state, so the product steps once per joint class, not per byte ("any JSON string
  // but these keys": ~40 joint classes instead of 256 bytes).
  product.class_of.resize(256);
  std::vector<uint8_t> rep;  // one byte of each joint class
  std::vector<int32_t> id(static_cast<size_t>(left.num_classes()) * right.num_classes(), -1);
  for (int b = 0; b < 256; ++b) {
    const auto byte = static_cast<uint8_t>(b);
    int32_t& j = id[static_cast<size_t>(left.class_of(byte)) * right.num_classes() + right.class_of(byte)];
    if (j < 0) {
      j = static_cast<int32_t>(rep.size());
      rep.push_back(byte);
      product.class_ranges.emplace_back();
    }
    product.class_of[b] = static_cast<uint8_t>(j);
    std::vector<int32_t>& r = product.class_ranges[j];
    if (!r.empty() && r.back() == b - 1) {
      r.back() = b;
    } else {
      r.push_back(b);
      r.push_back(b);
    }
  }
  // A pair is worth exploring while it can still accept.
  auto explored = [op](int32_t l, int32_t r) {
    switch (op) {
      case ProductOp::And: return l != Dfa::kDead && r != Dfa::kDead;
      case ProductOp::Or: return l != Dfa::kDead || r != Dfa::kDead;
      default: return l != Dfa::kDead;
    }
  };
  auto accepts = [&](int32_t l, int32_t r) {
    const bool a = l != Dfa::kDead && left.accepting(l), b = r != Dfa::kDead && right.accepting(r);
    switch (op) {
      case ProductOp::And: return a && b;
      case ProductOp::Or: return a || b;
      default: return a && !b;
    }
  };
  if (!explored(left.start(), right.start())) return product;

  // Product states (l, r), r = kDead once `right` can no longer match; numbered breadth-first.
  // The index of a pair is a flat table when the pair space is small enough (it is for "any
  // string but these keys": a string automaton of ~15 states times the keys' automaton), and a
  // hash map otherwise; the lookup is the product's inner loop, once per (state, class).
  const int64_t pair_space = static_cast<int64_t>(left.num_states() + 1) * (right.num_states() + 1);
  constexpr int64_t kMaxDenseIndex = int64_t{1} << 22;  // 16 MiB of int32
  std::vector<int32_t> dense;
  std::unordered_map<uint64_t, int32_t> sparse;
  if (pair_space <= kMaxDenseIndex) dense.assign(static_cast<size_t>(pair_space), -1);
  std::vector<std::pair<int32_t, int32_t>> states;
  auto state_of = [&](int32_t l, int32_t r) {
    int32_t* slot;
    if (!dense.empty()) {
      slot = &dense[static_cast<size_t>(l + 1) * (right.num_states() + 1) + static_cast<size_t>(r + 1)];
    } else {
      const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(r);  // kDead too
      slot = &sparse.try_emplace(key, -1).first->second;
    }
    if (*slot < 0) {
      if (static_cast<int64_t>(states.size()) >= max_states) {
        throw Error(ErrorKind::LimitExceeded,
                    "a product of regular languages needs more than " + std::to_string(max_states) +
                        " automaton states",
                    "max_dfa_states");
      }
      *slot = static_cast<int32_t>(states.size());
      states.push_back({l, r});
    }
    return *slot;
  };
  // Most products reach about as many pairs as their sides have states together ("any key but
  // these": the names' trie, then the string automaton alone), each with an edge per class.
  const size_t expected_states = std::min<size_t>(static_cast<size_t>(left.num_states()) + right.num_states(), 4096);
  states.reserve(expected_states);
  product.accepting.reserve(expected_states);
  product.right_done.reserve(expected_states);
  product.edge_begin.reserve(expected_states + 1);
  product.edge_class.reserve(expected_states * rep.size());
  product.edge_target.reserve(expected_states * rep.size());
  state_of(left.start(), right.start());
  for (size_t s = 0; s < states.size(); ++s) {
    const auto [l, r] = states[s];
    product.accepting.push_back(accepts(l, r) ? 1 : 0);
    product.right_done.push_back(r == Dfa::kDead ? 1 : 0);
    for (size_t j = 0; j < rep.size(); ++j) {
      const int32_t l2 = l == Dfa::kDead ? Dfa::kDead : left.next(l, rep[j]);
      const int32_t r2 = r == Dfa::kDead ? Dfa::kDead : right.next(r, rep[j]);
      if (!explored(l2, r2)) continue;
      product.edge_class.push_back(static_cast<int32_t>(j));
      product.edge_target.push_back(state_of(l2, r2));
    }
    product.edge_begin.push_back(static_cast<int32_t>(product.edge_class.size()));
  }
  return product;
}

void append_difference(const Dfa& left, const Dfa& right, int32_t max_states, std::vector<int32_t>& out) {
  const ProductAutomaton product = tokensieve::product(left, right, ProductOp::Minus, max_states);
  if (product.num_states() == 0) {  // empty language: an alternation of nothing
    out.push_back(OP_ALT);
    out.push_back(0);
    return;
  }
  // One edge per (state, target); its label is the union of its joint classes' bytes.
  std::vector<std::vector<std::pair<int32_t, int32_t>>> rows(product.num_states());  // (target, class)
  for (int32_t s = 0; s < product.num_states(); ++s) {
    for (int32_t e = product.edge_begin[s]; e < product.edge_begin[s + 1]; ++e) {
      rows[s].emplace_back(product.edge_target[e], product.edge_class[e]);
    }
    std::sort(rows[s].begin(), rows[s].end());
  }
  out.push_back(OP_AUTOMATON);
  out.push_back(product.num_states());
  for (int32_t s = 0; s < product.num_states(); ++s) {
    out.push_back(product.accepting[s]);
    const size_t count_at = out.size();
    out.push_back(0);
    for (size_t i = 0; i < rows[s].size(); ++i) {
      if (i == 0 || rows[s][i].first != rows[s][i - 1].first) {
        out.push_back(rows[s][i].first);
        ++out[count_at];
      }
    }
  }
  std::vector<std::pair<int32_t, int32_t>> pairs;
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size();) {
      pairs.clear();
      size_t k = i;
      for (; k < row.size() && row[k].first == row[i].first; ++k) {
        const std::vector<int32_t>& r = product.class_ranges[row[k].second];
        for (size_t p = 0; p < r.size(); p += 2) pairs.emplace_back(r[p], r[p + 1]);
      }
      std::sort(pairs.begin(), pairs.end());
      const size_t label_at = out.size();
      out.push_back(OP_BYTES);
      out.push_back(0);
      for (const auto& [lo, hi] : pairs) {
        if (out.size() > label_at + 2 && out.back() + 1 >= lo) {
          out.back() = std::max(out.back(), hi);  // join adjacent ranges
        } else {
          out.push_back(lo);
          out.push_back(hi);
          ++out[label_at + 1];
        }
      }
      i = k;
    }
  }
}

RangeRows to_ranges(const Dfa& dfa) {
  RangeRows rows;
  if (dfa.start() == Dfa::kDead) return rows;
  for (int32_t s = 0; s < dfa.num_states(); ++s) {
    rows.accepting.push_back(dfa.accepting(s) ? 1 : 0);
    for (int b = 0; b < 256;) {
      const int32_t t = dfa.next(s, static_cast<uint8_t>(b));
      int e = b;
      while (e + 1 < 256 && dfa.next(s, static_cast<uint8_t>(e + 1)) == t) ++e;
      if (t != Dfa::kDead) {
        rows.lo.push_back(b);
        rows.hi.push_back(e);
        rows.target.push_back(t);
      }
      b = e + 1;
    }
    rows.edge_begin.push_back(static_cast<int32_t>(rows.lo.size()));
  }
  return rows;
}

}  // namespace tokensieve
