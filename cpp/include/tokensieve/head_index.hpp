// HeadIndex: what one terminal state does through one subtree of a token trie, for mask walks
// that run scans without chart sets (Matcher::walk_scan_heads).
//
// Below a trie node where the parser holds only scans, the future of the walk is the scans'
// DFAs, grouped into a few (terminal, DFA state) *heads*. Node by node, a head either
//   - dies (the subtree below is pruned for it),
//   - stays alive and may go on: the tokens ending there are allowed whatever the parser
//     context (a live state can finish its terminal), or
//   - accepts: the terminal may end there, and a child of the node matters to the parser only
//     if its byte can begin what follows the terminal (the completion's `Follow`).
// All of this depends on the trie, the node and the head alone, so it is computed once and
// kept: the tokens where the head is alive and goes on (`inside`), the tokens where it accepts
// and cannot go on (`accept_only`, allowed when the completion is viable), and the *exits*,
// the nodes where it accepts, by the bytes of their children. A mask then costs one OR per head
// plus a parser walk below the few exits whose child byte may follow, instead of a DFA step per
// head at each of the subtree's nodes (about 100k nodes below a space in Llama-3's vocabulary,
// where an identifier runs through almost every token).
//
// Indexes are built when a walk meets their (trie node, head) the second time and kept per
// grammar (`HeadIndexCache`, thread-safe), up to a byte budget; the first time, and past the
// budget, the walk steps the heads node by node.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tokensieve/dfa.hpp"
#include "tokensieve/memory_meter.hpp"
#include "tokensieve/token_index.hpp"
#include "tokensieve/token_trie.hpp"

namespace tokensieve {

struct HeadIndex {
  TokenSet inside;       // tokens at nodes where the head is alive and has a successor
  TokenSet accept_only;  // tokens at nodes where it accepts and has no successor
  // Nodes where the head accepts and a child carries byte b: exits[exit_begin[b] .. exit_begin[b + 1]),
  // ascending (preorder).
  std::array<uint32_t, 257> exit_begin{};
  std::vector<uint32_t> exits;

  size_t memory_bytes() const {
    return sizeof(*this) + inside.memory_bytes() + accept_only.memory_bytes() + 4 * exits.capacity();
  }
};

// The index of a terminal (anything with next / accepting / has_successor over int32 states,
// Dfa::kDead for none) from `state` at `root` through `root`'s subtree of `trie` (root's own
// tokens excluded: the walk judges the root before it).
template <class Term>
HeadIndex build_head_index(const TokenTrie& trie, uint32_t root, const Term& term, int32_t state,
                           uint32_t vocab_size) {
  HeadIndex index;
  std::vector<uint32_t> inside, accept_only;
  std::vector<std::pair<uint8_t, uint32_t>> exits;  // (child byte, node), nodes ascending
  // Per depth along the current path: the head's state, the node, and whether the state accepts.
  const size_t depths = trie.max_depth() + 1;
  std::vector<int32_t> state_at(depths, Dfa::kDead);
  std::vector<uint32_t> node_at(depths, 0);
  std::vector<uint8_t> accepts_at(depths, 0);
  const uint32_t root_depth = trie.depth(root);
  state_at[root_depth] = state;
  node_at[root_depth] = root;  // not an exit (the walk judged the root): accepts_at stays 0
  for (uint32_t node = root + 1, end = trie.subtree_end(root); node < end;) {
    const uint32_t d = trie.depth(node);
    const uint8_t byte = trie.byte(node);
    if (accepts_at[d - 1]) exits.emplace_back(byte, node_at[d - 1]);  // every child of an accepting node
    const int32_t q = term.next(state_at[d - 1], byte);
    if (q == Dfa::kDead) {
      node = trie.subtree_end(node);
      continue;
    }
    const bool goes_on = term.has_successor(q), accepts = term.accepting(q);
    if (goes_on || accepts) {
      auto& into = goes_on ? inside : accept_only;
      into.insert(into.end(), trie.tokens_begin(node), trie.tokens_end(node));
    }
    if (goes_on) {  // its children come next in preorder, and record the exits
      state_at[d] = q;
      node_at[d] = node;
      accepts_at[d] = accepts ? 1 : 0;
      ++node;
      continue;
    }
    if (accepts) {  // no child continues the head: its children are exits, not visited
      for (uint32_t c = node + 1, c_end = trie.subtree_end(node); c < c_end; c = trie.subtree_end(c)) {
        exits.emplace_back(trie.byte(c), node);
      }
    }
    node = trie.subtree_end(node);
  }
  index.inside.assign(std::move(inside), vocab_size);
  index.accept_only.assign(std::move(accept_only), vocab_size);
  // Counting sort by byte; each byte's nodes keep their (ascending) order.
  for (const auto& e : exits) ++index.exit_begin[e.first + 1u];
  for (size_t b = 0; b < 256; ++b) index.exit_begin[b + 1] += index.exit_begin[b];
  index.exits.resize(exits.size());
  std::array<uint32_t, 256> fill;
  std::copy(index.exit_begin.begin(), index.exit_begin.end() - 1, fill.begin());
  for (const auto& e : exits) index.exits[fill[e.first]++] = e.second;
  return index;
}

// One grammar's head indexes by (trie, subtree root, terminal, DFA state). The grammar keeps
// every trie a walk may use alive (its terminals own them), so a trie's address is a stable key.
class HeadIndexCache {
 public:
  // Every change of its size is reported to `meter`, if any (memory_meter.hpp).
  explicit HeadIndexCache(size_t max_bytes, std::shared_ptr<MemoryMeter> meter = nullptr)
      : max_bytes_(max_bytes), bytes_(std::move(meter)) {}

  struct Key {
    const TokenTrie* trie;
    uint32_t root;
    int32_t terminal;
    int32_t state;
    bool operator==(const Key& o) const {
      return trie == o.trie && root == o.root && terminal == o.terminal && state == o.state;
    }
  };

  // The index under `key`, built by `build()` (outside the lock) when the key is asked for the
  // second time; null the first time (a walk that never comes back costs no build, and the
  // first mask below a node, which builds token-index entries and suffix groups already, does
  // not build indexes on top) and when the cache is full (the caller walks without one).
  template <class Build>
  std::shared_ptr<const HeadIndex> get(const Key& key, Build&& build) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto it = indexes_.find(key);
      if (it != indexes_.end()) return it->second;
      if (bytes_.value() >= max_bytes_) return nullptr;
      if (met_once_.insert(key).second) {
        bytes_.add(kMetBytes);
        return nullptr;
      }
    }
    auto built = std::make_shared<const HeadIndex>(build());
    std::lock_guard<std::mutex> lock(mutex_);
    const auto [it, added] = indexes_.try_emplace(key, built);
    if (added) bytes_.add(built->memory_bytes());
    return it->second;
  }

  size_t memory_bytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return sizeof(*this) + bytes_.value();
  }

 private:
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  static constexpr size_t kMetBytes = sizeof(Key) + 16;  // a node of met_once_, roughly
  mutable std::mutex mutex_;
  size_t max_bytes_;
  MeteredBytes bytes_;
  std::unordered_set<Key, KeyHash> met_once_;
  std::unordered_map<Key, std::shared_ptr<const HeadIndex>, KeyHash> indexes_;
};

}  // namespace tokensieve
