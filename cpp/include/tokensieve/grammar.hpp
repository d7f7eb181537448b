// CompiledGrammar: terminals (byte DFAs or special tokens) + Earley productions, immutable.
//
// Symbols are int32: s >= 0 is nonterminal s, s < 0 is terminal -(s + 1).
// Productions are numbered; a *dotted rule* (production, dot position) gets a dense id so
// that an Earley item is just (dotted id, origin position). Production 0 is the augmented
// start rule S' -> S added here.
//
// An *Unordered* nonterminal (unordered.hpp) has no productions: the matcher moves through
// its dynamic states instead.
#pragma once
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "tokensieve/counted.hpp"
#include "tokensieve/dfa.hpp"
#include "tokensieve/head_index.hpp"
#include "tokensieve/mask_cache.hpp"
#include "tokensieve/memory_meter.hpp"
#include "tokensieve/token_index.hpp"
#include "tokensieve/token_trie.hpp"
#include "tokensieve/unordered.hpp"

namespace tokensieve {

// A terminal: bytes run by a DFA, bytes run by a counted loop (counted.hpp), or one special
// token. The matcher sees byte terminals through the methods below, which hide the difference.
struct Terminal {
  std::shared_ptr<const Dfa> dfa;              // null for a special-token terminal
  std::shared_ptr<const DfaTokenIndex> index;  // per-state token sets of `dfa` (shared across grammars)
  std::shared_ptr<const CountedTerminal> counted;  // set for item{min,max}: states are its states
  int32_t special_token = -1;                  // token id for a special-token terminal

  bool is_special() const { return dfa == nullptr; }
  int32_t start() const { return counted ? counted->start() : dfa->start(); }
  int32_t next(int32_t state, uint8_t byte) const { return counted ? counted->next(state, byte) : dfa->next(state, byte); }
  bool accepting(int32_t state) const { return counted ? counted->accepting(state) : dfa->accepting(state); }
  bool has_successor(int32_t state) const {
    return counted ? counted->has_successor(state) : dfa->has_successor(state);
  }
  bool nullable() const { return counted ? counted->nullable() : dfa->nullable(); }
  bool productive() const { return counted ? !counted->empty() : dfa == nullptr || dfa->start() != Dfa::kDead; }
  std::shared_ptr<const StateTokens> tokens(int32_t state) const {
    return counted ? counted->tokens(state) : index->get(state);
  }
  // Equal for two states of this terminal exactly when their masks are (mask-cache signatures).
  uint32_t index_key(int32_t state) const {
    return counted ? counted->index_key(state) : static_cast<uint32_t>(state);
  }
};

struct MatcherLimits {
  // Earley items + scans created while computing one mask; bounds the tail latency.
  int64_t max_mask_work = 50'000'000;
  // Items + scans created by one accepted token or byte string.
  int64_t max_accept_work = 5'000'000;
  // Bytes jump_forward() returns at most.
  int32_t max_jump_forward_bytes = 4096;
  // Bytes the grammar's shared mask cache (mask_cache.hpp) may hold; 0 disables it.
  int64_t mask_cache_bytes = 32 << 20;
  // Bytes the grammar's head indexes (head_index.hpp) may hold; 0 disables them.
  int64_t head_index_bytes = 32 << 20;
  // Trie subtrees of fewer nodes are walked head by head, without an index.
  int64_t min_head_index_nodes = 64;
};

class CompiledGrammar {
 public:
  static constexpr int32_t kEnd = std::numeric_limits<int32_t>::min();

  // `productions[i]` = {lhs, rhs...}. Unproductive symbols are removed; an empty language throws
  // Error(EmptyLanguage). The mask cache and head indexes report their growth to `meter`, if
  // any (memory_meter.hpp).
  CompiledGrammar(std::shared_ptr<const Vocabulary> vocab, std::vector<Terminal> terminals, int32_t num_nonterminals,
                  const std::vector<std::vector<int32_t>>& productions, int32_t start, MatcherLimits limits,
                  std::vector<UnorderedRule> unordered = {}, std::shared_ptr<MemoryMeter> meter = nullptr);

  const Vocabulary& vocab() const { return *vocab_; }
  const std::shared_ptr<const Vocabulary>& vocab_ptr() const { return vocab_; }
  const MatcherLimits& limits() const { return limits_; }
  const Terminal& terminal(int32_t t) const { return terminals_[t]; }
  int32_t num_terminals() const { return static_cast<int32_t>(terminals_.size()); }

  // Dotted rules.
  int32_t next_symbol(uint32_t dotted) const { return next_symbol_[dotted]; }
  uint32_t advance(uint32_t dotted) const { return dotted + 1; }
  int32_t lhs(uint32_t dotted) const { return lhs_[dotted]; }
  const std::vector<uint32_t>& predictions(int32_t nonterminal) const { return predictions_[nonterminal]; }
  bool nullable_nonterminal(int32_t nt) const { return nullable_[nt] != 0; }
  bool nullable_symbol(int32_t sym) const;
  uint32_t start_dotted() const { return 0; }  // S' -> . S
  uint32_t final_dotted() const { return 1; }  // S' -> S .
  // Terminal indices for a special token id (usually zero or one).
  const std::vector<int32_t>& special_terminals(uint32_t token_id) const;
  bool mentions_special(uint32_t token_id) const;
  // Index into unordered rules of an Unordered nonterminal, or -1.
  int32_t unordered_of(int32_t nonterminal) const { return unordered_of_[nonterminal]; }
  const UnorderedRule& unordered_rule(int32_t index) const { return unordered_[index]; }

  // Masks by parser-state signature, shared by this grammar's matchers (internally synchronized:
  // the one mutable part of a compiled grammar); null when disabled.
  MaskCache* mask_cache() const { return mask_cache_.get(); }
  // Head indexes (head_index.hpp) for this grammar's mask walks (internally synchronized); null
  // when disabled.
  HeadIndexCache* head_indexes() const { return head_indexes_.get(); }

  size_t memory_bytes() const;
  int32_t num_productions() const { return num_productions_; }
  int32_t num_dotted() const { return static_cast<int32_t>(next_symbol_.size()); }

 private:
  std::shared_ptr<const Vocabulary> vocab_;
  std::vector<Terminal> terminals_;
  MatcherLimits limits_;
  std::vector<int32_t> next_symbol_;            // per dotted rule: symbol after the dot, or kEnd
  std::vector<int32_t> lhs_;                    // per dotted rule
  std::vector<std::vector<uint32_t>> predictions_;  // per nonterminal: dotted ids with dot 0
  std::vector<uint8_t> nullable_;               // per nonterminal
  std::vector<std::pair<uint32_t, std::vector<int32_t>>> specials_;  // token id -> terminals
  std::vector<UnorderedRule> unordered_;
  std::vector<int32_t> unordered_of_;  // per nonterminal
  int32_t num_productions_ = 0;
  std::unique_ptr<MaskCache> mask_cache_;
  std::unique_ptr<HeadIndexCache> head_indexes_;
};

}  // namespace tokensieve
