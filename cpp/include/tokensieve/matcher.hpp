// Matcher: the parse state of one sequence, and the token masks it allows.
//
// The state is an Earley chart over bytes. Each chart position (a "set") holds
//   - items: (dotted rule, origin position) pairs, and
//   - scans: items waiting on a terminal, with the terminal's DFA state so far.
// A byte advances every scan through its DFA; a scan reaching an accepting state completes
// its terminal (the item moves past it) and the usual predict/complete closure runs. The
// terminal may also go on: terminals end wherever they may, not greedily, so the language
// is exactly the grammar's.
//
// A position is viable iff it holds a scan (more input possible) or the completed start
// item (EOS allowed): DFA states are trimmed and every nonterminal is productive, so any
// scan can still be completed to a full sentence.
//
// Masks: for each scan (terminal t at DFA state q) the tokens that stay inside t come from
// the per-state index (token_index.hpp) in one OR; the tokens that end t part-way are judged
// by completing t once and walking the small tries of their suffixes (only the groups whose
// first byte the parser allows after t), one chart set per byte,
// popping on the way back; a dead byte prunes the whole subtree.
//
// Inside a walk, a byte that ends a terminal part-way (an identifier may end after every
// letter) would run the full completion closure at every trie node. The closure of the same
// completed items is the same wherever it runs, so the walk remembers, per completed item set,
// the bytes that can start what follows them (`Follow`); a node none of whose children begins
// with such a byte keeps only its continuing scans and skips the closure (exact: no parse
// through that node uses the completion).
//
// Unordered nonterminals (unordered.hpp) add *dynamic items*: their dotted id is
// num_dotted() + an UnorderedTable state id, and closure() moves them by the table's rules.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tokensieve/grammar.hpp"
#include "tokensieve/stamped_table.hpp"

namespace tokensieve {

class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const CompiledGrammar> grammar);
  Matcher(const Matcher&) = default;  // fork: an independent copy of the whole state
  Matcher& operator=(const Matcher&) = default;

  // Fills one bitmask row (bit i of word i/32 set = token i allowed). `num_words` must cover the
  // vocabulary; extra words are cleared. Throws NoTokenAllowed when nothing at all is allowed.
  void fill_mask(uint32_t* words, size_t num_words);
  // Accepts one token; false (state unchanged) when it is not allowed.
  bool accept_token(uint32_t token_id);
  // Accepts raw bytes (all or nothing); counts as one history entry for rollback.
  bool accept_bytes(const std::string& bytes);
  // Bytes the grammar forces next (state unchanged).
  std::string jump_forward();
  void rollback(size_t num_entries);
  void reset();

  bool is_accepting() const { return !terminated_ && sets_.back().accepting; }
  bool is_terminated() const { return terminated_; }
  // True when more bytes or grammar special tokens may follow.
  bool can_continue() const { return !terminated_ && scans_.size() > sets_.back().scans_begin; }
  size_t num_history() const { return history_.size(); }
  size_t num_bytes() const { return sets_.size() - 1; }
  // Size of the current chart position (diagnostics: how much parser state a mask walks from).
  size_t top_items() const { return items_.size() - sets_.back().items_begin; }
  size_t top_scans() const { return scans_.size() - sets_.back().scans_begin; }
  // Per scan of the current position: terminal, DFA state, inside tokens, suffix-trie nodes.
  std::vector<std::vector<int64_t>> describe_scans() const;
  const CompiledGrammar& grammar() const { return *grammar_; }

 private:
  struct Scan {
    uint32_t dotted;
    uint32_t origin;
    int32_t state;     // DFA state, or -1 for a special-token terminal
    int32_t terminal;
  };
  struct Set {
    uint32_t items_begin;
    uint32_t scans_begin;
    bool accepting;
    uint64_t signature;  // mask_cache.hpp; 0 until computed
    uint64_t serial;     // unique per pushed set: tells a reused position apart in walk memos
  };
  // What the completion of a set of items (by dotted rule and origin) brings at any position:
  // the bytes its closure's new scans accept first, and whether it is viable on its own
  // (always, in a trimmed grammar; kept rather than assumed).
  struct Follow {
    std::array<uint64_t, 4> first_bytes{};
    bool viable = false;
    bool has(uint8_t byte) const { return (first_bytes[byte >> 6] >> (byte & 63)) & 1; }
  };
  // One mask's Follow memo: keyed by the completed items with their origin sets' serials, plus
  // the last lookup (its items as scanned, their serials and its entry; entries of an
  // unordered_map keep their address). A copy of a matcher starts with an empty memo.
  struct FollowMemo {
    std::unordered_map<std::string, Follow> by_key;
    std::string key;
    std::vector<uint64_t> last_completed;
    std::vector<uint64_t> last_serials;
    const Follow* last = nullptr;
    size_t key_bytes = 0;  // of the keys in by_key

    FollowMemo() = default;
    FollowMemo(const FollowMemo&) {}
    FollowMemo& operator=(const FollowMemo&) {
      clear();
      return *this;
    }
    void clear() {
      by_key.clear();
      last = nullptr;
      key_bytes = 0;
    }
  };
  struct HistoryEntry {
    uint32_t num_sets;  // chart size before the entry
    bool eos;
  };
  // The items of a finished set by the symbol they wait on, built when a completion first
  // reaches a large set: completing otherwise scans every item of the origin set, and a
  // left-linear rule system (a long pattern string) predicts thousands of them at its start.
  struct WaitIndex {
    std::vector<std::pair<int32_t, uint32_t>> waiting;  // (next symbol, item position), sorted
    std::vector<std::pair<int32_t, uint32_t>> dynamic;  // (a symbol the item expects, position), sorted
    // Where a symbol's items lie in `waiting` and `dynamic`: an open-addressing table (a
    // completion looks its symbol up once per chart set it reaches, and most symbols are absent).
    struct Entry {
      int32_t symbol = kNoSymbol;
      uint32_t waiting_begin = 0, waiting_end = 0, dynamic_begin = 0, dynamic_end = 0;
    };
    static constexpr int32_t kNoSymbol = INT32_MIN;
    std::vector<Entry> table;  // size a power of two, at most half full
    const Entry* find(int32_t symbol) const;
    Entry& slot(int32_t symbol);
  };
  // Sets with at least this many items get a WaitIndex.
  static constexpr size_t kIndexedSetItems = 48;
  // dedupe_scans compares pairs up to this many scans, and hashes beyond.
  static constexpr size_t kFewScans = 8;
  // A walk remembers the Follow of completions of at most this many items, in keys of at most
  // this many bytes per mask (past it, completions are closed as they come).
  static constexpr size_t kMaxFollowItems = 4096;
  static constexpr size_t kMaxFollowKeyBytes = size_t{4} << 20;
  // walk_scan_heads runs at most this many distinct (terminal, DFA state) scan heads, below
  // nodes with more than this many trie nodes under them (the usual walk costs less below).
  static constexpr size_t kMaxWalkHeads = 16;
  static constexpr uint32_t kMinHeadsSubtree = 8;
  // walk_scan_heads' scratch, one frame per nesting level (it may run again below a node).
  struct HeadsFrame {
    std::vector<std::pair<int32_t, int32_t>> heads;
    std::vector<uint8_t> head_of;
    std::vector<Scan> scans;
    std::vector<const Terminal*> terms;
    std::vector<int32_t> state_at;
    std::vector<std::pair<uint64_t, const Follow*>> follows;
    std::vector<uint64_t> completed;
    // walk_indexed_heads: per head its index and the Follow of its completion, and the exits.
    std::vector<std::shared_ptr<const HeadIndex>> indexes;
    std::vector<const Follow*> head_follows;
    std::vector<uint32_t> exit_nodes;
  };

  void start_chart();
  void push_set();
  void truncate(size_t num_sets);
  void add_item(uint32_t dotted, uint32_t origin);
  void closure();
  // Advances the items of set `origin` that wait on nonterminal `lhs`, completed at the top set.
  void complete(int32_t lhs, uint32_t origin);
  const WaitIndex& wait_index(uint32_t set);
  void close_dynamic(uint32_t state, uint32_t origin, uint32_t pos);
  void dedupe_scans();
  bool scan_byte(uint8_t byte);
  // scan_byte at trie node `node` of a mask walk: closes completions only when a child of the
  // node may need them (the header's comment); the set is then not a full chart set.
  bool scan_walk_byte(const TokenTrie& trie, uint32_t node);
  bool scan_byte_impl(uint8_t byte, const TokenTrie* trie, uint32_t node);
  const Follow* known_follow(std::vector<uint64_t>& completed);
  void remember_follow(size_t first_new);
  const std::array<uint64_t, 4>& start_bytes(int32_t terminal);
  // Whether a child of `node` begins with a byte of `follow`.
  static bool child_may_follow(const TokenTrie& trie, uint32_t node, const Follow& follow);
  bool scan_special(uint32_t token_id);
  void walk(const TokenTrie& trie, uint32_t first, uint32_t end, uint32_t base_depth, uint32_t* words);
  void walk_suffix_groups(const SuffixGroups& groups, uint32_t* words);
  bool walk_scan_heads(const TokenTrie& trie, uint32_t root, uint32_t* words);
  bool walk_indexed_heads(const TokenTrie& trie, uint32_t root, HeadsFrame& frame, uint32_t* words);
  // Pushes the walk's sets for depths [first_depth, end_depth) from the frame's states per depth.
  void push_heads_path(const HeadsFrame& frame, uint32_t first_depth, uint32_t end_depth);
  // The Follow of `completed`, closed in a scratch set when this mask has not met it; null when
  // the memo is full. May reorder `completed`.
  const Follow* follow_of_completion(std::vector<uint64_t>& completed);
  static void allow_tokens_at(const TokenTrie& trie, uint32_t node, uint32_t* words);
  bool top_viable() const;
  // The signature of a complete chart set (and of the sets its items start in).
  uint64_t signature(MaskCache& cache, size_t set);
  void compute_mask(uint32_t* words, size_t num_words);
  void grow_seen();
  void charge(int64_t limit, const char* what);

  std::shared_ptr<const CompiledGrammar> grammar_;
  std::vector<uint64_t> items_;
  std::vector<Scan> scans_;
  std::vector<Set> sets_;
  std::vector<std::shared_ptr<const WaitIndex>> wait_index_;  // per set (up to the last built); null until built
  std::vector<HistoryEntry> history_;
  bool terminated_ = false;
  UnorderedTable unordered_;
  std::vector<int32_t> expected_scratch_;
  std::vector<uint32_t> advance_scratch_;
  std::vector<std::pair<uint64_t, uint64_t>> signature_scratch_;
  std::vector<size_t> signature_stack_;
  std::vector<size_t> scan_order_;  // compute_mask: the top set's scans grouped by terminal state
  uint64_t next_serial_ = 1;
  std::vector<uint64_t> completed_scratch_;  // scan_byte_impl: the items a byte completes
  FollowMemo follows_;
  // Frames by nesting level, and the level in use; a copy of a matcher starts without frames.
  struct HeadsFrames {
    std::vector<std::unique_ptr<HeadsFrame>> frames;
    size_t level = 0;
    HeadsFrames() = default;
    HeadsFrames(const HeadsFrames&) {}
    HeadsFrames& operator=(const HeadsFrames&) { return *this; }
  };
  HeadsFrames heads_frames_;
  std::unordered_map<int32_t, std::array<uint64_t, 4>> start_bytes_;  // by terminal

  // The items of the set being built (duplicate detection), and dedupe_scans' positions of
  // the scans it keeps: emptied per set and per call without a pass over their slots.
  detail::StampedTable<uint64_t> seen_;
  detail::StampedTable<uint32_t> kept_scans_;
  int64_t work_ = 0;
};

// Fills rows of a bitmask for several matchers in parallel (no Python objects touched).
void fill_masks_parallel(const std::vector<Matcher*>& matchers, uint32_t* words, size_t words_per_row,
                         const std::vector<int64_t>& rows, int num_threads);

}  // namespace tokensieve
