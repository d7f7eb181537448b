// Native tests of ScratchPool / ScratchAllocator (tokensieve/scratch_allocator.hpp): blocks are
// reused by size class, freed blocks are kept only up to the cap, large blocks bypass the lists,
// and containers behave as with std::allocator. Run with cpp/tests/run.sh.
#include <cstdint>
#include <numeric>
#include <thread>
#include <vector>

#include "check.hpp"
#include "tokensieve/scratch_allocator.hpp"

using tokensieve::ScratchPool;
using tokensieve::ScratchVector;

namespace {

void test_reuse_by_size_class() {
  ScratchPool pool;
  void* a = pool.allocate(100);  // class 128
  pool.deallocate(a, 100);
  CHECK(pool.kept_bytes() == 128);
  void* b = pool.allocate(120);  // the same class: the same block
  CHECK(b == a);
  CHECK(pool.kept_bytes() == 0);
  void* c = pool.allocate(129);  // class 256: a new block
  CHECK(c != a);
  pool.deallocate(b, 120);
  pool.deallocate(c, 129);
  CHECK(pool.kept_bytes() == 128 + 256);
  void* tiny = pool.allocate(1);  // the smallest class holds a free-list link
  pool.deallocate(tiny, 1);
  CHECK(pool.kept_bytes() == 128 + 256 + 16);
}

void test_large_blocks_and_cap() {
  ScratchPool pool;
  void* big = pool.allocate(ScratchPool::kMaxBlockBytes + 1);  // past the classes: not kept
  pool.deallocate(big, ScratchPool::kMaxBlockBytes + 1);
  CHECK(pool.kept_bytes() == 0);
  // A class keeps kMaxKeptPerClass bytes; the rest of its blocks go back to the heap.
  std::vector<void*> blocks;
  const size_t per_block = 4096, n = ScratchPool::kMaxKeptPerClass / per_block + 3;
  for (size_t i = 0; i < n; ++i) blocks.push_back(pool.allocate(per_block));
  for (void* p : blocks) pool.deallocate(p, per_block);
  CHECK(pool.kept_bytes() == ScratchPool::kMaxKeptPerClass);
  // A full class leaves the others their room, and the largest class keeps one block.
  void* small = pool.allocate(64);
  pool.deallocate(small, 64);
  CHECK(pool.kept_bytes() == ScratchPool::kMaxKeptPerClass + 64);
  void* a = pool.allocate(ScratchPool::kMaxBlockBytes);
  void* b = pool.allocate(ScratchPool::kMaxBlockBytes);
  pool.deallocate(a, ScratchPool::kMaxBlockBytes);
  pool.deallocate(b, ScratchPool::kMaxBlockBytes);
  CHECK(pool.kept_bytes() == ScratchPool::kMaxKeptPerClass + 64 + ScratchPool::kMaxBlockBytes);
  size_t total = 0;  // the stated bound is the sum of the class caps
  for (int k = ScratchPool::kMinShift; k <= ScratchPool::kMaxShift; ++k) total += ScratchPool::class_cap(k);
  CHECK(total == ScratchPool::kMaxKeptBytes);
}

void test_vectors() {  // on a thread of its own: a fresh pool, whatever earlier tests kept
  ScratchVector<int32_t> v;
  for (int32_t i = 0; i < 10000; ++i) v.push_back(i);  // grows through every class up to 64 KiB
  CHECK(v.size() == 10000 && v[9999] == 9999);
  CHECK(std::accumulate(v.begin(), v.end(), int64_t{0}) == int64_t{9999} * 10000 / 2);
  ScratchVector<int32_t> moved = std::move(v);
  CHECK(moved.size() == 10000 && v.empty());  // NOLINT: a moved-from vector is valid and empty
  ScratchVector<ScratchVector<uint8_t>> nested(3, ScratchVector<uint8_t>(5, 7));
  CHECK(nested[2][4] == 7);
  const uint64_t* first = nullptr;
  {
    ScratchVector<uint64_t> temp(1000, 1);  // 8,000 bytes: class 8 KiB
    first = temp.data();
  }
  const size_t kept = ScratchPool::local().kept_bytes();
  ScratchVector<uint64_t> again(1000, 2);  // the block just freed, taken back
  CHECK(again.data() == first && again[999] == 2);
  CHECK(ScratchPool::local().kept_bytes() == kept - 8192);
}

void test_threads() {
  // Each thread has its own lists; blocks freed on another thread join that thread's lists.
  ScratchVector<int32_t> from_main(4096, 1);
  std::thread t([moved = std::move(from_main)]() mutable {
    ScratchVector<int32_t> local(4096, 2);
    CHECK(local[0] == 2 && moved[0] == 1);
    ScratchVector<int32_t>().swap(moved);  // freed here, kept by this thread's pool
    CHECK(ScratchPool::local().kept_bytes() == 16384);
  });
  t.join();
}

}  // namespace

void run_scratch_allocator_tests() {
  test_reuse_by_size_class();
  test_large_blocks_and_cap();
  std::thread(test_vectors).join();
  test_threads();
}
