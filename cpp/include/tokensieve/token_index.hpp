// Per-DFA-state token index: the part of a mask that depends on one terminal's state only.
//
// When the matcher waits inside a terminal t at DFA state q, each token either
//   (a) stays inside t for all its bytes (t's DFA is still alive after the last byte): it is
//       allowed whatever the parser context, because every live state can finish t; or
//   (b) passes an accepting state of t at some byte and continues after it: whether the rest
//       (the *suffix*) fits depends on what the parser allows after t.
// `StateTokens` stores (a) as a list or bitset and (b) as tries of suffixes by first byte, so a
// mask costs one OR plus parser walks over the small suffix tries of the bytes the parser
// allows next, instead of a walk over the vocabulary.
// Where t can end at only a few trie nodes (a whitespace run: after " ", "  ", ...), (b) is kept
// as those vocabulary-trie nodes instead, and the mask walks below them: no copy of the 40k
// tokens that start with a space, and the walk prunes at their first byte anyway.
// Entries are built lazily on first use and shared by every matcher (thread-safe).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tokensieve/dfa.hpp"
#include "tokensieve/token_trie.hpp"

namespace tokensieve {

// A token slice: the tokens whose bytes lie entirely in a "plain" language P, e.g. JSON string
// content (complete UTF-8 characters other than '"', '\\' and controls), found once per
// vocabulary, plus a trie of all other tokens. Where a terminal state admits every string of P
// without dying or ending, the whole slice is inside it at once, and only the (much smaller)
// rest of the vocabulary needs a walk: a dense in-string mask costs a copy instead of a walk.
class TokenSlice {
 public:
  TokenSlice(std::shared_ptr<const Vocabulary> vocab, std::shared_ptr<const Dfa> plain);

  const Dfa& plain() const { return *plain_; }
  const std::vector<uint32_t>& bits() const { return bits_; }
  // The slice's tokens of at most `max_chars` UTF-8 characters: how many, as a bitset, and as
  // ids (a range of ids sorted by character count). The bitset costs the fewer of those tokens
  // and the others, not a pass over the vocabulary: a state near the end of a bounded string
  // takes few of them, and its entry is built on the first mask there.
  size_t count_up_to(uint32_t max_chars) const { return chars_begin_[clamp_chars(max_chars) + 1]; }
  std::vector<uint32_t> bits_up_to(uint32_t max_chars) const;
  const uint32_t* ids_begin() const { return by_chars_.data(); }
  const uint32_t* ids_end_up_to(uint32_t max_chars) const { return by_chars_.data() + count_up_to(max_chars); }
  const TokenTrie& rest() const { return rest_; }
  uint32_t size() const { return size_; }
  // Explores the product of P's automaton with another automaton from (P's start, `start`):
  // `step(state, byte, completes)` gives the other's state after a byte P can read (`completes`:
  // the byte ends a character of P), or Dfa::kDead to fail the check; `step` must treat bytes of
  // one byte class of `other` alike. True when no reachable pair fails; false past kMaxPairs
  // pairs too (the work stays bounded).
  template <class Step>
  bool all_plain_strings(int32_t start, const Dfa& other, Step step) const;

  // What the slice's tokens do from a state of another automaton when that depends on their
  // number of characters only. Returns r when every string of P of at most r characters keeps
  // the automaton alive and never accepting while every one of r + 1 characters kills it: then
  // the slice's tokens of at most r characters stay inside and the others die (bits_up_to(r)).
  // kAllChars when none dies within `max_chars` characters (pass the longest token's bytes:
  // then the whole slice stays inside). -1 when neither holds: some strings of one length die
  // and others live, `step` returns kFail, or the work passes kMaxPairs pairs.
  // `step(state, byte)` gives the other's state after a byte, Dfa::kDead, or kFail (an
  // accepting state, or anything else the caller cannot follow); like all_plain_strings', it
  // must treat bytes of one byte class of `other` alike. Why: a JSON string with a maxLength
  // of a few hundred is a chain of states, one per character read; each is visited once,
  // and a walk over the whole vocabulary at each cost milliseconds where the slice's rest
  // (a twentieth of the trie) is enough.
  static constexpr int32_t kAllChars = std::numeric_limits<int32_t>::max();
  static constexpr int32_t kFail = -2;
  template <class Step>
  int32_t char_horizon(int32_t start, const Dfa& other, Step step, int32_t max_chars) const;

 private:
  static constexpr size_t kMaxPairs = 4096;
  // One byte per pair of byte classes (P's, `other`'s): bytes of one pair step both automata
  // alike, and there are a few dozen pairs, not 256 bytes.
  std::vector<uint8_t> pair_bytes(const Dfa& other) const;
  // A character count capped at the longest slice token's (an index into chars_begin_).
  uint32_t clamp_chars(uint32_t chars) const { return std::min<uint32_t>(chars, static_cast<uint32_t>(chars_begin_.size() - 2)); }

  std::shared_ptr<const Vocabulary> vocab_;
  std::shared_ptr<const Dfa> plain_;

  std::vector<uint32_t> bits_;
  std::vector<uint32_t> by_chars_;     // the slice's token ids, sorted by their number of characters
  std::vector<uint32_t> chars_begin_;  // by_chars_[chars_begin_[c] ..]: tokens of c characters or more
  TokenTrie rest_;
  uint32_t size_ = 0;
};

inline std::vector<uint8_t> TokenSlice::pair_bytes(const Dfa& other) const {
  const Dfa& p = *plain_;
  std::vector<uint8_t> bytes;
  std::vector<uint8_t> seen_pair(static_cast<size_t>(p.num_classes()) * other.num_classes(), 0);
  for (int b = 0; b < 256; ++b) {
    const auto byte = static_cast<uint8_t>(b);
    uint8_t& seen = seen_pair[static_cast<size_t>(p.class_of(byte)) * other.num_classes() + other.class_of(byte)];
    if (!seen) {
      seen = 1;
      bytes.push_back(byte);
    }
  }
  return bytes;
}

namespace detail {
inline uint64_t pair_key(int32_t a, int32_t q) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(q);
}
}  // namespace detail

template <class Step>
bool TokenSlice::all_plain_strings(int32_t start, const Dfa& other, Step step) const {
  const Dfa& p = *plain_;
  if (p.start() == Dfa::kDead) return false;
  const std::vector<uint8_t> bytes = pair_bytes(other);
  std::vector<std::pair<int32_t, int32_t>> todo = {{p.start(), start}};
  // A hash set: the check runs up to kMaxPairs pairs on a first mask (a long bounded string
  // reaches the limit), and a linear search made that 16M comparisons.
  std::unordered_set<uint64_t> seen = {detail::pair_key(p.start(), start)};
  while (!todo.empty()) {
    auto [a, q] = todo.back();
    todo.pop_back();
    for (const uint8_t byte : bytes) {
      const int32_t a2 = p.next(a, byte);
      if (a2 == Dfa::kDead) continue;
      const int32_t q2 = step(q, byte, p.accepting(a2));
      if (q2 == Dfa::kDead) return false;
      if (!seen.insert(detail::pair_key(a2, q2)).second) continue;
      if (seen.size() > kMaxPairs) return false;
      todo.push_back({a2, q2});
    }
  }
  return true;
}

template <class Step>
int32_t TokenSlice::char_horizon(int32_t start, const Dfa& other, Step step, int32_t max_chars) const {
  const Dfa& p = *plain_;
  if (p.start() == Dfa::kDead) return -1;
  const std::vector<uint8_t> bytes = pair_bytes(other);
  // Layer by layer: the pairs after each whole number of characters, and between two layers
  // the pairs part-way through a character (UTF-8 continuation bytes). Each pair is explored
  // once: one seen before was explored from there (an earlier layer) without a death, and so
  // was everything after it, so the work is that of a plain search over the pairs.
  using Pair = std::pair<int32_t, int32_t>;
  std::vector<Pair> layer = {{p.start(), start}}, next_layer, todo;
  std::unordered_set<uint64_t> layered = {detail::pair_key(p.start(), start)};  // whole characters
  std::unordered_map<uint64_t, int32_t> within;  // part-way through a character: the layer
  size_t pairs = 1;
  bool merged = false;  // some string reached a pair seen in an earlier layer
  for (int32_t chars = 0; chars < max_chars; ++chars) {
    bool lives = false, dies = false;
    next_layer.clear();
    todo = layer;
    while (!todo.empty()) {
      const auto [a, q] = todo.back();
      todo.pop_back();
      for (const uint8_t byte : bytes) {
        const int32_t a2 = p.next(a, byte);
        if (a2 == Dfa::kDead) continue;
        const int32_t q2 = step(q, byte);
        if (q2 == kFail) return -1;
        if (q2 == Dfa::kDead) {
          dies = true;
        } else if (p.accepting(a2)) {  // a character read whole
          lives = true;
          next_layer.push_back({a2, q2});
        } else if (const auto [it, added] = within.try_emplace(detail::pair_key(a2, q2), chars); added) {
          if (++pairs > kMaxPairs) return -1;
          todo.push_back({a2, q2});
        } else if (it->second != chars) {
          merged = true;
        }
      }
    }
    // P's states are trimmed, so a string part-way through a character that does not die
    // reads the character whole: with no string alive after chars + 1 characters, all died.
    // Not so after a merge: strings through an earlier layer's pair were not followed again.
    if (dies) return lives || merged ? -1 : chars;
    // Only new pairs are explored further: with none, no string ever dies.
    std::sort(next_layer.begin(), next_layer.end());
    next_layer.erase(std::unique(next_layer.begin(), next_layer.end()), next_layer.end());
    layer.clear();
    for (const Pair& pair : next_layer) {
      if (layered.insert(detail::pair_key(pair.first, pair.second)).second) {
        layer.push_back(pair);
      } else {
        merged = true;
      }
    }
    if (layer.empty()) return kAllChars;
    pairs += layer.size();
    if (pairs > kMaxPairs) return -1;
  }
  return kAllChars;
}

// The suffixes of tokens after the points where a terminal may end, grouped by their first
// byte, each group's trie built on first use. After a terminal the parser usually allows few
// bytes (a closing quote, a comma): a state of a URI terminal, which may end after nearly any
// token prefix, has suffixes from some 100k tokens, and sorting them all into one trie cost
// 100 ms on the first mask, where the quote's group is a few hundred entries.
class SuffixGroups {
 public:
  // `boundaries`: nodes of `trie` (the vocabulary's or a slice's) where the terminal may end.
  SuffixGroups(const TokenTrie& trie, const std::vector<uint32_t>& boundaries);

  // Whether some suffix starts with `byte`.
  bool has(uint8_t byte) const { return begin_[byte] != begin_[byte + 1u]; }
  // The trie of the suffixes that start with `byte` (first byte included), built on first call
  // (thread-safe), or nullptr when the group is over kMaxEntries (a memory guard): then walk
  // the subtrees of roots(byte) in trie() instead.
  const TokenTrie* group(uint8_t byte) const;
  // The children of boundary nodes that carry `byte`.
  const uint32_t* roots_begin(uint8_t byte) const { return roots_.data() + begin_[byte]; }
  const uint32_t* roots_end(uint8_t byte) const { return roots_.data() + begin_[byte + 1u]; }
  const TokenTrie& trie() const { return *trie_; }
  size_t num_roots() const { return roots_.size(); }
  size_t memory_bytes() const;

  static constexpr size_t kMaxEntries = 1 << 20;

 private:
  const TokenTrie* trie_;  // owned by the vocabulary or the token slice of the entry's index
  std::vector<uint32_t> roots_;  // grouped by byte: group b is roots_[begin_[b] .. begin_[b + 1])
  std::array<uint32_t, 257> begin_{};
  std::array<size_t, 256> entries_{};  // suffixes per group
  mutable std::mutex mutex_;
  mutable std::array<std::unique_ptr<const TokenTrie>, 256> groups_;
};

// A set of token ids: a list when sparse, a bitset over the vocabulary when dense.
struct TokenSet {
  std::vector<uint32_t> ids;
  std::vector<uint32_t> bits;

  // Stores `tokens` (any order, no duplicates) in the cheaper form for a vocabulary of `vocab_size`.
  void assign(std::vector<uint32_t> tokens, uint32_t vocab_size);
  void or_into(uint32_t* words) const;
  bool empty() const { return ids.empty() && bits.empty(); }
  size_t memory_bytes() const { return 4 * (ids.capacity() + bits.capacity()); }
};

struct StateTokens {
  // Tokens that stay inside the terminal: a sorted id list when short, else a bitset.
  TokenSet inside;
  // Where the terminal may end part-way through tokens: when there are few such trie nodes,
  // the nodes themselves (in `boundary_trie`; the mask walks below them)...
  std::vector<uint32_t> boundary_nodes;
  const TokenTrie* boundary_trie = nullptr;
  // ...else the suffixes after them, by first byte.
  std::unique_ptr<const SuffixGroups> suffix_groups;
  size_t memory_bytes() const;
};

class DfaTokenIndex {
 public:
  // By default, up to this many boundary nodes a state keeps them instead of grouping their
  // suffixes (a walk below a few nodes prunes at their first byte; grouping pays past that).
  static constexpr size_t kMaxBoundaryNodes = 256;

  DfaTokenIndex(std::shared_ptr<const Dfa> dfa, std::shared_ptr<const Vocabulary> vocab,
                std::shared_ptr<const TokenSlice> slice = nullptr, size_t max_boundary_nodes = kMaxBoundaryNodes);

  const Dfa& dfa() const { return *dfa_; }
  const std::shared_ptr<const Dfa>& dfa_ptr() const { return dfa_; }
  // The entry for `state`, built on first use.
  std::shared_ptr<const StateTokens> get(int32_t state) const;
  size_t memory_bytes() const;

 private:
  std::shared_ptr<const StateTokens> build(int32_t state) const;

  std::shared_ptr<const Dfa> dfa_;
  std::shared_ptr<const Vocabulary> vocab_;
  std::shared_ptr<const TokenSlice> slice_;
  size_t max_boundary_nodes_;
  mutable std::mutex mutex_;
  mutable std::vector<std::shared_ptr<const StateTokens>> states_;
};

}  // namespace tokensieve
