// Counted terminals: prefix item{min,max} suffix, for a prefix-free regular item, run as one
// small automaton plus a counter instead of an automaton with `max` copies of the item; and
// their generalization, a counted automaton (see the second constructor).
//
// Why: a JSON string with maxLength 8192 is `"` + one character class repeated up to 8192
// times + `"`. As a DFA that is ~100k states (too large), and as a chain of parser rules it
// makes Earley sets grow with the position in the string. With a counter the automaton stays
// the size of its pieces, and the token index (token_index.hpp) is shared by every count far
// from the bounds. The quotes belong to the terminal so that it cannot end at every character:
// tokens inside the string are then "inside" tokens, taken from the index in one OR.
//
// The *loop automaton* D has four phases of states:
//   prefix    the prefix's non-accepting states (none without a prefix);
//   boundary  one state B, "between items": the prefix's accepting states and every item edge
//             into an accepting item state lead to B, the latter with a *tick*;
//   item      the item's non-accepting states; B has the item start's edges;
//   suffix    the suffix's states; B also has the suffix start's edges, and accepts when the
//             suffix is nullable (no suffix: B always accepts).
// D is deterministic when the prefix and the item are prefix-free (no word is a proper prefix
// of another) and the item and the suffix never start with the same byte; the constructor
// checks this. Then where each item ends is never in doubt and the count is a function of the
// bytes read.
//
// A terminal state is n * D.num_states() + d: d in D, n the items completed so far (with no
// upper bound, n stops at min, beyond which nothing depends on it). As for every terminal
// state the matcher keeps, the state can still finish: some number t of further ticks leads
// from d to acceptance with min <= n + t <= max (for a repetition: an item state needs
// n < max, B needs n <= max), and an edge into the suffix needs n >= min.
//
// The tick counts that finish from d are known exactly: every count from some point on, or
// none from some point on (horizon U), and an explicit set below that. For a repetition that
// is "every count from 0" (B) or "from 1" (an item state), U = 1; a counted automaton (second
// constructor) has its own, from the layers R_k of unit states that finish in exactly k units.
//
// Token index: a token has at most L bytes (the vocabulary's longest), so at most L ticks. What
// a state allows depends on n only through its gaps to the bounds, min - n and max - n, and
// gaps past L + U are all alike. States with n >= min and max - n > L + U, and all suffix
// states, behave exactly as D and share D's own index; the others get entries keyed by
// (d, clamped gaps), built on first use; at B, when every character of the token slice
// (token_index.hpp) is one item, the slice's tokens of at most max - n characters are inside
// at once and only the rest of the vocabulary is walked.
#pragma once
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "tokensieve/dfa.hpp"
#include "tokensieve/token_index.hpp"
#include "tokensieve/token_trie.hpp"

namespace tokensieve {

class CountedTerminal {
 public:
  static constexpr int32_t kDead = Dfa::kDead;
  static constexpr int32_t kUnbounded = -1;

  // `prefix` and `suffix` may be null (the empty string). Throws Error(InvalidArgument) when the
  // pieces do not make a deterministic loop (see above) or the bounds are bad;
  // Error(LimitExceeded, "max_dfa_states") when states would overflow int32.
  CountedTerminal(const Dfa* prefix, const Dfa& item, int32_t min, int32_t max, const Dfa* suffix,
                  std::shared_ptr<const Vocabulary> vocab, std::shared_ptr<const TokenSlice> slice = nullptr,
                  size_t max_boundary_nodes = DfaTokenIndex::kMaxBoundaryNodes);

  // One edge of a counted automaton: from unit state `from` to `to`, reading one unit of `label`.
  struct UnitEdge {
    int32_t from;
    int32_t to;
    const Dfa* label;
  };
  // A *counted automaton* (ir.CountedAutomaton): `prefix`, then a path from unit state 0 to an
  // accepting unit state that takes min..max edges ("units": a JSON string's characters, each
  // in every spelling), then `suffix`. Each unit state q becomes a boundary state B_q; the bytes
  // of one unit are read in item states that run the labels leaving q side by side, and the edge
  // that completes a unit ticks into B_to. A pattern with a maxLength needs no automaton with a
  // state per count this way. Throws Error(InvalidArgument) unless the labels leaving each state
  // are prefix-free and match disjoint words, every unit state can reach an accepting one, and
  // the lengths that finish from each unit state are all lengths from some least one on
  // ("length-monotone", so the gaps to the bounds decide everything, as for a repetition).
  CountedTerminal(const Dfa* prefix, int32_t num_units, const std::vector<uint8_t>& unit_accepting,
                  const std::vector<UnitEdge>& edges, int32_t min, int32_t max, const Dfa* suffix,
                  std::shared_ptr<const Vocabulary> vocab, std::shared_ptr<const TokenSlice> slice = nullptr,
                  size_t max_boundary_nodes = DfaTokenIndex::kMaxBoundaryNodes);

  int32_t start() const { return loop_->start(); }  // n = 0
  int32_t next(int32_t state, uint8_t byte) const;
  bool accepting(int32_t state) const;
  bool has_successor(int32_t state) const;
  bool nullable() const { return accepting(start()); }
  // True when no word has a count within the bounds (a counted automaton can be empty).
  bool empty() const { return empty_; }
  // The token index entry of `state` (built on first use; thread-safe).
  std::shared_ptr<const StateTokens> tokens(int32_t state) const;
  // A key equal for two states exactly when their index entries are the same (for mask-cache
  // signatures), or `state` itself when keys would not fit in 32 bits.
  uint32_t index_key(int32_t state) const;

  const std::shared_ptr<const Dfa>& loop_ptr() const { return loop_; }
  int32_t min() const { return min_; }
  int32_t max() const { return max_; }
  size_t memory_bytes() const;

 private:
  enum Phase : uint8_t { kPrefix, kBoundary, kItem, kSuffix };
  struct GapWalk;  // the automaton over (d, min gap, max gap) that near entries are built with

  int32_t loop_state(int32_t state) const { return state % num_loop_states_; }
  int32_t count(int32_t state) const { return state / num_loop_states_; }
  bool ticks(int32_t d, uint8_t byte) const {
    return tick_[static_cast<size_t>(d) * loop_->num_classes() + loop_->class_of(byte)] != 0;
  }
  // Whether the edge d -> d2 is allowed with these gaps (after the edge's tick).
  bool edge_allowed(int32_t d, int32_t d2, int32_t min_gap, int32_t max_gap) const {
    if (phase_[d] != kSuffix && phase_[d2] == kSuffix && min_gap > 0) return false;  // too few items
    if (phase_[d2] == kItem || phase_[d2] == kBoundary) return finishes(d2, min_gap, max_gap);
    return true;
  }
  // Whether some number of ticks t in [min_gap, max_gap] leads from d to an accepting state.
  bool finishes(int32_t d, int32_t min_gap, int32_t max_gap) const;
  // Gaps to min and max, clamped: min gap at most L + U, max gap at most L + U + 1 ("far"),
  // where every tick count of U or more that finishes from a state is one of an unbroken run
  // to infinity: within one token (at most L ticks), clamped gaps decide what exact ones do.
  int32_t min_gap(int32_t n) const;
  int32_t max_gap(int32_t n) const;
  int32_t far_max_gap() const { return longest_token_ + horizon_ + 1; }
  bool far(int32_t d, int32_t n) const {
    return phase_[d] == kSuffix || (min_gap(n) == 0 && max_gap(n) == far_max_gap());
  }
  // Everything after the loop automaton's states, phases, ticks and finishing counts are known.
  void finish_loop(std::vector<uint8_t> class_of, std::vector<uint8_t> representative, std::vector<int32_t> trans,
                   std::vector<uint8_t> accepting, int32_t start, std::shared_ptr<const TokenSlice> slice);
  void check_bounds() const;

  std::shared_ptr<const Dfa> loop_;
  std::vector<uint8_t> tick_;   // per (loop state, byte class)
  std::vector<Phase> phase_;    // per loop state
  // The tick counts that finish from each loop state: every count from cofinite_[d] on
  // (kNever: none from some count on), and below that the ones whose bit is set in
  // short_[d * (horizon_ + 1) + t]. horizon_ (U) bounds the cofinite starts that are finite.
  static constexpr int32_t kNever = std::numeric_limits<int32_t>::max();
  std::vector<int32_t> cofinite_;
  std::vector<uint8_t> short_;
  int32_t horizon_ = 1;
  bool empty_ = false;
  std::vector<uint8_t> representative_;  // one byte per class of the loop automaton
  int32_t boundary_ = 0;        // B (the slice shortcut's state), kDead for a counted automaton
  bool boundary_exits_ = false;  // B has an edge into the suffix
  int32_t num_loop_states_ = 1;
  int32_t min_ = 0;
  int32_t max_ = kUnbounded;
  size_t max_boundary_nodes_;
  int32_t longest_token_ = 0;  // L
  std::shared_ptr<const Vocabulary> vocab_;
  std::shared_ptr<const DfaTokenIndex> far_;  // D's own index, for every state far from the bounds
  std::shared_ptr<const TokenSlice> slice_;
  // Whether the slice's characters each read as one item from B (a JSON string character):
  // then near entries at B take the slice's tokens by their character count, not by a walk.
  bool slice_counts_items_ = false;
  bool check_slice_counts_items() const;
  // TokenSlice::char_horizon from loop state d with these gaps, for strings of the slice that
  // never tick (inside one item: a JSON string in an array of strings); -1 when not known.
  int32_t slice_chars(int32_t d, int32_t min_gap, int32_t max_gap) const;
  mutable std::mutex mutex_;
  mutable std::unordered_map<uint64_t, std::shared_ptr<const StateTokens>> near_;
};

}  // namespace tokensieve
