#include "tokensieve/mask_cache.hpp"

#include <cstring>

namespace tokensieve {

namespace {
// Rough per-entry overhead of the hash maps (node, bucket, string header).
constexpr size_t kEntryOverhead = 64;
}  // namespace

void MaskCache::clear_locked() {
  ids_.clear();
  dynamic_ids_.clear();
  masks_.clear();
  bytes_.set(0);
  ++epoch_;
  if (epoch_ == 0) epoch_ = 1;  // 0 marks "no signature"
}

uint64_t MaskCache::intern(const std::string& description) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = ids_.find(description);
  if (it == ids_.end()) {
    bytes_.add(description.size() + kEntryOverhead);
    if (bytes_.value() > max_bytes_) {
      clear_locked();
      bytes_.set(description.size() + kEntryOverhead);
    }
    it = ids_.emplace(description, static_cast<uint32_t>(ids_.size() + 1)).first;
  }
  return (static_cast<uint64_t>(epoch_) << 32) | it->second;
}

uint64_t MaskCache::intern_dynamic(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = dynamic_ids_.find(key);
  if (it == dynamic_ids_.end()) {
    bytes_.add(key.size() + kEntryOverhead);  // charged; the next intern() clears when over
    it = dynamic_ids_.emplace(key, static_cast<uint32_t>(dynamic_ids_.size() + 1)).first;
  }
  return (static_cast<uint64_t>(epoch_) << 32) | it->second;
}

bool MaskCache::lookup(uint64_t signature, uint32_t* words, size_t n) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if ((signature >> 32) != epoch_) return false;
  auto it = masks_.find(static_cast<uint32_t>(signature));
  if (it == masks_.end() || it->second.size() != n) return false;
  std::memcpy(words, it->second.data(), n * sizeof(uint32_t));
  return true;
}

void MaskCache::store(uint64_t signature, const uint32_t* words, size_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  if ((signature >> 32) != epoch_) return;
  const size_t cost = n * sizeof(uint32_t) + kEntryOverhead;
  if (bytes_.value() + cost > max_bytes_) return;  // full: keep what is there until the ids overflow
  auto [it, inserted] = masks_.try_emplace(static_cast<uint32_t>(signature));
  if (!inserted) return;
  it->second.assign(words, words + n);
  bytes_.add(cost);
}

size_t MaskCache::memory_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_.value();
}

}  // namespace tokensieve
