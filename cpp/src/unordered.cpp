#include "tokensieve/unordered.hpp"

#include <algorithm>
#include <cstring>

#include "tokensieve/hash_mix.hpp"
#include "tokensieve/grammar.hpp"

namespace tokensieve {

namespace {

inline bool test_bit(const uint64_t* bits, size_t i) { return (bits[i >> 6] >> (i & 63)) & 1; }

// popcount(a & ~b) over `words` words.
inline int64_t count_missing(const uint64_t* a, const uint64_t* b, size_t words) {
  int64_t n = 0;
  for (size_t w = 0; w < words; ++w) n += __builtin_popcountll(a[w] & ~b[w]);
  return n;
}

}  // namespace

bool UnorderedRule::productive() const {
  const size_t n = words();
  int64_t required_count = 0, usable_count = 0;
  for (size_t w = 0; w < n; ++w) {
    if (required[w] & ~usable[w]) return false;
    required_count += __builtin_popcountll(required[w]);
    usable_count += __builtin_popcountll(usable[w]);
  }
  const int64_t lo = std::max<int64_t>(required_count, min_count);
  if (effective_max >= 0 && lo > effective_max) return false;
  return repeatable_usable || lo <= usable_count;
}

namespace {

std::string state_key(int32_t rule, bool after, uint32_t count, const uint64_t* bits, size_t words) {
  std::string key(sizeof(int32_t) + 1 + sizeof(uint32_t) + words * sizeof(uint64_t), '\0');
  char* p = key.data();
  std::memcpy(p, &rule, sizeof rule);
  p[sizeof rule] = after ? 1 : 0;
  std::memcpy(p + sizeof rule + 1, &count, sizeof count);
  if (words) std::memcpy(p + sizeof rule + 1 + sizeof count, bits, words * sizeof(uint64_t));
  return key;
}

}  // namespace

std::string UnorderedTable::key(const CompiledGrammar& g, uint32_t id) const {
  const State& s = states_[id];
  return state_key(s.rule, s.after, s.count, bits_.data() + s.bits, g.unordered_rule(s.rule).words());
}

namespace {

uint64_t state_hash(int32_t rule, bool after, uint32_t count, const uint64_t* bits, size_t words) {
  uint64_t h = (static_cast<uint64_t>(static_cast<uint32_t>(rule)) << 33) ^ (static_cast<uint64_t>(count) << 1) ^ (after ? 1 : 0);
  for (size_t w = 0; w < words; ++w) {
    h ^= bits[w] + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  }
  return detail::mix(h);
}

}  // namespace

uint32_t UnorderedTable::intern(int32_t rule, bool after, uint32_t count, const uint64_t* bits, size_t words) {
  const uint64_t h = state_hash(rule, after, count, bits, words);
  if (slots_.empty()) slots_.assign(64, kUnknown);
  size_t mask = slots_.size() - 1;
  size_t i = h & mask;
  for (; slots_[i] != kUnknown; i = (i + 1) & mask) {
    const State& s = states_[slots_[i]];
    if (hashes_[slots_[i]] == h && s.rule == rule && s.after == after && s.count == count &&
        std::equal(bits, bits + words, bits_.begin() + s.bits)) {
      return slots_[i];
    }
  }
  const auto id = static_cast<uint32_t>(states_.size());
  states_.push_back({rule, after, count, static_cast<uint32_t>(bits_.size())});
  hashes_.push_back(h);
  bits_.insert(bits_.end(), bits, bits + words);
  slots_[i] = id;
  if (2 * states_.size() > slots_.size()) {  // keep the load at most 1/2
    slots_.assign(2 * slots_.size(), kUnknown);
    mask = slots_.size() - 1;
    for (uint32_t k = 0; k < states_.size(); ++k) {
      size_t j = hashes_[k] & mask;
      while (slots_[j] != kUnknown) j = (j + 1) & mask;
      slots_[j] = k;
    }
  }
  return id;
}

uint32_t UnorderedTable::start(const CompiledGrammar& g, int32_t rule) {
  const auto r = static_cast<size_t>(rule);
  if (r >= start_of_rule_.size()) start_of_rule_.resize(r + 1, kUnknown);
  if (start_of_rule_[r] == kUnknown) {
    scratch_.assign(g.unordered_rule(rule).words(), 0);
    start_of_rule_[r] = intern(rule, false, 0, scratch_.data(), scratch_.size());
  }
  return start_of_rule_[r];
}

bool UnorderedTable::viable(const UnorderedRule& r, const uint64_t* bits, uint32_t count) const {
  const size_t n = r.words();
  const int64_t need = count_missing(r.required.data(), bits, n);
  if (r.effective_max >= 0 && static_cast<int64_t>(count) + need > r.effective_max) return false;
  // Then the required items fit; repeatable items (if any) fill up to min_count <= max.
  if (r.repeatable_usable) return true;
  return static_cast<int64_t>(count) + count_missing(r.usable.data(), bits, n) >= r.min_count;
}

uint32_t UnorderedTable::next_count(const UnorderedRule& r, uint32_t count) const {
  return std::min(count + 1, r.count_cap);
}

UnorderedTable::Missing UnorderedTable::missing(const UnorderedRule& r, const uint64_t* bits) const {
  const size_t n = r.words();
  return {count_missing(r.required.data(), bits, n), count_missing(r.usable.data(), bits, n)};
}

bool UnorderedTable::item_allowed(const UnorderedRule& r, const uint64_t* bits, uint32_t count, size_t i,
                                  const Missing& m) const {
  if (test_bit(bits, i) || !test_bit(r.usable.data(), i)) return false;
  if (r.effective_max >= 0 && static_cast<int64_t>(count) >= r.effective_max) return false;
  // The state after item i: `bits` plus i. Only i's bit changes, so adjust the counts.
  const int64_t need = m.required - (test_bit(r.required.data(), i) ? 1 : 0);
  const int64_t after = static_cast<int64_t>(count) + 1;
  if (r.effective_max >= 0 && after + need > r.effective_max) return false;
  if (r.repeatable_usable) return true;
  return after + m.usable - 1 >= r.min_count;
}

bool UnorderedTable::repeatable_allowed(const UnorderedRule& r, const uint64_t* bits, uint32_t count) const {
  if (!r.repeatable_usable) return false;
  if (r.effective_max >= 0 && static_cast<int64_t>(count) >= r.effective_max) return false;
  return viable(r, bits, count + 1);
}

bool UnorderedTable::can_finish(const CompiledGrammar& g, uint32_t id) const {
  const State& s = states_[id];
  if (!s.after) return false;
  const UnorderedRule& r = g.unordered_rule(s.rule);
  return count_missing(r.required.data(), bits_.data() + s.bits, r.words()) == 0 &&
         static_cast<int64_t>(s.count) >= r.min_count;
}

void UnorderedTable::expected(const CompiledGrammar& g, uint32_t id, std::vector<int32_t>& out) {
  if (states_[id].first_expected == kUnknown) {
    compute_expected(g, id, out);
    states_[id].first_expected = static_cast<uint32_t>(expected_.size());
    states_[id].num_expected = static_cast<uint32_t>(out.size());
    expected_.insert(expected_.end(), out.begin(), out.end());
    return;
  }
  const auto first = expected_.begin() + states_[id].first_expected;
  out.assign(first, first + states_[id].num_expected);
}

void UnorderedTable::compute_expected(const CompiledGrammar& g, uint32_t id, std::vector<int32_t>& out) const {
  out.clear();
  const State& s = states_[id];
  const UnorderedRule& r = g.unordered_rule(s.rule);
  const uint64_t* bits = bits_.data() + s.bits;
  bool any = repeatable_allowed(r, bits, s.count);
  if (!s.after && any) out.push_back(r.repeatable);
  const Missing m = missing(r, bits);
  for (size_t i = 0; i < r.items.size() && !(s.after && any); ++i) {
    if (!item_allowed(r, bits, s.count, i, m)) continue;
    any = true;
    if (!s.after) out.push_back(r.items[i]);
  }
  if (s.after && any) out.push_back(r.separator);
}

void UnorderedTable::advance(const CompiledGrammar& g, uint32_t id, int32_t sym, std::vector<uint32_t>& out) {
  const uint64_t key = (static_cast<uint64_t>(id) << 32) | static_cast<uint32_t>(sym);
  auto it = advanced_.find(key);
  if (it == advanced_.end()) {
    compute_advance(g, id, sym, out);
    advanced_.emplace(key, std::pair(static_cast<uint32_t>(advance_targets_.size()), static_cast<uint32_t>(out.size())));
    advance_targets_.insert(advance_targets_.end(), out.begin(), out.end());
    return;
  }
  const auto first = advance_targets_.begin() + it->second.first;
  out.assign(first, first + it->second.second);
}

void UnorderedTable::compute_advance(const CompiledGrammar& g, uint32_t id, int32_t sym, std::vector<uint32_t>& out) {
  out.clear();
  const State s = states_[id];  // a copy: interning may reallocate states_
  const UnorderedRule& r = g.unordered_rule(s.rule);
  const size_t n = r.words();
  scratch_.assign(bits_.begin() + s.bits, bits_.begin() + s.bits + n);
  if (s.after) {
    if (sym != r.separator) return;
    bool any = repeatable_allowed(r, scratch_.data(), s.count);
    const Missing m = any ? Missing{} : missing(r, scratch_.data());
    for (size_t i = 0; i < r.items.size() && !any; ++i) any = item_allowed(r, scratch_.data(), s.count, i, m);
    if (any) out.push_back(intern(s.rule, false, s.count, scratch_.data(), n));
    return;
  }
  if (sym == r.repeatable && repeatable_allowed(r, scratch_.data(), s.count)) {
    out.push_back(intern(s.rule, true, next_count(r, s.count), scratch_.data(), n));
  }
  auto range = std::equal_range(r.item_of_symbol.begin(), r.item_of_symbol.end(), std::make_pair(sym, INT32_MIN),
                                [](const auto& a, const auto& b) { return a.first < b.first; });
  const Missing m = range.first == range.second ? Missing{} : missing(r, scratch_.data());
  for (auto it = range.first; it != range.second; ++it) {
    const size_t i = static_cast<size_t>(it->second);
    if (!item_allowed(r, scratch_.data(), s.count, i, m)) continue;
    std::vector<uint64_t> next(scratch_);
    next[i >> 6] |= uint64_t{1} << (i & 63);
    out.push_back(intern(s.rule, true, next_count(r, s.count), next.data(), n));
  }
}

}  // namespace tokensieve
