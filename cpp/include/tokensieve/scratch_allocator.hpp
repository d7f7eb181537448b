// Working memory for the automaton builders, kept per thread from one build to the next.
//
// A build allocates a hundred or so short-lived vectors (the program's AST columns, byte classes,
// the trie's or the subset construction's rows, the minimizer's blocks) and frees them all before
// it returns; a schema's compile runs a few such builds. Taken from malloc, each vector costs a
// call pair per growth step (callgrind: about a sixth of a property name's build went to malloc
// and free), and each page of heap the allocator has handed back to the system costs a page fault
// when it is touched again (about 2 us on a VM). glibc gives free pages back when asked
// (malloc_trim) and when the top of its heap grows past a threshold, so a build that runs after
// others freed memory often starts on unmapped pages: in a compile after a trim, the builders'
// temporaries took about 27 faults at the median (bench notes, session 21).
//
// ScratchAllocator takes blocks from per-thread free lists by power-of-two size class and keeps
// them when they are freed, up to kMaxKeptPerClass bytes per class (at least one block), so one
// large build cannot fill the lists with blocks that the many small builds never ask for; blocks
// past kMaxBlockBytes go to and from the heap directly. A thread keeps at most kMaxKeptBytes
// (about 5 MiB). A build's temporaries then reuse the previous builds' blocks, already mapped.
// Only temporaries use it: what outlives a build (a Dfa's tables) stays in std::vector.
//
// The free lists are thread_local (each thread builds with its own, no locks) and are released
// when the thread ends. A block may be freed on another thread than the one that took it: it then
// joins that thread's lists, which is harmless (every block comes from ::operator new).
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <vector>

namespace tokensieve {

class ScratchPool {
 public:
  static constexpr int kMinShift = 4;                             // 16-byte blocks at least
  static constexpr int kMaxShift = 20;                            // 1 MiB blocks at most
  static constexpr int kNumClasses = kMaxShift - kMinShift + 1;
  static constexpr size_t kMaxBlockBytes = size_t{1} << kMaxShift;
  static constexpr size_t kMaxKeptPerClass = size_t{256} << 10;   // or one block, if larger
  // All classes together: 14 classes of up to 128 KiB blocks keep 256 KiB each, the 256 KiB,
  // 512 KiB and 1 MiB classes one block each.
  static constexpr size_t kMaxKeptBytes = 14 * kMaxKeptPerClass + (size_t{7} << 18);

  // The most bytes class k keeps.
  static constexpr size_t class_cap(int k) {
    return (size_t{1} << k) > kMaxKeptPerClass ? (size_t{1} << k) : kMaxKeptPerClass;
  }

  ScratchPool() = default;
  ScratchPool(const ScratchPool&) = delete;
  ScratchPool& operator=(const ScratchPool&) = delete;
  ~ScratchPool() {
    for (FreeBlock*& head : free_) {
      while (head != nullptr) {
        FreeBlock* next = head->next;
        ::operator delete(head);
        head = next;
      }
    }
  }

  // The calling thread's pool.
  static ScratchPool& local() {
    thread_local ScratchPool pool;
    return pool;
  }

  void* allocate(size_t bytes) {
    if (bytes > kMaxBlockBytes) return ::operator new(bytes);
    const int k = size_class(bytes);
    FreeBlock*& head = free_[k - kMinShift];
    if (head != nullptr) {
      FreeBlock* block = head;
      head = block->next;
      kept_[k - kMinShift] -= size_t{1} << k;
      return block;
    }
    return ::operator new(size_t{1} << k);
  }

  void deallocate(void* p, size_t bytes) noexcept {
    if (bytes > kMaxBlockBytes) {
      ::operator delete(p);
      return;
    }
    const int k = size_class(bytes);
    size_t& kept = kept_[k - kMinShift];
    if (kept + (size_t{1} << k) > class_cap(k)) {
      ::operator delete(p);
      return;
    }
    auto* block = static_cast<FreeBlock*>(p);  // a block of 16 bytes or more holds the link
    block->next = free_[k - kMinShift];
    free_[k - kMinShift] = block;
    kept += size_t{1} << k;
  }

  // Bytes held in the free lists now (for tests).
  size_t kept_bytes() const {
    size_t total = 0;
    for (size_t kept : kept_) total += kept;
    return total;
  }

 private:
  struct FreeBlock {
    FreeBlock* next;
  };

  // The smallest k >= kMinShift with bytes <= 2^k (bytes <= kMaxBlockBytes).
  static int size_class(size_t bytes) {
    if (bytes <= (size_t{1} << kMinShift)) return kMinShift;
    return 64 - __builtin_clzll(static_cast<unsigned long long>(bytes - 1));  // C++17: no std::bit_width
  }

  FreeBlock* free_[kNumClasses] = {};
  size_t kept_[kNumClasses] = {};
};

// A std::allocator replacement over the calling thread's ScratchPool (stateless: every instance
// is interchangeable, so containers move and swap as with std::allocator).
template <class T>
struct ScratchAllocator {
  using value_type = T;
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "ScratchPool blocks have new's alignment");

  ScratchAllocator() noexcept = default;
  template <class U>
  ScratchAllocator(const ScratchAllocator<U>&) noexcept {}  // NOLINT: rebinding is implicit

  T* allocate(size_t n) {
    if (n > std::numeric_limits<size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(ScratchPool::local().allocate(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { ScratchPool::local().deallocate(p, n * sizeof(T)); }

  template <class U>
  bool operator==(const ScratchAllocator<U>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const ScratchAllocator<U>&) const noexcept {
    return false;
  }
};

// A vector for a build's temporaries (see above).
template <class T>
using ScratchVector = std::vector<T, ScratchAllocator<T>>;

}  // namespace tokensieve
