#include "tokensieve/token_index.hpp"

#include <algorithm>

#include "state_tokens_builder.hpp"

namespace tokensieve {

size_t StateTokens::memory_bytes() const {
  return sizeof(*this) + inside.memory_bytes() + 4 * boundary_nodes.capacity() +
         (suffix_groups ? suffix_groups->memory_bytes() : 0);
}

SuffixGroups::SuffixGroups(const TokenTrie& trie, const std::vector<uint32_t>& boundaries) : trie_(&trie) {
  // The children of each boundary node, counted then placed by byte (a counting sort).
  auto for_each_root = [&](auto&& f) {
    for (uint32_t b : boundaries) {
      for (uint32_t m = b + 1; m < trie.subtree_end(b); m = trie.subtree_end(m)) f(m);
    }
  };
  for_each_root([&](uint32_t m) {
    ++begin_[trie.byte(m) + 1u];
    entries_[trie.byte(m)] += static_cast<size_t>(trie.tokens_end(m) - trie.tokens_begin(m)) + trie.tokens_below(m);
  });
  for (size_t b = 0; b < 256; ++b) begin_[b + 1] += begin_[b];
  roots_.resize(begin_[256]);
  std::array<uint32_t, 256> fill;
  std::copy(begin_.begin(), begin_.end() - 1, fill.begin());
  for_each_root([&](uint32_t m) { roots_[fill[trie.byte(m)]++] = m; });
}

const TokenTrie* SuffixGroups::group(uint8_t byte) const {
  if (entries_[byte] > kMaxEntries) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!groups_[byte]) {
    // The roots' subtrees merged node by node (no suffix strings copied and sorted).
    groups_[byte] = std::make_unique<const TokenTrie>(*trie_, std::vector<uint32_t>(roots_begin(byte), roots_end(byte)));
  }
  return groups_[byte].get();
}

size_t SuffixGroups::memory_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = sizeof(*this) + 4 * roots_.capacity();
  for (const auto& g : groups_) {
    if (g) n += g->memory_bytes();
  }
  return n;
}

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

TokenSlice::TokenSlice(std::shared_ptr<const Vocabulary> vocab, std::shared_ptr<const Dfa> plain)
    : vocab_(std::move(vocab)), plain_(std::move(plain)) {
  const Vocabulary& v = *vocab_;
  bits_.assign((v.size() + 31) / 32, 0);
  std::vector<uint32_t> chars_of(v.size(), 0);  // per token id: its UTF-8 characters if in the slice, else 0
  uint32_t most_chars = 0;
  std::vector<uint8_t> rest(v.size(), 0);
  for (uint32_t id = 0; id < v.size(); ++id) {
    if (v.is_special(id) || v.token(id).empty()) continue;
    int32_t q = plain_->start();
    for (unsigned char b : v.token(id)) {
      if (q == Dfa::kDead) break;
      q = plain_->next(q, b);
    }
    if (q != Dfa::kDead && plain_->accepting(q)) {
      bits_[id >> 5] |= 1u << (id & 31);
      ++size_;
      uint32_t chars = 0;
      for (unsigned char b : v.token(id)) chars += (b & 0xC0) != 0x80;  // lead bytes: one per character
      chars_of[id] = chars;
      most_chars = std::max(most_chars, chars);
    } else {
      rest[id] = 1;
    }
  }
  // Ids by character count (a counting sort); chars_begin_ has one entry past the most.
  chars_begin_.assign(static_cast<size_t>(most_chars) + 2, 0);
  for (uint32_t id = 0; id < v.size(); ++id) {
    if (chars_of[id] != 0) ++chars_begin_[chars_of[id] + 1];
  }
  for (size_t c = 1; c < chars_begin_.size(); ++c) chars_begin_[c] += chars_begin_[c - 1];
  by_chars_.resize(size_);
  std::vector<uint32_t> fill(chars_begin_.begin(), chars_begin_.end() - 1);
  for (uint32_t id = 0; id < v.size(); ++id) {
    if (chars_of[id] != 0) by_chars_[fill[chars_of[id]]++] = id;
  }
  std::vector<std::string> tokens(v.size());
  for (uint32_t id = 0; id < v.size(); ++id) {
    if (rest[id]) tokens[id] = v.token(id);
  }
  rest_ = TokenTrie(tokens, rest);
}

std::vector<uint32_t> TokenSlice::bits_up_to(uint32_t max_chars) const {
  const uint32_t* const cut = ids_end_up_to(max_chars);
  const uint32_t* const end = by_chars_.data() + by_chars_.size();
  if (cut - ids_begin() <= end - cut) {  // set the few up to the bound...
    std::vector<uint32_t> out(bits_.size(), 0);
    for (const uint32_t* id = ids_begin(); id != cut; ++id) out[*id >> 5] |= 1u << (*id & 31);
    return out;
  }
  std::vector<uint32_t> out = bits_;  // ...or clear the few past it
  for (const uint32_t* id = cut; id != end; ++id) out[*id >> 5] &= ~(1u << (*id & 31));
  return out;
}

DfaTokenIndex::DfaTokenIndex(std::shared_ptr<const Dfa> dfa, std::shared_ptr<const Vocabulary> vocab,
                             std::shared_ptr<const TokenSlice> slice, size_t max_boundary_nodes)
    : dfa_(std::move(dfa)), vocab_(std::move(vocab)), slice_(std::move(slice)), max_boundary_nodes_(max_boundary_nodes) {
  states_.resize(std::max(0, dfa_->num_states()));
}

std::shared_ptr<const StateTokens> DfaTokenIndex::get(int32_t state) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (states_[state]) return states_[state];
  }
  // Build outside the lock; two threads racing on the same state build equal entries.
  std::shared_ptr<const StateTokens> entry = build(state);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!states_[state]) states_[state] = std::move(entry);
  return states_[state];
}

namespace {

// A plain DFA as seen by detail::build_state_tokens.
struct DfaWalk {
  using State = int32_t;
  const Dfa& dfa;
  State next(State q, uint8_t byte) const { return dfa.next(q, byte); }
  bool dead(State q) const { return q == Dfa::kDead; }
  bool accepting(State q) const { return dfa.accepting(q); }
};

}  // namespace

std::shared_ptr<const StateTokens> DfaTokenIndex::build(int32_t start) const {
  // Where the slice's tokens stay inside or die by their number of characters alone (inside a
  // JSON string, with or without a maxLength), they are taken at once and only the rest of the
  // vocabulary is walked.
  if (slice_ != nullptr && !dfa_->accepting(start)) {
    const Dfa& dfa = *dfa_;
    const int32_t chars = slice_->char_horizon(start, dfa, [&dfa](int32_t q, uint8_t byte) {
      const int32_t q2 = dfa.next(q, byte);
      return q2 != Dfa::kDead && dfa.accepting(q2) ? TokenSlice::kFail : q2;
    }, static_cast<int32_t>(vocab_->trie().max_depth()));
    if (chars >= 0) {
      return detail::build_state_tokens(DfaWalk{dfa}, start, *vocab_, slice_.get(), static_cast<uint32_t>(chars),
                                        max_boundary_nodes_);
    }
  }
  return detail::build_state_tokens(DfaWalk{*dfa_}, start, *vocab_, nullptr, 0, max_boundary_nodes_);
}

size_t DfaTokenIndex::memory_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t total = sizeof(*this) + states_.capacity() * sizeof(states_[0]);
  for (const auto& s : states_) {
    if (s) total += s->memory_bytes();
  }
  return total;
}

}  // namespace tokensieve
