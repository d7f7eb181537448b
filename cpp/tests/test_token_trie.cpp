// Native tests of TokenTrie's subtree merge (the suffix groups' tries): on random vocabularies
// and random sets of roots, the merged trie equals the one built from the suffix strings.
// Run with cpp/tests/run.sh.
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "check.hpp"
#include "tokensieve/token_trie.hpp"

using tokensieve::TokenTrie;

namespace {

bool same_trie(const TokenTrie& a, const TokenTrie& b) {
  if (a.num_nodes() != b.num_nodes() || a.max_depth() != b.max_depth()) return false;
  for (uint32_t n = 0; n < a.num_nodes(); ++n) {
    if (n > 0 && (a.byte(n) != b.byte(n) || a.depth(n) != b.depth(n))) return false;
    if (a.subtree_end(n) != b.subtree_end(n)) return false;
    if (std::vector<uint32_t>(a.tokens_begin(n), a.tokens_end(n)) !=
        std::vector<uint32_t>(b.tokens_begin(n), b.tokens_end(n))) {
      return false;
    }
  }
  return true;
}

// The suffixes of every token below each root, read from the root's byte on.
TokenTrie from_suffixes(const TokenTrie& trie, const std::vector<std::string>& tokens, const std::vector<uint32_t>& roots) {
  std::vector<std::pair<std::string, uint32_t>> entries;
  for (uint32_t r : roots) {
    for (uint32_t m = r; m < trie.subtree_end(r); ++m) {
      for (const uint32_t* t = trie.tokens_begin(m); t != trie.tokens_end(m); ++t) {
        entries.emplace_back(tokens[*t].substr(trie.depth(r) - 1), *t);
      }
    }
  }
  return TokenTrie(std::move(entries));
}

void test_random_merges() {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    const std::string alphabet = round % 3 == 0 ? std::string("ab") : std::string("ab \xff\x01", 5);
    std::vector<std::string> tokens;
    const int num_tokens = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < num_tokens; ++i) {
      std::string t;
      const int len = 1 + static_cast<int>(rng() % 6);
      for (int k = 0; k < len; ++k) t.push_back(alphabet[rng() % alphabet.size()]);
      tokens.push_back(t);  // duplicates too: two ids with one string
    }
    const TokenTrie trie(tokens, std::vector<uint8_t>(tokens.size(), 1));
    // Roots: random non-root nodes, distinct, possibly nested, possibly of different bytes.
    std::vector<uint32_t> roots;
    for (uint32_t n = 1; n < trie.num_nodes(); ++n) {
      if (rng() % 3 == 0) roots.push_back(n);
    }
    CHECK(same_trie(TokenTrie(trie, roots), from_suffixes(trie, tokens, roots)));
  }
}

void test_no_roots() {
  const std::vector<std::string> tokens = {"a", "ab"};
  const TokenTrie trie(tokens, std::vector<uint8_t>(tokens.size(), 1));
  const TokenTrie merged(trie, {});
  CHECK(merged.num_nodes() == 1);
  CHECK(merged.subtree_end(0) == 1);
  CHECK(merged.tokens_begin(0) == merged.tokens_end(0));
}

}  // namespace

int main() {
  test_random_merges();
  test_no_roots();
  std::printf("token trie: %d passed, %d failed\n", check::passed, check::failed);
  return check::failed == 0 ? 0 : 1;
}
