// Byte-level deterministic automata for the regular parts of a grammar ("terminals").
//
// A terminal arrives from Python as a *regex program*: the regex AST in prefix order,
// flattened into int32 words (see RegexOp). build_dfa() turns it into a trimmed DFA
// over byte equivalence classes: every live state can still reach an accepting state,
// so "not dead" means "a viable prefix of the terminal".
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tokensieve/scratch_allocator.hpp"

namespace tokensieve {

// Prefix encoding of the regex AST:
//   OP_BYTES n lo_1 hi_1 ... lo_n hi_n   one byte in the union of inclusive ranges
//   OP_SEQ n child_1 ... child_n         concatenation (n = 0: the empty string)
//   OP_ALT n child_1 ... child_n         alternation  (n = 0: the empty language)
//   OP_REPEAT min max child              repetition, max = -1 for unbounded
//   OP_AUTOMATON n  (accept_s k_s target_1 .. target_k)  for s = 0..n-1,  then one OP_BYTES
//                                        label per edge, in the same order: a finite automaton
//                                        (state 0 starts) given directly, e.g. a set complement
//                                        that has no small regular expression
//   OP_DIFFERENCE left right             the strings of `left` that are not in `right`: both
//                                        are determinized, their product becomes an automaton
enum RegexOp : int32_t { OP_BYTES = 0, OP_SEQ = 1, OP_ALT = 2, OP_REPEAT = 3, OP_AUTOMATON = 4, OP_DIFFERENCE = 5 };

struct DfaLimits {
  int64_t max_nfa_states = 2'000'000;  // Thompson NFA size (bounded repeats are unrolled)
  int32_t max_dfa_states = 200'000;    // states after subset construction
};

class Dfa {
 public:
  static constexpr int32_t kDead = -1;

  // Start state, or kDead when the language is empty.
  int32_t start() const { return start_; }
  // Next state on `byte`, or kDead.
  int32_t next(int32_t state, uint8_t byte) const {
    return trans_[static_cast<size_t>(state) * num_classes_ + class_of_[byte]];
  }
  bool accepting(int32_t state) const { return accepting_[state] != 0; }
  // True when the empty string is in the language.
  bool nullable() const { return start_ != kDead && accepting(start_); }
  // True when some non-empty string leads from `state` (the state has a live edge).
  bool has_successor(int32_t state) const { return has_successor_[state] != 0; }
  int32_t num_states() const { return static_cast<int32_t>(accepting_.size()); }
  int32_t num_classes() const { return num_classes_; }
  // The byte class of `byte`: bytes of one class have the same edges everywhere.
  uint8_t class_of(uint8_t byte) const { return class_of_[byte]; }
  size_t memory_bytes() const;

  // Raw construction, checked: throws InvalidArgument when the parts do not make a DFA.
  Dfa(int32_t num_classes, std::vector<uint8_t> class_of, std::vector<int32_t> trans,
      std::vector<uint8_t> accepting, int32_t start);
  // The same without the checks, for builders that make valid parts by construction
  // (build_dfa): checking every transition cost a tenth of building a property name's DFA.
  struct Unchecked {};
  Dfa(Unchecked, int32_t num_classes, std::vector<uint8_t> class_of, std::vector<int32_t> trans,
      std::vector<uint8_t> accepting, int32_t start);
  Dfa() = default;

 private:
  void find_successors();  // fills has_successor_

  int32_t num_classes_ = 1;
  std::vector<uint8_t> class_of_ = std::vector<uint8_t>(256, 0);
  std::vector<int32_t> trans_;        // num_states * num_classes, kDead for no edge
  std::vector<uint8_t> accepting_;
  std::vector<uint8_t> has_successor_;
  int32_t start_ = kDead;
};

// Builds a trimmed, minimized DFA. Throws tokensieve::Error:
//   InvalidArgument for a malformed program, LimitExceeded (limit "max_nfa_states" or
//   "max_dfa_states") when the automaton would be too large.
// An empty language gives a Dfa whose start() is kDead (not an error here).
Dfa build_dfa(const int32_t* program, size_t length, const DfaLimits& limits = {});

// One past the last word of the expression that starts at word `start` of `program` (say, to
// take the operands of an OP_DIFFERENCE apart). Throws InvalidArgument for a malformed program
// or when no expression starts at `start`.
size_t program_node_end(const int32_t* program, size_t length, size_t start);

// ---------------------------------------------------------------------------------------------
// Products of DFAs (dfa_product.cpp)
// ---------------------------------------------------------------------------------------------

// Which pairs of a product accept: both sides (intersection), either (union), or the left
// one and not the right (difference).
enum class ProductOp { And, Or, Minus };

// L(left) op L(right) as the product of the two DFAs (reachable pairs only, not trimmed or
// minimized), over their joint byte classes: bytes in one class of both DFAs. A side that can
// no longer match is kDead in the pair; a pair is explored only while it can still accept
// (And: both sides live; Or: either; Minus: the left one).
// Its rows are working vectors (scratch_allocator.hpp): a product is finished or encoded, not kept.
struct ProductAutomaton {
  std::vector<uint8_t> class_of;                 // byte -> joint class
  std::vector<std::vector<int32_t>> class_ranges;  // each joint class's bytes: lo, hi pairs
  ScratchVector<uint8_t> accepting;               // per product state; state 0 starts
  std::vector<uint8_t> right_done;                // per product state: `right` can no longer match
  ScratchVector<int32_t> edge_begin{0};           // state s: edges edge_begin[s] .. [s + 1]
  ScratchVector<int32_t> edge_class, edge_target;  // in ascending class order per state
  int32_t num_classes() const { return static_cast<int32_t>(class_ranges.size()); }
  int32_t num_states() const { return static_cast<int32_t>(accepting.size()); }
};

// Throws LimitExceeded past `max_states` pairs. A language with nothing to explore (an empty
// left side of And or Minus, both sides of Or) gives zero states.
ProductAutomaton product(const Dfa& left, const Dfa& right, ProductOp op, int32_t max_states);

// L(left) \ L(right), minimal and trimmed, into `out`, when no cycle of `right` is met while
// `left` is still live (always when `right` is a finite set of strings: "any key but these
// names"); false otherwise, `out` untouched. `left` must be minimal and trimmed, as every
// built Dfa is: its states are the result's states where no name can match any more. The
// same automaton as product_dfa(left, right, Minus), without the general product and
// minimization: a pair (l, r) with `right` still live is l's row with the few classes where
// `right` goes on changed; the pairs form no cycle, so each is merged with an equivalent
// earlier state as it finishes. Throws LimitExceeded past `max_states` states reached.
bool difference_of_finite(const Dfa& left, const Dfa& right, int32_t max_states, Dfa& out);

// Appends the OP_AUTOMATON encoding of L(left) \ L(right) to `out`, for a difference nested in
// a larger program. Throws LimitExceeded past `max_states` pairs.
void append_difference(const Dfa& left, const Dfa& right, int32_t max_states, std::vector<int32_t>& out);

// Appends the OP_AUTOMATON encoding of `dfa` (state 0 starts, as in every built Dfa) to `out`:
// one edge per (state, target), labelled with the bytes that lead there; an empty language is an
// alternation of nothing. Returns the number of edges.
int64_t append_automaton(const Dfa& dfa, std::vector<int32_t>& out);

// ---------------------------------------------------------------------------------------------
// Automata over byte ranges (the JSON Schema front-end's regular operations)
// ---------------------------------------------------------------------------------------------

// An NFA with byte-range and epsilon edges, in compressed rows: state s has range edges
// edge_begin[s] .. edge_begin[s + 1] and epsilon edges eps_begin[s] .. eps_begin[s + 1].
struct RangeNfa {
  std::vector<int32_t> edge_begin{0}, lo, hi, target;
  std::vector<int32_t> eps_begin{0}, eps;
  int32_t start = 0, final = 0;  // one accepting state
  int32_t num_states() const { return static_cast<int32_t>(edge_begin.size()) - 1; }
};

// A DFA's transitions as maximal byte ranges with one target, per state (the same shape as
// RangeNfa without epsilon edges), and its accepting states.
struct RangeRows {
  std::vector<int32_t> edge_begin{0}, lo, hi, target;
  std::vector<uint8_t> accepting;
};

// The minimal DFA of `nfa` (dfa.cpp). Throws InvalidArgument for a malformed NFA and
// LimitExceeded ("max_dfa_states") past `max_states` subset-construction states.
Dfa determinize(const RangeNfa& nfa, int32_t max_states);

// The minimal DFA of a deterministic automaton given as range rows, state 0 starting (dfa.cpp).
// Throws InvalidArgument for malformed or nondeterministic (overlapping) rows.
Dfa dfa_from_ranges(const RangeRows& rows);

// L(left) op L(right), trimmed and minimized (dfa.cpp).
Dfa product_dfa(const Dfa& left, const Dfa& right, ProductOp op, int32_t max_states);

// The rows of `dfa` (dfa_product.cpp); no states for the empty language.
RangeRows to_ranges(const Dfa& dfa);

// A DFA's edges grouped by target, the shape of an IR automaton's rows: state s has groups
// group_begin[s] .. group_begin[s + 1], one per target in the order of the target's lowest byte;
// a group's bytes are range list group_set[g], whose ranges are set_begin[i] .. set_begin[i + 1]
// of set_lo/set_hi (maximal ranges, ascending). Equal range lists are one list, numbered as first
// met, so that a caller makes one byte-set object per distinct list. An empty language has one
// state, without groups and not accepting.
struct LabelGroups {
  std::vector<int32_t> group_begin{0}, group_target, group_set;
  std::vector<int32_t> set_begin{0}, set_lo, set_hi;
  std::vector<uint8_t> accepting;
  // Whether the states are numbered in the order a breadth-first walk from state 0 meets them,
  // each state's groups in order, and every state is met: then an IR automaton built from the
  // groups has the numbering a walk would give it, with no renumbering.
  bool walk_numbered = false;
};

// The groups of `dfa` (dfa_product.cpp), from its rows `rows` (to_ranges(dfa)).
LabelGroups label_groups(const RangeRows& rows);

// The minimal DFA of the numerals -?I(.F)? (I: "0" or digits without a leading zero) whose value
// is a multiple of step = modulus / 10^scale (dfa_product.cpp): a residue automaton, value mod
// modulus read digit by digit, each fraction digit position 1..scale counted, zeros only past
// it. `fraction_digits`: whether a fraction other than zeros may be written (a step with
// scale 0 admits "3.00" either way). Throws InvalidArgument for modulus < 1 or scale < 0, and
// LimitExceeded past `max_nfa_states` NFA states (a fraction state per digit position and
// residue) or `max_states` DFA states.
Dfa multiples_dfa(int32_t modulus, int32_t scale, bool fraction_digits, int64_t max_nfa_states, int32_t max_states);

}  // namespace tokensieve
