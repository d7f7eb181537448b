// The bit mixer the matcher's and the Unordered table's open-addressing tables hash with
// (MurmurHash3's 64-bit finalizer, first half): private to the library, like
// state_tokens_builder.hpp.
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
