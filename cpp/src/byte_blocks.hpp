// Partition refinement of the 256 byte values by byte sets, shared by the DFA builder's byte
// classes (dfa.cpp) and the JSON literal shortcut's (json_literal.cpp), which must agree on
// them class for class: private to the library.
#pragma once
#include <array>
#include <cstdint>

#include "tokensieve/scratch_allocator.hpp"

namespace tokensieve::detail {

// Blocks of bytes (or of intervals named by their first byte): all start in block 0. Moving
// the bytes of one set, one call per byte with that set's id, sends each byte to a fresh block,
// one per block the set takes bytes from; two bytes end in one block iff every set holds both
// or neither of them. Set ids must differ from one set to the next.
struct ByteBlocks {
  std::array<int32_t, 256> block{};
  ScratchVector<int32_t> moved_to{-1}, moved_by{-1};  // per block: its fresh block, and the set that made it

  void move(int byte, int32_t set_id) {
    const int32_t old = block[byte];
    if (moved_by[old] != set_id) {
      moved_by[old] = set_id;
      moved_to[old] = static_cast<int32_t>(moved_to.size());
      moved_to.push_back(-1);
      moved_by.push_back(-1);
    }
    block[byte] = moved_to[old];
  }
  size_t num_blocks() const { return moved_to.size(); }
};

}  // namespace tokensieve::detail
