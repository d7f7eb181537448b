// The bit mixer the library's hash tables hash with (MurmurHash3's 64-bit finalizer, first
// half): the matcher's and the Unordered table's open-addressing tables, counted terminals'
// tuples, the native lowering's node index and terminal memo.
#pragma once
#include <cstdint>

namespace tokensieve::detail {

inline uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

}  // namespace tokensieve::detail
