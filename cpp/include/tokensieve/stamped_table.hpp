// An open-addressing hash table that empties in O(1), for the matcher's scratch sets: the items
// of the chart set being built, and the scans kept by dedupe_scans. Both are emptied after every
// byte of a trie walk, so clearing slot by slot would cost more than the lookups.
//
// Each slot carries the generation ("stamp") it was filled in; clear() starts a new generation,
// and a slot of an older one counts as free. Linear probing over a power-of-two capacity; the
// caller keeps the table at most half full (size() against capacity(); grow() empties it:
// re-insert what is still needed).
// An implementation detail of the matcher (namespace detail), not part of the API.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tokensieve::detail {

template <class Value>
class StampedTable {
 public:
  explicit StampedTable(size_t capacity = 64) { grow(capacity); }

  size_t capacity() const { return values_.size(); }
  // Values filled since the table was last emptied.
  size_t size() const { return size_; }

  // Empties the table.
  void clear() {
    size_ = 0;
    if (++stamp_ == 0) {  // wrapped: clear the stamps once every 4 billion generations
      std::fill(stamps_.begin(), stamps_.end(), 0);
      stamp_ = 1;
    }
  }

  // Empties the table and makes it at least `capacity` slots (rounded up to a power of two).
  void grow(size_t capacity) {
    size_t c = 1;
    while (c < capacity) c *= 2;
    if (c > values_.size()) {
      values_.assign(c, Value{});
      stamps_.assign(c, 0);
      stamp_ = 0;
    }
    clear();
  }

  // Probes from `hash`: {slot, true} at the first value with same(value), else {the free slot
  // where the probe ended, false}.
  template <class Same>
  std::pair<size_t, bool> find(uint64_t hash, Same same) const {
    const size_t mask = values_.size() - 1;
    for (size_t h = static_cast<size_t>(hash) & mask;; h = (h + 1) & mask) {
      if (stamps_[h] != stamp_) return {h, false};
      if (same(values_[h])) return {h, true};
    }
  }

  // Fills a free slot that find() returned.
  void fill(size_t slot, Value value) {
    values_[slot] = std::move(value);
    stamps_[slot] = stamp_;
    ++size_;
  }

  const Value& operator[](size_t slot) const { return values_[slot]; }

 private:
  std::vector<Value> values_;
  std::vector<uint32_t> stamps_;
  uint32_t stamp_ = 0;
  size_t size_ = 0;
};

}  // namespace tokensieve::detail
