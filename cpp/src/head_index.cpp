#include "tokensieve/head_index.hpp"

#include "tokensieve/hash_mix.hpp"

namespace tokensieve {

size_t HeadIndexCache::KeyHash::operator()(const Key& k) const {
  uint64_t h = detail::mix(reinterpret_cast<uintptr_t>(k.trie) ^ (uint64_t{k.root} << 17));
  h = detail::mix(h ^ ((static_cast<uint64_t>(static_cast<uint32_t>(k.terminal)) << 32) | static_cast<uint32_t>(k.state)));
  return static_cast<size_t>(h);
}

}  // namespace tokensieve
