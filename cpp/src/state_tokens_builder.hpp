// Building one StateTokens entry (token_index.hpp) by walking the vocabulary trie through an
// automaton. Private to the library: DfaTokenIndex walks a plain DFA, CountedTerminal
// (counted.hpp) walks its loop automaton with counter gaps.
//
// `Automaton` provides
//   using State = ...;                      a copyable state
//   State next(const State&, uint8_t) const;
//   bool dead(const State&) const;
//   bool accepting(const State&) const;
#pragma once
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tokensieve/token_index.hpp"

namespace tokensieve::detail {

// The entry for `start`. Without a slice it walks the vocabulary's trie. With one, the caller
// knows that the slice's tokens of at most `slice_chars` characters stay inside from `start`
// and its others die without passing an accepting state (TokenSlice::char_horizon): those are
// taken at once and only the slice's rest is walked. Past `max_boundary_nodes` nodes where the
// terminal may end, their suffixes are grouped by first byte.
template <class Automaton>
std::shared_ptr<const StateTokens> build_state_tokens(const Automaton& automaton, const typename Automaton::State& start,
                                                      const Vocabulary& vocab, const TokenSlice* slice,
                                                      uint32_t slice_chars, size_t max_boundary_nodes) {
  using State = typename Automaton::State;
  const TokenTrie& trie = slice != nullptr ? slice->rest() : vocab.trie();
  const uint32_t n = trie.num_nodes();
  std::vector<State> state_at(trie.max_depth() + 1, start);
  std::vector<uint32_t> boundaries;
  // Tokens inside: a list of ids while they are few, a bitset past a quarter of the bitset's
  // words (about as small then, and ORed faster). Bits are set as the walk finds tokens: a
  // string terminal's state keeps nearly the whole vocabulary inside, and collecting 120k ids
  // first was a third of the walk.
  const size_t words = (vocab.size() + 31) / 32;
  std::vector<uint32_t> inside;
  std::vector<uint32_t> bits;
  bool use_bits = false;
  if (slice != nullptr) {
    if (slice->count_up_to(slice_chars) > words / 4) {
      use_bits = true;
      bits = slice->bits_up_to(slice_chars);
    } else {
      inside.assign(slice->ids_begin(), slice->ids_end_up_to(slice_chars));
    }
  }

  uint32_t node = 1;
  while (node < n) {
    const uint32_t d = trie.depth(node);
    const State q = automaton.next(state_at[d - 1], trie.byte(node));
    if (automaton.dead(q)) {
      node = trie.subtree_end(node);
      continue;
    }
    state_at[d] = q;
    const uint32_t* t = trie.tokens_begin(node);
    const uint32_t* const t_end = trie.tokens_end(node);
    if (use_bits) {
      for (; t != t_end; ++t) bits[*t >> 5] |= 1u << (*t & 31);
    } else if (t != t_end) {
      for (; t != t_end; ++t) inside.push_back(*t);
      if (inside.size() > words / 4) {
        use_bits = true;
        bits.assign(words, 0);
        for (uint32_t id : inside) bits[id >> 5] |= 1u << (id & 31);
        inside.clear();
      }
    }
    if (automaton.accepting(q) && trie.tokens_below(node) > 0) {
      // The terminal may end here: every longer token below this node continues with a suffix
      // that the parser has to judge.
      boundaries.push_back(node);
    }
    ++node;
  }

  auto entry = std::make_shared<StateTokens>();
  entry->boundary_trie = &trie;
  if (use_bits) {
    entry->inside.bits = std::move(bits);
  } else {
    std::sort(inside.begin(), inside.end());
    entry->inside.ids = std::move(inside);
  }
  if (boundaries.size() <= max_boundary_nodes) {
    entry->boundary_nodes = std::move(boundaries);
  } else {
    entry->suffix_groups = std::make_unique<const SuffixGroups>(trie, boundaries);
  }
  return entry;
}

}  // namespace tokensieve::detail
