// MemoryMeter: the bytes that compiled grammars' lazily grown caches hold, summed over the
// grammars that share one meter.
//
// A grammar's mask cache (mask_cache.hpp) and head indexes (head_index.hpp) start empty and
// grow, each within its own limit, as matchers compute masks; a compiled grammar that served
// many masks can hold a hundred times its compile-time size. A cache of compiled grammars
// that is bounded in bytes must see that growth without asking every grammar it holds (that
// would cost a pass over the cache per insert), so the growing caches report each change to
// a meter that the cache's owner reads in O(1). A cache reports its bytes as it gives them
// back, too (cleared, or destroyed with its grammar), so the meter counts live memory only.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

namespace tokensieve {

class MemoryMeter {
 public:
  // Bytes held now by the caches reporting here.
  int64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
  // A reporting cache grew by `delta` bytes (shrank when negative).
  void add(int64_t delta) { bytes_.fetch_add(delta, std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> bytes_{0};
};

// A cache's own byte count that reports every change to a meter (none: just a count), and
// gives its bytes back when destroyed. Not synchronized: the owning cache's lock guards it.
class MeteredBytes {
 public:
  explicit MeteredBytes(std::shared_ptr<MemoryMeter> meter) : meter_(std::move(meter)) {}
  ~MeteredBytes() { set(0); }
  MeteredBytes(const MeteredBytes&) = delete;
  MeteredBytes& operator=(const MeteredBytes&) = delete;

  size_t value() const { return bytes_; }
  void add(size_t n) { set(bytes_ + n); }
  void set(size_t n) {
    if (meter_ && n != bytes_) meter_->add(static_cast<int64_t>(n) - static_cast<int64_t>(bytes_));
    bytes_ = n;
  }

 private:
  size_t bytes_ = 0;
  std::shared_ptr<MemoryMeter> meter_;
};

}  // namespace tokensieve
