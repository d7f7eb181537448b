#include "tokensieve/token_index.hpp"

#include <algorithm>

namespace tokensieve {

size_t StateTokens::memory_bytes() const {
  return sizeof(*this) + 4 * (inside_ids.capacity() + inside_bits.capacity() + boundary_nodes.capacity()) +
         suffixes.memory_bytes();
}

void StateTokens::or_inside(uint32_t* words) const {
  if (!inside_bits.empty()) {
    const size_t n = inside_bits.size();
    for (size_t i = 0; i < n; ++i) words[i] |= inside_bits[i];
  } else {
    for (uint32_t id : inside_ids) words[id >> 5] |= 1u << (id & 31);
  }
}

TokenSlice::TokenSlice(std::shared_ptr<const Vocabulary> vocab, std::shared_ptr<const Dfa> plain)
    : vocab_(std::move(vocab)), plain_(std::move(plain)) {
  const Vocabulary& v = *vocab_;
  bits_.assign((v.size() + 31) / 32, 0);
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
    } else {
      rest[id] = 1;
    }
  }
  std::vector<std::string> tokens(v.size());
  for (uint32_t id = 0; id < v.size(); ++id) {
    if (rest[id]) tokens[id] = v.token(id);
  }
  rest_ = TokenTrie(tokens, rest);
}

bool TokenSlice::admitted_by(const Dfa& dfa, int32_t state) const {
  // Explore the product of P's automaton and `dfa` from (start, state): every pair reachable on
  // a byte P can read must keep `dfa` alive and not accepting. Bounded: give up past kMaxPairs.
  constexpr size_t kMaxPairs = 4096;
  const Dfa& p = *plain_;
  if (p.start() == Dfa::kDead || dfa.accepting(state)) return false;
  std::vector<std::pair<int32_t, int32_t>> todo = {{p.start(), state}};
  std::vector<std::pair<int32_t, int32_t>> seen = todo;
  while (!todo.empty()) {
    auto [a, b] = todo.back();
    todo.pop_back();
    for (int byte = 0; byte < 256; ++byte) {
      const int32_t a2 = p.next(a, static_cast<uint8_t>(byte));
      if (a2 == Dfa::kDead) continue;
      const int32_t b2 = dfa.next(b, static_cast<uint8_t>(byte));
      if (b2 == Dfa::kDead || dfa.accepting(b2)) return false;
      const std::pair<int32_t, int32_t> pair{a2, b2};
      if (std::find(seen.begin(), seen.end(), pair) != seen.end()) continue;
      if (seen.size() >= kMaxPairs) return false;
      seen.push_back(pair);
      todo.push_back(pair);
    }
  }
  return true;
}

DfaTokenIndex::DfaTokenIndex(std::shared_ptr<const Dfa> dfa, std::shared_ptr<const Vocabulary> vocab,
                             std::shared_ptr<const TokenSlice> slice)
    : dfa_(std::move(dfa)), vocab_(std::move(vocab)), slice_(std::move(slice)) {
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

std::shared_ptr<const StateTokens> DfaTokenIndex::build(int32_t start) const {
  const Dfa& dfa = *dfa_;
  // With the slice admitted, its tokens are inside at once and only the rest needs a walk.
  const bool sliced = slice_ != nullptr && slice_->admitted_by(dfa, start);
  const TokenTrie& trie = sliced ? slice_->rest() : vocab_->trie();
  const uint32_t n = trie.num_nodes();
  std::vector<int32_t> state_at(trie.max_depth() + 1);
  state_at[0] = start;
  std::vector<uint32_t> inside;
  std::vector<uint32_t> boundaries;
  size_t suffix_entries = 0;

  uint32_t node = 1;
  while (node < n) {
    const uint32_t d = trie.depth(node);
    const int32_t q = dfa.next(state_at[d - 1], trie.byte(node));
    if (q == Dfa::kDead) {
      node = trie.subtree_end(node);
      continue;
    }
    state_at[d] = q;
    inside.insert(inside.end(), trie.tokens_begin(node), trie.tokens_end(node));
    if (dfa.accepting(q) && trie.tokens_below(node) > 0) {
      // The terminal may end here: every longer token below this node continues with a suffix
      // that the parser has to judge.
      boundaries.push_back(node);
      suffix_entries += trie.tokens_below(node);
    }
    ++node;
  }

  auto entry = std::make_shared<StateTokens>();
  entry->boundary_trie = &trie;
  const size_t words = (vocab_->size() + 31) / 32;
  if (sliced || inside.size() > words / 4) {  // past this a bitset is about as small and ORs faster
    if (sliced) {
      entry->inside_bits = slice_->bits();
    } else {
      entry->inside_bits.assign(words, 0);
    }
    for (uint32_t id : inside) entry->inside_bits[id >> 5] |= 1u << (id & 31);
  } else {
    std::sort(inside.begin(), inside.end());
    entry->inside_ids = std::move(inside);
  }
  if (boundaries.size() <= kMaxBoundaryNodes || suffix_entries > kMaxSuffixEntries) {
    entry->boundary_nodes = std::move(boundaries);
  } else if (suffix_entries > 0) {
    std::vector<std::pair<std::string, uint32_t>> suffixes;
    suffixes.reserve(suffix_entries);
    for (uint32_t b : boundaries) {
      const uint32_t d = trie.depth(b);
      for (uint32_t m = b + 1; m < trie.subtree_end(b); ++m) {
        for (const uint32_t* t = trie.tokens_begin(m); t != trie.tokens_end(m); ++t) {
          suffixes.emplace_back(vocab_->token(*t).substr(d), *t);
        }
      }
    }
    entry->suffixes = TokenTrie(std::move(suffixes));
  }
  return entry;
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
