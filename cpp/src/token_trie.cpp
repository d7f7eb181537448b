#include "tokensieve/token_trie.hpp"

#include <algorithm>
#include <numeric>

#include "tokensieve/error.hpp"

namespace tokensieve {

TokenTrie::TokenTrie() { build({}); }

TokenTrie::TokenTrie(const std::vector<std::string>& tokens, const std::vector<uint8_t>& include) {
  std::vector<std::pair<const std::string*, uint32_t>> entries;
  entries.reserve(tokens.size());
  for (uint32_t i = 0; i < tokens.size(); ++i) {
    if (include[i] && !tokens[i].empty()) entries.push_back({&tokens[i], i});
  }
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return *a.first < *b.first || (*a.first == *b.first && a.second < b.second);
  });
  build(entries);
}

TokenTrie::TokenTrie(std::vector<std::pair<std::string, uint32_t>> owned) {
  std::sort(owned.begin(), owned.end());
  build_sorted(owned);
}

TokenTrie::TokenTrie(const TokenTrie& source, const std::vector<uint32_t>& roots) {
  byte_.assign(1, 0);
  depth_.assign(1, 0);
  token_start_.assign(2, 0);  // the root's tokens (none) begin and end at 0; each node adds its end
  // Depth first over the merged trie: each pending node is a run of `sources` (the source nodes
  // on its path, one per root that has it) and is emitted in preorder; its children are the
  // sources' children grouped by byte, pushed in descending byte order so that they pop
  // ascending. A source's children are in ascending byte order already (preorder of sorted
  // strings), so a node with one source needs no sort, which is nearly every node.
  struct Pending {
    uint32_t begin, end;  // its sources: sources[begin .. end)
    uint32_t depth;
  };
  std::vector<uint32_t> sources;
  std::vector<Pending> stack;
  std::vector<std::pair<uint8_t, uint32_t>> children;  // (byte, source child) of one node
  // Pushes `children` (sorted by byte when `sort`) as pending nodes of `depth`, grouped by byte,
  // the last byte first.
  auto push_groups = [&](bool sort, uint32_t depth) {
    if (sort) {
      std::stable_sort(children.begin(), children.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    for (size_t j = children.size(); j > 0;) {
      size_t i = j - 1;
      while (i > 0 && children[i - 1].first == children[j - 1].first) --i;
      const auto first = static_cast<uint32_t>(sources.size());
      for (size_t k = i; k < j; ++k) sources.push_back(children[k].second);
      stack.push_back({first, static_cast<uint32_t>(sources.size()), depth});
      j = i;
    }
  };
  // The roots, grouped by their own bytes, are the children of the merged root.
  for (uint32_t r : roots) children.emplace_back(source.byte(r), r);
  push_groups(true, 1);
  max_depth_ = 0;
  while (!stack.empty()) {
    const Pending p = stack.back();
    stack.pop_back();
    byte_.push_back(source.byte(sources[p.begin]));
    depth_.push_back(p.depth);
    max_depth_ = std::max(max_depth_, p.depth);
    const size_t ids_begin = token_ids_.size();
    children.clear();
    for (uint32_t k = p.begin; k < p.end; ++k) {
      const uint32_t n = sources[k];
      token_ids_.insert(token_ids_.end(), source.tokens_begin(n), source.tokens_end(n));
      for (uint32_t c = n + 1; c < source.subtree_end(n); c = source.subtree_end(c)) {
        children.emplace_back(source.byte(c), c);
      }
    }
    if (p.end - p.begin > 1) std::sort(token_ids_.begin() + static_cast<std::ptrdiff_t>(ids_begin), token_ids_.end());
    token_start_.push_back(static_cast<uint32_t>(token_ids_.size()));
    push_groups(p.end - p.begin > 1, p.depth + 1);
  }
  // Preorder: a node's subtree ends at the next node no deeper than it.
  subtree_end_.assign(byte_.size(), static_cast<uint32_t>(byte_.size()));
  std::vector<uint32_t> open;
  for (uint32_t n = 0; n < byte_.size(); ++n) {
    while (!open.empty() && depth_[open.back()] >= depth_[n]) {
      subtree_end_[open.back()] = n;
      open.pop_back();
    }
    open.push_back(n);
  }
}

void TokenTrie::build_sorted(std::vector<std::pair<std::string, uint32_t>>& owned) {
  owned.erase(std::unique(owned.begin(), owned.end()), owned.end());
  std::vector<std::pair<const std::string*, uint32_t>> entries;
  entries.reserve(owned.size());
  for (const auto& e : owned) {
    if (!e.first.empty()) entries.push_back({&e.first, e.second});
  }
  build(entries);
}

// Sorting the strings makes the preorder of the trie the sorted order: each string adds the
// nodes for the bytes beyond its common prefix with the previous string.
void TokenTrie::build(const std::vector<std::pair<const std::string*, uint32_t>>& entries) {
  byte_.assign(1, 0);
  depth_.assign(1, 0);
  subtree_end_.assign(1, 0);
  max_depth_ = 0;
  std::vector<uint32_t> path = {0};  // path[d] = node at depth d on the current branch
  std::vector<uint32_t> node_of_entry(entries.size());
  const std::string* prev = nullptr;
  for (size_t k = 0; k < entries.size(); ++k) {
    const std::string& s = *entries[k].first;
    size_t common = 0;
    if (prev != nullptr) {
      size_t limit = std::min(prev->size(), s.size());
      while (common < limit && (*prev)[common] == s[common]) ++common;
    }
    // Close the nodes deeper than the common prefix.
    while (path.size() > common + 1) {
      subtree_end_[path.back()] = static_cast<uint32_t>(byte_.size());
      path.pop_back();
    }
    for (size_t d = common; d < s.size(); ++d) {
      path.push_back(static_cast<uint32_t>(byte_.size()));
      byte_.push_back(static_cast<uint8_t>(s[d]));
      depth_.push_back(static_cast<uint32_t>(d + 1));
      subtree_end_.push_back(0);
    }
    max_depth_ = std::max<uint32_t>(max_depth_, static_cast<uint32_t>(s.size()));
    node_of_entry[k] = path.back();
    prev = &s;
  }
  while (!path.empty()) {
    subtree_end_[path.back()] = static_cast<uint32_t>(byte_.size());
    path.pop_back();
  }
  // Entries are already in node order because preorder == sorted order.
  token_start_.assign(byte_.size() + 1, 0);
  for (uint32_t n : node_of_entry) token_start_[n + 1]++;
  std::partial_sum(token_start_.begin(), token_start_.end(), token_start_.begin());
  token_ids_.resize(entries.size());
  std::vector<uint32_t> fill(token_start_.begin(), token_start_.end() - 1);
  for (size_t k = 0; k < entries.size(); ++k) token_ids_[fill[node_of_entry[k]]++] = entries[k].second;
}

size_t TokenTrie::memory_bytes() const {
  return byte_.capacity() + 4 * (depth_.capacity() + subtree_end_.capacity() + token_start_.capacity() +
                                 token_ids_.capacity());
}

static std::vector<uint8_t> included(const std::vector<std::string>& tokens, const std::vector<uint8_t>& special) {
  if (special.size() != tokens.size()) {
    throw Error(ErrorKind::InvalidArgument, "is_special must have one flag per token");
  }
  std::vector<uint8_t> inc(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) inc[i] = special[i] ? 0 : 1;
  return inc;
}

Vocabulary::Vocabulary(std::vector<std::string> tokens, std::vector<uint8_t> is_special, std::vector<uint32_t> eos_ids)
    : tokens_(std::move(tokens)),
      is_special_(std::move(is_special)),
      eos_ids_(std::move(eos_ids)),
      trie_(tokens_, included(tokens_, is_special_)) {
  for (uint32_t e : eos_ids_) {
    if (e >= tokens_.size()) throw Error(ErrorKind::InvalidArgument, "EOS id out of range");
  }
}

size_t Vocabulary::memory_bytes() const {
  size_t n = trie_.memory_bytes() + is_special_.capacity();
  for (const auto& t : tokens_) n += t.capacity() + sizeof(std::string);
  return n;
}

}  // namespace tokensieve
