// Unordered: items in any order, each at most once (JSON object members in any order).
//
// The IR node `Unordered` (src/tokensieve/ir.py) would need one grammar rule per subset of
// items written so far (2^n). Instead its nonterminal has no productions: the matcher keeps
// *dynamic items* whose state is (set of items written, count, phase), interned in a
// per-matcher UnorderedTable, and this header says how they move:
//
//   before (nothing written yet, or a separator just read):
//       predicts each item i not yet written (and the repeatable item), when the state
//       after it can still finish; completing item i moves to after(S + {i}, count + 1)
//   after (an item just written):
//       may finish the nonterminal when every required item is written and count >= min;
//       predicts the separator when some item may still follow; completing it moves to
//       before(S, count)
//
// "Can still finish" is exact, so the matcher's invariant holds: every scan it keeps can be
// completed to a sentence. The items, the repeatable item and the separator must not
// derive the empty string (CompiledGrammar checks), so a dynamic item never completes at
// its own origin.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tokensieve {

class CompiledGrammar;

// One Unordered nonterminal, as the compiler describes it (immutable once the grammar is built).
struct UnorderedRule {
  int32_t nonterminal = -1;
  int32_t separator = -1;
  int32_t repeatable = -1;  // -1: none
  int32_t min_count = 0;
  int32_t max_count = -1;  // -1: unbounded
  std::vector<int32_t> items;
  std::vector<uint64_t> required;  // bitset over items

  // Filled by CompiledGrammar once productivity is known.
  std::vector<uint64_t> usable;  // productive items
  bool repeatable_usable = false;
  int32_t effective_max = -1;   // max_count, or 1 when the separator is unproductive; -1 unbounded
  uint32_t count_cap = 0;       // counts above this behave alike (0: counts do not matter)
  std::vector<std::pair<int32_t, int32_t>> item_of_symbol;  // sorted (nonterminal, item index)

  size_t words() const { return (items.size() + 63) / 64; }
  // The rule derives some string (given which items are productive).
  bool productive() const;
};

// The dynamic states of one matcher. Ids are dense and stable; rollback never removes any.
//
// A state's moves are a function of the state and the grammar alone, and a mask asks for the
// same few again and again (each byte of each boundary token completes the same members), so
// each move is worked out once and remembered: a state's expected symbols, where completing a
// symbol leads, and each rule's start state. (Whether a state may finish is two popcounts.)
class UnorderedTable {
 public:
  static constexpr uint32_t kUnknown = UINT32_MAX;
  struct State {
    int32_t rule;    // index into CompiledGrammar::unordered_rules()
    bool after;      // an item was just written (vs. before the next item)
    uint32_t count;  // items written, capped at the rule's count_cap
    uint32_t bits;   // offset of the written-items bitset in bits_
    // Remembered moves: the expected symbols (expected_[first_expected, +num_expected)),
    // kUnknown until first asked for.
    uint32_t first_expected = kUnknown;
    uint32_t num_expected = 0;
  };

  // The state before the first item.
  uint32_t start(const CompiledGrammar& g, int32_t rule);
  const State& state(uint32_t id) const { return states_[id]; }
  // The state's content as bytes (the same in every matcher; ids are per matcher).
  std::string key(const CompiledGrammar& g, uint32_t id) const;

  // `after` states: may the nonterminal end here?
  bool can_finish(const CompiledGrammar& g, uint32_t id) const;
  // Symbols a state waits on: allowed items (and the repeatable one) before, or the separator
  // after when another item may follow.
  void expected(const CompiledGrammar& g, uint32_t id, std::vector<int32_t>& out);
  // States reached when the nonterminal `sym`, which `id` waits on, is completed.
  void advance(const CompiledGrammar& g, uint32_t id, int32_t sym, std::vector<uint32_t>& out);

 private:
  uint32_t intern(int32_t rule, bool after, uint32_t count, const uint64_t* bits, size_t words);
  // Whether a state with these written items and count can still reach a finished one.
  bool viable(const UnorderedRule& r, const uint64_t* bits, uint32_t count) const;
  // Items a written-items bitset still lacks: required ones, and usable ones.
  struct Missing {
    int64_t required = 0;
    int64_t usable = 0;
  };
  Missing missing(const UnorderedRule& r, const uint64_t* bits) const;
  // Whether item i may be written next (`m`: what `bits` lacks).
  bool item_allowed(const UnorderedRule& r, const uint64_t* bits, uint32_t count, size_t i, const Missing& m) const;
  bool repeatable_allowed(const UnorderedRule& r, const uint64_t* bits, uint32_t count) const;
  uint32_t next_count(const UnorderedRule& r, uint32_t count) const;
  // The moves themselves, worked out (expected() and advance() remember them).
  void compute_expected(const CompiledGrammar& g, uint32_t id, std::vector<int32_t>& out) const;
  void compute_advance(const CompiledGrammar& g, uint32_t id, int32_t sym, std::vector<uint32_t>& out);

  std::vector<State> states_;
  std::vector<uint64_t> bits_;
  std::vector<uint64_t> hashes_;  // per state
  std::vector<uint32_t> slots_;   // open addressing over hashes_: state ids, kUnknown when empty
  std::vector<uint64_t> scratch_;
  std::vector<int32_t> expected_;            // every state's expected symbols, back to back
  std::vector<uint32_t> start_of_rule_;      // interned start state per rule, or kUnknown
  // (state << 32 | symbol) -> advance_targets_[first, first + count)
  std::unordered_map<uint64_t, std::pair<uint32_t, uint32_t>> advanced_;
  std::vector<uint32_t> advance_targets_;
};

}  // namespace tokensieve
