// MaskCache: masks of parser states already seen, shared by every matcher of one grammar.
//
// A chart position's future depends only on its items and scans and, through their origins,
// on the positions where those items started. Replacing each origin by the *signature* of
// its position, recursively, gives a canonical description of everything that decides what
// may follow (the congruence the reference oracle hash-conses sets by). Equal descriptions
// mean equal masks, so a mask is computed once per distinct signature: inside a long string
// every position after the first looks the same, and so does "after a comma" in a list.
//
// Signatures are dense ids interned here, tagged with the table's *epoch*. The table is
// bounded in bytes: when full it is cleared and the epoch advances. A signature of an older
// epoch stays unambiguous (descriptions embed whole tagged ids, and an epoch's ids are never
// reused), it just no longer finds cached masks. All methods are thread-safe (one mutex;
// each call is short). Every change of its size is reported to its MemoryMeter, if any.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "tokensieve/memory_meter.hpp"

namespace tokensieve {

class MaskCache {
 public:
  explicit MaskCache(size_t max_bytes, std::shared_ptr<MemoryMeter> meter = nullptr)
      : max_bytes_(max_bytes), bytes_(std::move(meter)) {}

  // A signature: epoch in the high 32 bits, id in the low 32; 0 is never returned.
  uint64_t intern(const std::string& description);
  // Tagged id of an Unordered dynamic state, described by its key (unordered.hpp).
  uint64_t intern_dynamic(const std::string& key);

  // Copies the cached mask of `signature` into `words` (n words); false when absent.
  bool lookup(uint64_t signature, uint32_t* words, size_t n) const;
  void store(uint64_t signature, const uint32_t* words, size_t n);

  size_t memory_bytes() const;

 private:
  void clear_locked();

  mutable std::mutex mutex_;
  size_t max_bytes_;
  MeteredBytes bytes_;
  uint32_t epoch_ = 1;
  std::unordered_map<std::string, uint32_t> ids_;
  std::unordered_map<std::string, uint32_t> dynamic_ids_;
  std::unordered_map<uint32_t, std::vector<uint32_t>> masks_;
};

}  // namespace tokensieve
