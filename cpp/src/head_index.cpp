#include "tokensieve/head_index.hpp"

#include "hash_mix.hpp"

namespace tokensieve {

void TokenSet::assign(std::vector<uint32_t> tokens, uint32_t vocab_size) {
  ids.clear();
  bits.clear();
  const size_t num_words = (static_cast<size_t>(vocab_size) + 31) / 32;
  if (tokens.size() >= num_words) {  // an OR over the words costs less than setting each bit
    bits.assign(num_words, 0);
    for (uint32_t id : tokens) bits[id >> 5] |= 1u << (id & 31);
  } else {
    ids = std::move(tokens);  // in trie order: sorting them saved less than it cost
    ids.shrink_to_fit();
  }
}

void TokenSet::or_into(uint32_t* words) const {
  if (!bits.empty()) {
    const size_t n = bits.size();
    for (size_t i = 0; i < n; ++i) words[i] |= bits[i];
  } else {
    for (uint32_t id : ids) words[id >> 5] |= 1u << (id & 31);
  }
}

size_t HeadIndexCache::KeyHash::operator()(const Key& k) const {
  uint64_t h = detail::mix(reinterpret_cast<uintptr_t>(k.trie) ^ (uint64_t{k.root} << 17));
  h = detail::mix(h ^ ((static_cast<uint64_t>(static_cast<uint32_t>(k.terminal)) << 32) | static_cast<uint32_t>(k.state)));
  return static_cast<size_t>(h);
}

}  // namespace tokensieve
