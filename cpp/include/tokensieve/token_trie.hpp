// The vocabulary as a byte trie in preorder, the structure every mask computation walks.
//
// Nodes are stored in depth-first preorder, so "skip this whole subtree" is a jump to
// `subtree_end(node)`: a walk prunes every token that shares a dead prefix in O(1).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tokensieve {

class TokenTrie {
 public:
  // `tokens[i]` are the bytes of token i; tokens with `include[i] == 0` or no bytes are left out
  // (special tokens never match grammar text).
  TokenTrie(const std::vector<std::string>& tokens, const std::vector<uint8_t>& include);
  // A trie of arbitrary (bytes, token id) entries, e.g. token suffixes; empty strings are skipped.
  explicit TokenTrie(std::vector<std::pair<std::string, uint32_t>> entries);
  // The trie of the union of `roots`' subtrees in `source`, each read from its root's byte on
  // (root r's tokens become entries of their bytes after depth(r) - 1): the same trie the
  // entries constructor makes from those suffixes, merged node by node without copying them.
  TokenTrie(const TokenTrie& source, const std::vector<uint32_t>& roots);
  TokenTrie();

  // Node 0 is the root (no byte); nodes 1..num_nodes()-1 carry one byte each.
  uint32_t num_nodes() const { return static_cast<uint32_t>(byte_.size()); }
  uint8_t byte(uint32_t node) const { return byte_[node]; }
  uint32_t depth(uint32_t node) const { return depth_[node]; }
  // One past the last node of `node`'s subtree.
  uint32_t subtree_end(uint32_t node) const { return subtree_end_[node]; }
  // Token ids whose bytes end exactly at `node`.
  const uint32_t* tokens_begin(uint32_t node) const { return token_ids_.data() + token_start_[node]; }
  const uint32_t* tokens_end(uint32_t node) const { return token_ids_.data() + token_start_[node + 1]; }
  // Number of tokens in the subtree strictly below `node`.
  uint32_t tokens_below(uint32_t node) const { return token_start_[subtree_end_[node]] - token_start_[node + 1]; }
  uint32_t max_depth() const { return max_depth_; }
  size_t memory_bytes() const;

 private:
  std::vector<uint8_t> byte_;
  std::vector<uint32_t> depth_;
  std::vector<uint32_t> subtree_end_;
  std::vector<uint32_t> token_start_;  // num_nodes + 1 offsets into token_ids_
  std::vector<uint32_t> token_ids_;
  uint32_t max_depth_ = 0;

  void build(const std::vector<std::pair<const std::string*, uint32_t>>& sorted_entries);
  void build_sorted(std::vector<std::pair<std::string, uint32_t>>& sorted_entries);
};

// Token bytes, which ids are special, and the trie over the others. Immutable once built.
class Vocabulary {
 public:
  Vocabulary(std::vector<std::string> tokens, std::vector<uint8_t> is_special, std::vector<uint32_t> eos_ids);

  uint32_t size() const { return static_cast<uint32_t>(tokens_.size()); }
  const std::string& token(uint32_t id) const { return tokens_[id]; }
  bool is_special(uint32_t id) const { return is_special_[id] != 0; }
  const std::vector<uint32_t>& eos_ids() const { return eos_ids_; }
  const TokenTrie& trie() const { return trie_; }
  size_t memory_bytes() const;

 private:
  std::vector<std::string> tokens_;
  std::vector<uint8_t> is_special_;
  std::vector<uint32_t> eos_ids_;
  TokenTrie trie_;
};

}  // namespace tokensieve
