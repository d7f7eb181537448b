// L(left) op L(right): the product of two DFAs, as an automaton or (a difference) an
// OP_AUTOMATON fragment; and a DFA's transitions as byte ranges.
#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokensieve/dfa.hpp"
#include "tokensieve/error.hpp"
#include "tokensieve/scratch_allocator.hpp"

namespace tokensieve {

ProductAutomaton product(const Dfa& left, const Dfa& right, ProductOp op, int32_t max_states) {
  ProductAutomaton product;
  // Joint classes: bytes that fall in one class of both DFAs have the same edges in every
  // product state, so the product steps once per joint class, not per byte ("any JSON string
  // but these keys": ~40 joint classes instead of 256 bytes).
  product.class_of.resize(256);
  ScratchVector<uint8_t> rep;  // one byte of each joint class
  ScratchVector<int32_t> id(static_cast<size_t>(left.num_classes()) * right.num_classes(), -1);
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
  ScratchVector<int32_t> dense;
  std::unordered_map<uint64_t, int32_t> sparse;
  if (pair_space <= kMaxDenseIndex) dense.assign(static_cast<size_t>(pair_space), -1);
  ScratchVector<std::pair<int32_t, int32_t>> states;
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

namespace {

// An automaton's edge for the OP_AUTOMATON encoding: its target and its label's byte ranges.
struct LabeledEdge {
  int32_t target;
  std::vector<std::pair<int32_t, int32_t>> ranges;  // sorted by lo; overlapping or adjacent ones are joined
};

// Appends OP_AUTOMATON for states 0..n-1 (state 0 starts): each state's accept flag and its
// edges' targets, then one OP_BYTES label per edge in the same order. Returns the edge count.
int64_t write_automaton(const ScratchVector<uint8_t>& accepting, const std::vector<std::vector<LabeledEdge>>& edges,
                        std::vector<int32_t>& out) {
  int64_t count = 0;
  out.push_back(OP_AUTOMATON);
  out.push_back(static_cast<int32_t>(accepting.size()));
  for (size_t s = 0; s < accepting.size(); ++s) {
    out.push_back(accepting[s] ? 1 : 0);
    out.push_back(static_cast<int32_t>(edges[s].size()));
    for (const LabeledEdge& e : edges[s]) out.push_back(e.target);
    count += static_cast<int64_t>(edges[s].size());
  }
  for (const std::vector<LabeledEdge>& row : edges) {
    for (const LabeledEdge& e : row) {
      const size_t label_at = out.size();
      out.push_back(OP_BYTES);
      out.push_back(0);
      for (const auto& [lo, hi] : e.ranges) {
        if (out.size() > label_at + 2 && out.back() + 1 >= lo) {
          out.back() = std::max(out.back(), hi);  // join adjacent ranges
        } else {
          out.push_back(lo);
          out.push_back(hi);
          ++out[label_at + 1];
        }
      }
    }
  }
  return count;
}

}  // namespace

void append_difference(const Dfa& left, const Dfa& right, int32_t max_states, std::vector<int32_t>& out) {
  const ProductAutomaton product = tokensieve::product(left, right, ProductOp::Minus, max_states);
  if (product.num_states() == 0) {  // empty language: an alternation of nothing
    out.push_back(OP_ALT);
    out.push_back(0);
    return;
  }
  // One edge per (state, target); its label is the union of its joint classes' bytes.
  std::vector<std::vector<LabeledEdge>> edges(product.num_states());
  std::vector<std::pair<int32_t, int32_t>> row;  // (target, class)
  for (int32_t s = 0; s < product.num_states(); ++s) {
    row.clear();
    for (int32_t e = product.edge_begin[s]; e < product.edge_begin[s + 1]; ++e) {
      row.emplace_back(product.edge_target[e], product.edge_class[e]);
    }
    std::sort(row.begin(), row.end());
    for (size_t i = 0; i < row.size(); ++i) {
      if (i == 0 || row[i].first != row[i - 1].first) edges[s].push_back({row[i].first, {}});
      const std::vector<int32_t>& r = product.class_ranges[row[i].second];
      for (size_t p = 0; p < r.size(); p += 2) edges[s].back().ranges.emplace_back(r[p], r[p + 1]);
    }
    for (LabeledEdge& e : edges[s]) std::sort(e.ranges.begin(), e.ranges.end());
  }
  write_automaton(product.accepting, edges, out);
}

int64_t append_automaton(const Dfa& dfa, std::vector<int32_t>& out) {
  if (dfa.start() == Dfa::kDead) {  // empty language: an alternation of nothing
    out.push_back(OP_ALT);
    out.push_back(0);
    return 0;
  }
  // One edge per (state, target), targets ascending; its label is the bytes that lead there,
  // read off the runs of consecutive bytes of one class (a few dozen), not byte by byte.
  struct Run {
    int32_t lo, hi, cls;
  };
  std::vector<Run> runs;
  for (int b = 0; b < 256; ++b) {
    const int32_t c = dfa.class_of(static_cast<uint8_t>(b));
    if (!runs.empty() && runs.back().cls == c) {
      runs.back().hi = b;
    } else {
      runs.push_back({b, b, c});
    }
  }
  std::vector<std::vector<LabeledEdge>> edges(dfa.num_states());
  ScratchVector<uint8_t> accepting(dfa.num_states());
  std::vector<int32_t> edge_of(dfa.num_states(), -1);  // per target: its edge in this state's row
  for (int32_t s = 0; s < dfa.num_states(); ++s) {
    accepting[s] = dfa.accepting(s) ? 1 : 0;
    std::vector<LabeledEdge>& row = edges[s];
    for (const Run& run : runs) {
      const int32_t t = dfa.next(s, static_cast<uint8_t>(run.lo));
      if (t == Dfa::kDead) continue;
      if (edge_of[t] < 0) {
        edge_of[t] = static_cast<int32_t>(row.size());
        row.push_back({t, {}});
      }
      auto& ranges = row[edge_of[t]].ranges;
      if (!ranges.empty() && ranges.back().second == run.lo - 1) {
        ranges.back().second = run.hi;  // (runs ascend: a range grows while its target stays)
      } else {
        ranges.emplace_back(run.lo, run.hi);
      }
    }
    for (const LabeledEdge& e : row) edge_of[e.target] = -1;
    std::sort(row.begin(), row.end(), [](const LabeledEdge& a, const LabeledEdge& b) { return a.target < b.target; });
  }
  return write_automaton(accepting, edges, out);
}

bool difference_of_finite(const Dfa& left, const Dfa& right, int32_t max_states, Dfa& out) {
  // Joint classes, as in product(); and for each class of `right`, the joint classes in it.
  std::vector<uint8_t> class_of(256), rep;
  ScratchVector<int32_t> id(static_cast<size_t>(left.num_classes()) * right.num_classes(), -1);
  ScratchVector<ScratchVector<int32_t>> joint_of_right(right.num_classes());
  ScratchVector<uint8_t> right_rep(right.num_classes());
  for (int b = 0; b < 256; ++b) {
    const auto byte = static_cast<uint8_t>(b);
    const uint8_t rc = right.class_of(byte);
    int32_t& j = id[static_cast<size_t>(left.class_of(byte)) * right.num_classes() + rc];
    if (j < 0) {
      j = static_cast<int32_t>(rep.size());
      rep.push_back(byte);
      if (joint_of_right[rc].empty()) right_rep[rc] = byte;
      joint_of_right[rc].push_back(j);
    }
    class_of[b] = static_cast<uint8_t>(j);
  }
  const auto num_classes = static_cast<int32_t>(rep.size());
  const size_t width = rep.size();
  auto empty_language = [&] {
    out = Dfa(Dfa::Unchecked{}, num_classes, std::move(class_of), {}, {}, Dfa::kDead);
    return true;
  };
  if (left.start() == Dfa::kDead) return empty_language();

  // A row's hash is a sum over its cells, so a pair's row, which is its left state's row with
  // a few cells changed, is hashed from that row's hash in as many steps as cells changed.
  auto cell = [](size_t j, int32_t target) {
    uint64_t h = (static_cast<uint64_t>(j) << 32 | static_cast<uint32_t>(target)) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    return h * 0xBF58476D1CE4E5B9ull;
  };
  auto accept_term = [](uint8_t accepting) { return accepting ? 0x94D049BB133111EBull : 0x2545F4914F6CDD1Dull; };

  // Blocks (equivalence classes of states): left state l, which is the pair (l, dead), is
  // block l (`left` is minimal, so these are pairwise inequivalent); blocks of pairs follow.
  const int32_t num_left = left.num_states();
  ScratchVector<int32_t> block_rows(static_cast<size_t>(num_left) * width);
  ScratchVector<uint8_t> block_accepting(num_left);
  ScratchVector<uint64_t> block_hash(num_left);
  ScratchVector<int32_t> core_live_cells(num_left, 0);
  // Per left state, the distinct left states its row leads to, with how many cells lead to
  // each (core_targets[core_target_begin[l] ..]): a pair's row reaches those its patches
  // leave in place, found without scanning the row.
  ScratchVector<int32_t> core_target_begin{0};
  ScratchVector<std::pair<int32_t, int32_t>> core_targets;
  ScratchVector<int32_t> cells_to(num_left, 0);
  for (int32_t l = 0; l < num_left; ++l) {
    block_accepting[l] = left.accepting(l) ? 1 : 0;
    uint64_t h = accept_term(block_accepting[l]);
    for (size_t j = 0; j < width; ++j) {
      const int32_t t = left.next(l, rep[j]);
      block_rows[l * width + j] = t;
      h += cell(j, t);
      if (t != Dfa::kDead && cells_to[t]++ == 0) core_targets.emplace_back(t, 0);
    }
    for (size_t i = static_cast<size_t>(core_target_begin.back()); i < core_targets.size(); ++i) {
      auto& [t, n] = core_targets[i];
      n = cells_to[t];
      core_live_cells[l] += n;
      cells_to[t] = 0;
    }
    core_target_begin.push_back(static_cast<int32_t>(core_targets.size()));
    block_hash[l] = h;
  }
  ScratchVector<int32_t> table;  // open addressing over block ids, -1 free
  auto slot_of = [&](uint64_t h, uint8_t accepting, const int32_t* row) {
    const size_t mask = table.size() - 1;
    size_t slot = h & mask;
    while (table[slot] >= 0) {
      const int32_t b = table[slot];
      if (block_hash[b] == h && block_accepting[b] == accepting &&
          std::equal(row, row + width, block_rows.begin() + static_cast<std::ptrdiff_t>(b * width))) {
        break;
      }
      slot = (slot + 1) & mask;
    }
    return slot;
  };
  auto rehash = [&](size_t capacity) {
    table.assign(capacity, -1);
    for (size_t b = 0; b < block_hash.size(); ++b) {
      table[slot_of(block_hash[b], block_accepting[b], &block_rows[b * width])] = static_cast<int32_t>(b);
    }
  };
  size_t capacity = 64;
  while (capacity < 2 * block_hash.size() + 2) capacity *= 2;
  rehash(capacity);

  // Pairs (l, r) with `right` live, found depth first. A pair's row is left state l's row
  // except in the joint classes where `right` goes on from r (the "patches", few: a name's
  // next characters), which lead to pairs. When the pairs form no cycle (always when `right`
  // has none; a pair met again while it is open on the stack is a cycle, and then this
  // construction gives up), a pair's patches are finished before it, and it joins a block
  // as it finishes: the block of an earlier state with the same acceptance and row (a left
  // state's included), or a new one; a pair that accepts nothing is dead.
  const int32_t num_right = right.num_states();
  const int64_t pair_space = static_cast<int64_t>(num_left) * num_right;
  constexpr int64_t kMaxDenseIndex = int64_t{1} << 22;
  ScratchVector<int32_t> dense;
  std::unordered_map<uint64_t, int32_t> sparse;
  if (pair_space <= kMaxDenseIndex) dense.assign(static_cast<size_t>(pair_space), -1);
  struct Pair {
    int32_t l, r;
    int32_t patch_begin, patch_end;  // its patches in `patches`: (joint class, pair or kDead)
    int32_t block = Dfa::kDead;
    bool open = true;  // on the stack: its patches are not all finished
  };
  ScratchVector<Pair> pairs;
  ScratchVector<std::pair<int32_t, int32_t>> patches;
  ScratchVector<uint8_t> core_reached(num_left, 0);
  int64_t reached = 0;
  auto count = [&] {
    if (++reached > max_states) {
      throw Error(ErrorKind::LimitExceeded,
                  "a product of regular languages needs more than " + std::to_string(max_states) +
                      " automaton states",
                  "max_dfa_states");
    }
  };
  auto reach_core = [&](int32_t l) {
    if (!core_reached[l]) {
      core_reached[l] = 1;
      count();
    }
  };
  ScratchVector<std::pair<int32_t, int32_t>> stack;  // (pair, next patch)
  bool cyclic = false;
  // The pair (l, r), r live, created (with its patches, and pushed) on first sight.
  auto pair_of = [&](int32_t l, int32_t r) {
    int32_t* slot;
    if (!dense.empty()) {
      slot = &dense[static_cast<size_t>(l) * num_right + static_cast<size_t>(r)];
    } else {
      slot = &sparse.try_emplace((static_cast<uint64_t>(l) << 32) | static_cast<uint32_t>(r), -1).first->second;
    }
    if (*slot >= 0) {
      cyclic = cyclic || pairs[*slot].open;
      return *slot;
    }
    count();
    *slot = static_cast<int32_t>(pairs.size());
    const auto begin = static_cast<int32_t>(patches.size());
    for (size_t rc = 0; rc < joint_of_right.size(); ++rc) {
      if (joint_of_right[rc].empty() || right.next(r, right_rep[rc]) == Dfa::kDead) continue;
      for (const int32_t j : joint_of_right[rc]) patches.emplace_back(j, Dfa::kDead);
    }
    pairs.push_back({l, r, begin, static_cast<int32_t>(patches.size())});
    stack.emplace_back(*slot, begin);
    return *slot;
  };
  const bool right_live = right.start() != Dfa::kDead;
  const int32_t start_pair = right_live ? pair_of(left.start(), right.start()) : Dfa::kDead;
  if (!right_live) reach_core(left.start());
  while (!stack.empty()) {
    const auto [p, k] = stack.back();
    if (k < pairs[p].patch_end) {
      ++stack.back().second;
      const int32_t j = patches[k].first;
      const int32_t l2 = left.next(pairs[p].l, rep[j]);
      if (l2 != Dfa::kDead) {
        const int32_t q = pair_of(l2, right.next(pairs[p].r, rep[j]));  // may push
        if (cyclic) return false;
        patches[k].second = q;
      }
      continue;
    }
    stack.pop_back();
    Pair& pair = pairs[p];
    pair.open = false;
    const uint8_t accepting = left.accepting(pair.l) && !right.accepting(pair.r) ? 1 : 0;
    // The row: left state l's, patched, written where a new block's row goes (and dropped
    // when an equal block exists); its hash and live cells follow the patches.
    const size_t row_at = block_rows.size();
    block_rows.resize(row_at + width);
    int32_t* row = &block_rows[row_at];
    const int32_t* core_row = &block_rows[static_cast<size_t>(pair.l) * width];
    std::copy(core_row, core_row + width, row);
    uint64_t h = block_hash[pair.l] - accept_term(block_accepting[pair.l]) + accept_term(accepting);
    int32_t live_cells = core_live_cells[pair.l];
    for (int32_t i = pair.patch_begin; i < pair.patch_end; ++i) {
      const auto [j, q] = patches[i];
      const int32_t before = row[j], after = q == Dfa::kDead ? Dfa::kDead : pairs[q].block;
      h += cell(j, after) - cell(j, before);
      live_cells += (after != Dfa::kDead) - (before != Dfa::kDead);
      if (before != Dfa::kDead) ++cells_to[before];  // a cell of the left row patched away
      row[j] = after;
    }
    const bool dead = !accepting && live_cells == 0;  // the empty language
    // The left states the unpatched cells lead to are reached (counted against the limit).
    for (int32_t i = core_target_begin[pair.l]; i < core_target_begin[pair.l + 1]; ++i) {
      const auto [t, n] = core_targets[i];
      if (!dead && cells_to[t] < n) reach_core(t);
      cells_to[t] = 0;
    }
    if (dead) {
      block_rows.resize(row_at);
      continue;
    }
    const size_t slot = slot_of(h, accepting, row);
    if (table[slot] >= 0) {
      pair.block = table[slot];
      block_rows.resize(row_at);
      continue;
    }
    pair.block = static_cast<int32_t>(block_hash.size());
    block_hash.push_back(h);
    block_accepting.push_back(accepting);
    if (2 * block_hash.size() + 2 > table.size()) {
      rehash(table.size() * 2);
    } else {
      table[slot] = pair.block;
    }
  }

  // Renumber the blocks the start reaches breadth first, classes ascending.
  const int32_t start_block = right_live ? pairs[start_pair].block : left.start();
  if (start_block == Dfa::kDead) return empty_language();
  ScratchVector<int32_t> order(block_hash.size(), Dfa::kDead), queue{start_block};
  queue.reserve(block_hash.size());
  order[start_block] = 0;
  std::vector<int32_t> trans(block_hash.size() * width);  // at most every block, cut below
  std::vector<uint8_t> accepting(block_hash.size());
  for (size_t q = 0; q < queue.size(); ++q) {
    const int32_t b = queue[q];
    accepting[q] = block_accepting[b];
    const int32_t* brow = &block_rows[static_cast<size_t>(b) * width];
    int32_t* out_row = &trans[q * width];
    for (size_t j = 0; j < width; ++j) {
      const int32_t t = brow[j];
      if (t != Dfa::kDead && order[t] == Dfa::kDead) {
        order[t] = static_cast<int32_t>(queue.size());
        queue.push_back(t);
      }
      out_row[j] = t == Dfa::kDead ? Dfa::kDead : order[t];
    }
  }
  trans.resize(queue.size() * width);
  accepting.resize(queue.size());
  out = Dfa(Dfa::Unchecked{}, num_classes, std::move(class_of), std::move(trans), std::move(accepting), 0);
  return true;
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

LabelGroups label_groups(const RangeRows& rows) {
  LabelGroups out;
  const size_t n = rows.accepting.size();
  if (n == 0) {  // the empty language
    out.accepting.push_back(0);
    out.group_begin.push_back(0);
    out.walk_numbered = true;
    return out;
  }
  out.accepting = rows.accepting;
  std::map<std::vector<int32_t>, int32_t> set_ids;  // (lo, hi, lo, hi...) -> its number
  std::vector<int32_t> targets;                     // this row's targets, as first met
  std::vector<std::vector<int32_t>> ranges;         // and their ranges
  for (size_t s = 0; s < n; ++s) {
    targets.clear();
    for (int32_t e = rows.edge_begin[s]; e < rows.edge_begin[s + 1]; ++e) {
      const auto it = std::find(targets.begin(), targets.end(), rows.target[e]);
      const size_t g = static_cast<size_t>(it - targets.begin());
      if (it == targets.end()) {
        targets.push_back(rows.target[e]);
        if (ranges.size() < targets.size()) ranges.emplace_back();
        ranges[g].clear();
      }
      ranges[g].push_back(rows.lo[e]);
      ranges[g].push_back(rows.hi[e]);
    }
    for (size_t g = 0; g < targets.size(); ++g) {
      const auto [it, fresh] = set_ids.try_emplace(ranges[g], static_cast<int32_t>(set_ids.size()));
      if (fresh) {
        for (size_t i = 0; i < ranges[g].size(); i += 2) {
          out.set_lo.push_back(ranges[g][i]);
          out.set_hi.push_back(ranges[g][i + 1]);
        }
        out.set_begin.push_back(static_cast<int32_t>(out.set_lo.size()));
      }
      out.group_target.push_back(targets[g]);
      out.group_set.push_back(it->second);
    }
    out.group_begin.push_back(static_cast<int32_t>(out.group_target.size()));
  }
  // A walk meets the states in number order exactly when each group's target is at most one
  // past the highest state met so far (and then every state is met once the walk ends).
  int32_t met = 0;  // states 0 .. met have been met
  out.walk_numbered = true;
  for (size_t s = 0; s < n && out.walk_numbered; ++s) {
    if (static_cast<int32_t>(s) > met) out.walk_numbered = false;  // nothing led here
    for (int32_t g = out.group_begin[s]; g < out.group_begin[s + 1] && out.walk_numbered; ++g) {
      const int32_t t = out.group_target[g];
      if (t == met + 1) {
        ++met;
      } else if (t > met) {
        out.walk_numbered = false;
      }
    }
  }
  return out;
}

Dfa multiples_dfa(int32_t modulus, int32_t scale, bool fraction_digits, int64_t max_nfa_states, int32_t max_states) {
  if (modulus < 1 || scale < 0) {
    throw Error(ErrorKind::InvalidArgument, "multiples_dfa: modulus must be positive, scale not negative");
  }
  const auto too_large = [] {
    return Error(ErrorKind::LimitExceeded, "the multipleOf automaton needs too many NFA states", "max_nfa_states");
  };
  if (scale >= max_nfa_states) throw too_large();  // (a fraction state per digit position)
  const int64_t p = modulus;
  // An NFA whose one final state is entered by an epsilon edge from every state where the
  // numeral may end; the determinization merges the start with the state after '-'.
  std::vector<std::vector<std::pair<int32_t, int32_t>>> edges;  // per state: (byte, target)
  std::vector<std::vector<int32_t>> eps;
  const auto state = [&]() {
    if (static_cast<int64_t>(edges.size()) >= max_nfa_states) throw too_large();
    edges.emplace_back();
    eps.emplace_back();
    return static_cast<int32_t>(edges.size() - 1);
  };
  const int32_t start = state(), final = state(), after_minus = state();
  eps[start].push_back(after_minus);
  edges[start].emplace_back('-', after_minus);
  const int32_t first_int = static_cast<int32_t>(edges.size());  // the state of residue r: first_int + r
  for (int64_t r = 0; r < p; ++r) state();
  const int32_t zero = state();  // the numeral "0"
  edges[after_minus].emplace_back('0', zero);
  for (int64_t d = 1; d < 10; ++d) edges[after_minus].emplace_back('0' + d, first_int + d % p);
  for (int64_t r = 0; r < p; ++r) {
    for (int64_t d = 0; d < 10; ++d) edges[first_int + r].emplace_back('0' + d, first_int + (r * 10 + d) % p);
  }
  // A numeral read with residue r after j fraction digits ends at a multiple when r * 10^(scale - j)
  // is one (the missing digits are zeros).
  std::vector<int64_t> pow10(static_cast<size_t>(scale) + 1, 1 % p);  // 10^k mod p
  for (size_t k = 1; k < pow10.size(); ++k) pow10[k] = pow10[k - 1] * 10 % p;
  const auto finish = [&](int32_t q, int64_t r, int32_t j) {
    if (r * pow10[scale - j] % p == 0) eps[q].push_back(final);
  };
  // Fraction states by (residue, digits read): j in 1..scale, or a loop of zeros past the last
  // significant position (keyed j = -1 for scale 0, -2 - scale otherwise, one per residue).
  std::map<std::pair<int64_t, int32_t>, int32_t> fraction;
  std::vector<std::pair<int64_t, int32_t>> todo;
  const auto fraction_state = [&](int64_t r, int32_t j) {
    const auto [it, fresh] = fraction.try_emplace({r, j}, 0);
    if (fresh) {
      it->second = state();
      if (j >= 1) todo.emplace_back(r, j);
    }
    return it->second;
  };
  // (A new state may move `edges`: each target is made before its row is looked up.)
  const auto zeros_after = [&](int32_t q, int64_t r, int32_t key, int32_t j) {
    const int32_t tail = fraction_state(r, key);
    edges[q].emplace_back('0', tail);
    edges[tail].emplace_back('0', tail);
    finish(tail, r, j);
  };
  for (int64_t i = 0; i <= p; ++i) {
    const int32_t q = i < p ? first_int + static_cast<int32_t>(i) : zero;
    const int64_t r = i < p ? i : 0;
    finish(q, r, 0);
    if (!fraction_digits && scale != 0) continue;
    const int32_t dot = state();
    edges[q].emplace_back('.', dot);
    if (scale == 0) {
      zeros_after(dot, r, -1, 0);
    } else {
      for (int64_t d = 0; d < 10; ++d) {
        const int32_t next = fraction_state((r * 10 + d) % p, 1);
        edges[dot].emplace_back('0' + d, next);
      }
    }
  }
  while (!todo.empty()) {
    const auto [r, j] = todo.back();
    todo.pop_back();
    const int32_t q = fraction.at({r, j});
    finish(q, r, j);
    if (j < scale) {
      for (int64_t d = 0; d < 10; ++d) {
        const int32_t next = fraction_state((r * 10 + d) % p, j + 1);
        edges[q].emplace_back('0' + d, next);
      }
    } else {
      zeros_after(q, r, -2 - j, j);
    }
  }
  RangeNfa nfa;
  for (size_t q = 0; q < edges.size(); ++q) {
    std::sort(edges[q].begin(), edges[q].end());
    for (const auto& [byte, target] : edges[q]) {
      nfa.lo.push_back(byte);
      nfa.hi.push_back(byte);
      nfa.target.push_back(target);
    }
    nfa.edge_begin.push_back(static_cast<int32_t>(nfa.lo.size()));
    nfa.eps.insert(nfa.eps.end(), eps[q].begin(), eps[q].end());
    nfa.eps_begin.push_back(static_cast<int32_t>(nfa.eps.size()));
  }
  nfa.start = start;
  nfa.final = final;
  return determinize(nfa, max_states);
}

}  // namespace tokensieve
