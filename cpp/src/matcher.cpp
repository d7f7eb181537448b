#include "tokensieve/matcher.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include "tokensieve/hash_mix.hpp"
#include "tokensieve/error.hpp"

namespace tokensieve {

namespace {

inline uint64_t item_key(uint32_t dotted, uint32_t origin) { return (static_cast<uint64_t>(dotted) << 32) | origin; }
inline uint32_t item_dotted(uint64_t item) { return static_cast<uint32_t>(item >> 32); }
inline uint32_t item_origin(uint64_t item) { return static_cast<uint32_t>(item); }
using detail::mix;

}  // namespace

Matcher::Matcher(std::shared_ptr<const CompiledGrammar> grammar) : grammar_(std::move(grammar)) {
  if (!grammar_) throw Error(ErrorKind::InvalidArgument, "Matcher needs a compiled grammar");
  start_chart();
}

void Matcher::start_chart() {
  items_.clear();
  scans_.clear();
  sets_.clear();
  wait_index_.clear();
  history_.clear();
  terminated_ = false;
  work_ = 0;
  push_set();
  add_item(grammar_->start_dotted(), 0);
  closure();
  dedupe_scans();
}

void Matcher::reset() { start_chart(); }

void Matcher::push_set() {
  sets_.push_back({static_cast<uint32_t>(items_.size()), static_cast<uint32_t>(scans_.size()), false, 0, next_serial_++});
  seen_.clear();
}

void Matcher::truncate(size_t num_sets) {
  if (num_sets >= sets_.size()) return;
  items_.resize(sets_[num_sets].items_begin);
  scans_.resize(sets_[num_sets].scans_begin);
  sets_.resize(num_sets);
  if (wait_index_.size() > num_sets) wait_index_.resize(num_sets);
}

void Matcher::grow_seen() {
  seen_.grow(seen_.capacity() * 2);
  // Re-insert the items of the set being built (all distinct).
  for (size_t i = sets_.back().items_begin; i < items_.size(); ++i) {
    const uint64_t key = items_[i];
    seen_.fill(seen_.find(mix(key), [](uint64_t) { return false; }).first, key);
  }
}

void Matcher::add_item(uint32_t dotted, uint32_t origin) {
  const uint64_t key = item_key(dotted, origin);
  const auto [slot, found] = seen_.find(mix(key), [key](uint64_t other) { return other == key; });
  if (found) return;
  seen_.fill(slot, key);
  items_.push_back(key);
  ++work_;
  if (seen_.size() * 2 > seen_.capacity()) grow_seen();
}

// Predict / complete until nothing new appears in the top set; items waiting on a terminal
// become scans starting at the terminal's initial DFA state.
void Matcher::closure() {
  const CompiledGrammar& g = *grammar_;
  const uint32_t pos = static_cast<uint32_t>(sets_.size() - 1);
  const uint32_t num_dotted = static_cast<uint32_t>(g.num_dotted());
  for (size_t idx = sets_.back().items_begin; idx < items_.size(); ++idx) {
    const uint64_t item = items_[idx];
    const uint32_t dotted = item_dotted(item), origin = item_origin(item);
    if (dotted >= num_dotted) {
      close_dynamic(dotted - num_dotted, origin, pos);
      continue;
    }
    const int32_t sym = g.next_symbol(dotted);
    if (sym == CompiledGrammar::kEnd) {
      if (dotted == g.final_dotted()) {
        sets_.back().accepting = true;
        continue;
      }
      // Completion at the same position is covered by advancing over nullable symbols at
      // prediction time (Aycock & Horspool), so only earlier origins are searched.
      if (origin != pos) complete(g.lhs(dotted), origin);
    } else if (sym >= 0) {
      const int32_t rule = g.unordered_of(sym);
      if (rule >= 0) {
        add_item(num_dotted + unordered_.start(g, rule), pos);
      } else {
        for (uint32_t p : g.predictions(sym)) add_item(p, pos);
      }
      if (g.nullable_nonterminal(sym)) add_item(g.advance(dotted), origin);
    } else {
      const int32_t t = -(sym + 1);
      const Terminal& term = g.terminal(t);
      if (term.is_special()) {
        scans_.push_back({dotted, origin, -1, t});
        ++work_;
      } else {
        if (term.has_successor(term.start())) {
          scans_.push_back({dotted, origin, term.start(), t});
          ++work_;
        }
        if (term.nullable()) add_item(g.advance(dotted), origin);
      }
    }
  }
}

void Matcher::complete(int32_t lhs, uint32_t origin) {
  const CompiledGrammar& g = *grammar_;
  const uint32_t num_dotted = static_cast<uint32_t>(g.num_dotted());
  const size_t begin = sets_[origin].items_begin, end = sets_[origin + 1].items_begin;
  if (end - begin >= kIndexedSetItems) {  // origin < top: the set is finished
    const WaitIndex& index = wait_index(origin);
    const WaitIndex::Entry* entry = index.find(lhs);
    if (entry == nullptr) return;
    for (uint32_t k = entry->waiting_begin; k < entry->waiting_end; ++k) {
      const uint64_t item = items_[index.waiting[k].second];
      add_item(g.advance(item_dotted(item)), item_origin(item));
    }
    for (uint32_t d = entry->dynamic_begin; d < entry->dynamic_end; ++d) {
      const uint64_t item = items_[index.dynamic[d].second];
      unordered_.advance(g, item_dotted(item) - num_dotted, lhs, advance_scratch_);
      for (uint32_t next : advance_scratch_) add_item(num_dotted + next, item_origin(item));
    }
    return;
  }
  for (size_t k = begin; k < end; ++k) {
    const uint32_t d2 = item_dotted(items_[k]);
    if (d2 < num_dotted) {
      if (g.next_symbol(d2) == lhs) add_item(g.advance(d2), item_origin(items_[k]));
      continue;
    }
    unordered_.advance(g, d2 - num_dotted, lhs, advance_scratch_);
    for (uint32_t next : advance_scratch_) add_item(num_dotted + next, item_origin(items_[k]));
  }
}

const Matcher::WaitIndex& Matcher::wait_index(uint32_t set) {
  if (wait_index_.size() <= set) wait_index_.resize(set + 1);  // sized on demand: walks push sets per byte
  if (!wait_index_[set]) {
    const CompiledGrammar& g = *grammar_;
    const uint32_t num_dotted = static_cast<uint32_t>(g.num_dotted());
    auto index = std::make_shared<WaitIndex>();
    std::vector<int32_t> expected;  // not expected_scratch_: a caller may be iterating it
    for (uint32_t k = sets_[set].items_begin; k < sets_[set + 1].items_begin; ++k) {
      const uint32_t dotted = item_dotted(items_[k]);
      if (dotted >= num_dotted) {  // advances only on a symbol its Unordered state expects
        unordered_.expected(g, dotted - num_dotted, expected);
        for (int32_t sym : expected) index->dynamic.emplace_back(sym, k);
      } else if (g.next_symbol(dotted) >= 0) {
        index->waiting.emplace_back(g.next_symbol(dotted), k);
      }
    }
    std::sort(index->waiting.begin(), index->waiting.end());
    std::sort(index->dynamic.begin(), index->dynamic.end());
    // Each symbol's items form a run in each sorted list.
    auto for_each_run = [](const std::vector<std::pair<int32_t, uint32_t>>& list, auto&& on_run) {
      for (size_t k = 0; k < list.size();) {
        const int32_t sym = list[k].first;
        const size_t begin = k;
        while (k < list.size() && list[k].first == sym) ++k;
        on_run(sym, static_cast<uint32_t>(begin), static_cast<uint32_t>(k));
      }
    };
    size_t symbols = 0;  // an upper bound on the distinct symbols: runs in the two lists
    auto count_run = [&symbols](int32_t, uint32_t, uint32_t) { ++symbols; };
    for_each_run(index->waiting, count_run);
    for_each_run(index->dynamic, count_run);
    size_t capacity = 8;  // at most half full
    while (capacity < 2 * symbols) capacity *= 2;
    index->table.resize(capacity);
    for_each_run(index->waiting, [&index](int32_t sym, uint32_t begin, uint32_t end) {
      WaitIndex::Entry& e = index->slot(sym);
      e.waiting_begin = begin;
      e.waiting_end = end;
    });
    for_each_run(index->dynamic, [&index](int32_t sym, uint32_t begin, uint32_t end) {
      WaitIndex::Entry& e = index->slot(sym);
      e.dynamic_begin = begin;
      e.dynamic_end = end;
    });
    wait_index_[set] = std::move(index);
  }
  return *wait_index_[set];
}

namespace {
inline size_t symbol_hash(int32_t symbol) { return static_cast<size_t>(mix(static_cast<uint32_t>(symbol))); }
}  // namespace

const Matcher::WaitIndex::Entry* Matcher::WaitIndex::find(int32_t symbol) const {
  const size_t mask = table.size() - 1;
  for (size_t h = symbol_hash(symbol) & mask;; h = (h + 1) & mask) {
    if (table[h].symbol == symbol) return &table[h];
    if (table[h].symbol == kNoSymbol) return nullptr;
  }
}

Matcher::WaitIndex::Entry& Matcher::WaitIndex::slot(int32_t symbol) {
  const size_t mask = table.size() - 1;
  size_t h = symbol_hash(symbol) & mask;
  while (table[h].symbol != kNoSymbol && table[h].symbol != symbol) h = (h + 1) & mask;
  table[h].symbol = symbol;
  return table[h];
}

// A dynamic item: predict what its state waits on; an `after` state that may finish
// completes the Unordered nonterminal (its items are not nullable, so origin < pos).
void Matcher::close_dynamic(uint32_t state, uint32_t origin, uint32_t pos) {
  const CompiledGrammar& g = *grammar_;
  if (origin != pos && unordered_.can_finish(g, state)) {
    complete(g.unordered_rule(unordered_.state(state).rule).nonterminal, origin);
  }
  unordered_.expected(g, state, expected_scratch_);
  for (int32_t sym : expected_scratch_) {
    for (uint32_t p : g.predictions(sym)) add_item(p, pos);
    const int32_t rule = g.unordered_of(sym);
    if (rule >= 0) add_item(static_cast<uint32_t>(g.num_dotted()) + unordered_.start(g, rule), pos);
  }
}

// Two scans with the same item and DFA state behave identically from here on: keep one (the
// first, in place). Runs after every byte of every trie walk, so it hashes rather than sorts.
void Matcher::dedupe_scans() {
  const size_t begin = sets_.back().scans_begin, end = scans_.size();
  if (end - begin < 2) return;
  if (end - begin <= kFewScans) {  // a walk's usual set: comparing beats hashing
    size_t kept = begin;
    for (size_t k = begin; k < end; ++k) {
      const Scan s = scans_[k];
      bool duplicate = false;
      for (size_t i = begin; i < kept && !duplicate; ++i) {
        duplicate = scans_[i].dotted == s.dotted && scans_[i].origin == s.origin && scans_[i].state == s.state;
      }
      if (!duplicate) scans_[kept++] = s;
    }
    scans_.resize(kept);
    return;
  }
  kept_scans_.grow(2 * (end - begin));
  size_t kept = begin;
  for (size_t k = begin; k < end; ++k) {
    const Scan s = scans_[k];
    const uint64_t hash = mix(item_key(s.dotted, s.origin) + 0x9E3779B97F4A7C15ull * static_cast<uint32_t>(s.state));
    const auto [slot, duplicate] = kept_scans_.find(hash, [&](uint32_t at) {
      const Scan& o = scans_[at];
      return o.dotted == s.dotted && o.origin == s.origin && o.state == s.state;
    });
    if (duplicate) continue;
    kept_scans_.fill(slot, static_cast<uint32_t>(kept));
    scans_[kept++] = s;
  }
  scans_.resize(kept);
}

bool Matcher::top_viable() const { return sets_.back().accepting || scans_.size() > sets_.back().scans_begin; }

// Pushes the set after `byte`; returns whether it is viable (the caller pops it otherwise).
bool Matcher::scan_byte(uint8_t byte) { return scan_byte_impl(byte, nullptr, 0); }

bool Matcher::scan_walk_byte(const TokenTrie& trie, uint32_t node) { return scan_byte_impl(trie.byte(node), &trie, node); }

bool Matcher::child_may_follow(const TokenTrie& trie, uint32_t node, const Follow& follow) {
  for (uint32_t c = node + 1, end = trie.subtree_end(node); c < end; c = trie.subtree_end(c)) {
    if (follow.has(trie.byte(c))) return true;
  }
  return false;
}

bool Matcher::scan_byte_impl(uint8_t byte, const TokenTrie* trie, uint32_t node) {
  const CompiledGrammar& g = *grammar_;
  const size_t begin = sets_.back().scans_begin, end = scans_.size();
  push_set();
  auto& completed = completed_scratch_;
  completed.clear();
  for (size_t k = begin; k < end; ++k) {
    const Scan s = scans_[k];
    if (s.state < 0) continue;
    const Terminal& term = g.terminal(s.terminal);
    const int32_t q = term.next(s.state, byte);
    if (q == Dfa::kDead) continue;
    if (term.has_successor(q)) {
      scans_.push_back({s.dotted, s.origin, q, s.terminal});
      ++work_;
    }
    if (term.accepting(q)) completed.push_back(item_key(g.advance(s.dotted), s.origin));
  }
  if (!completed.empty()) {
    // Completions of more items than kMaxFollowItems are closed without a key.
    const bool memo = trie != nullptr && completed.size() <= kMaxFollowItems;
    const Follow* follow = memo ? known_follow(completed) : nullptr;
    if (follow != nullptr && !child_may_follow(*trie, node, *follow)) {
      dedupe_scans();  // no items: the continuing scans alone, or the completion's viability
      return follow->viable || scans_.size() > sets_.back().scans_begin;
    }
    const size_t continuing = scans_.size();
    for (uint64_t item : completed) add_item(item_dotted(item), item_origin(item));
    closure();
    if (memo && follow == nullptr) remember_follow(continuing);
  }
  dedupe_scans();
  return top_viable();
}

// The Follow of `completed` (items completed at the top set of a walk) if this mask has met
// it, else null with follows_.key naming it for remember_follow. Along a run of one terminal
// (the letters of an identifier) every node completes the same items from the same sets, so
// the last lookup is checked first, without building a key. May reorder `completed`.
const Matcher::Follow* Matcher::known_follow(std::vector<uint64_t>& completed) {
  FollowMemo& memo = follows_;
  const bool same_as_last =
      memo.last != nullptr && completed == memo.last_completed &&
      std::equal(completed.begin(), completed.end(), memo.last_serials.begin(),
                 [this](uint64_t item, uint64_t serial) { return sets_[item_origin(item)].serial == serial; });
  if (same_as_last) return memo.last;
  memo.last_completed = completed;
  memo.last_serials.clear();
  for (uint64_t item : completed) memo.last_serials.push_back(sets_[item_origin(item)].serial);
  // Keyed by the origin sets' serials, not positions: a position reused after a pop is
  // another set.
  std::sort(completed.begin(), completed.end());
  memo.key.resize(completed.size() * 2 * sizeof(uint64_t));
  for (size_t i = 0; i < completed.size(); ++i) {
    const uint64_t part[2] = {item_dotted(completed[i]), sets_[item_origin(completed[i])].serial};
    std::memcpy(memo.key.data() + i * sizeof part, part, sizeof part);
  }
  const auto known = memo.by_key.find(memo.key);
  memo.last = known == memo.by_key.end() ? nullptr : &known->second;
  return memo.last;
}

// The bytes terminal `t` accepts first from its start state, remembered per matcher for the
// terminals met.
const std::array<uint64_t, 4>& Matcher::start_bytes(int32_t t) {
  const auto [it, added] = start_bytes_.try_emplace(t);
  if (added) {
    const Terminal& term = grammar_->terminal(t);
    for (int b = 0; b < 256; ++b) {
      if (term.next(term.start(), static_cast<uint8_t>(b)) != Dfa::kDead) it->second[b >> 6] |= uint64_t{1} << (b & 63);
    }
  }
  return it->second;
}

// Remembers the Follow of the completion just closed (the items known_follow was last asked
// for): the scans from `first_new` on are the ones its closure predicted, each at its
// terminal's start state.
void Matcher::remember_follow(size_t first_new) {
  Follow follow;
  follow.viable = sets_.back().accepting || scans_.size() > first_new;
  for (size_t k = first_new; k < scans_.size(); ++k) {
    const Scan& s = scans_[k];
    if (s.state < 0) continue;  // a special token: no byte
    const std::array<uint64_t, 4>& bytes = start_bytes(s.terminal);
    for (size_t w = 0; w < bytes.size(); ++w) follow.first_bytes[w] |= bytes[w];
  }
  if (follows_.key_bytes + follows_.key.size() > kMaxFollowKeyBytes) {
    follows_.last = nullptr;
    return;
  }
  follows_.key_bytes += follows_.key.size();
  follows_.last = &follows_.by_key.emplace(follows_.key, follow).first->second;
}

bool Matcher::scan_special(uint32_t token_id) {
  const CompiledGrammar& g = *grammar_;
  const size_t begin = sets_.back().scans_begin, end = scans_.size();
  push_set();
  for (size_t k = begin; k < end; ++k) {
    const Scan s = scans_[k];
    if (s.state < 0 && g.terminal(s.terminal).special_token == static_cast<int32_t>(token_id)) {
      add_item(g.advance(s.dotted), s.origin);
    }
  }
  closure();
  dedupe_scans();
  return top_viable();
}

void Matcher::charge(int64_t limit, const char* what) {
  if (work_ > limit) {
    throw Error(ErrorKind::LimitExceeded,
                std::string("parser work exceeded ") + what + " (" + std::to_string(limit) +
                    " items); the grammar is too ambiguous or the input too long for this limit",
                what);
  }
}

void Matcher::fill_mask(uint32_t* words, size_t num_words) {
  const Vocabulary& vocab = grammar_->vocab();
  const size_t needed = (vocab.size() + 31) / 32;
  if (num_words < needed) {
    throw Error(ErrorKind::VocabularyMismatch, "bitmask row has " + std::to_string(num_words) +
                                                   " words; the vocabulary needs " + std::to_string(needed));
  }
  std::memset(words, 0, num_words * sizeof(uint32_t));
  auto allow = [words](uint32_t id) { words[id >> 5] |= 1u << (id & 31); };
  if (terminated_) {  // a finished row in a batch: EOS keeps it finished
    for (uint32_t e : vocab.eos_ids()) allow(e);
    return;
  }
  MaskCache* cache = grammar_->mask_cache();
  uint64_t sig = 0;
  if (cache != nullptr) {
    sig = signature(*cache, sets_.size() - 1);
    if (cache->lookup(sig, words, needed)) return;
  }
  compute_mask(words, needed);
  if (cache != nullptr) cache->store(sig, words, needed);
}

void Matcher::compute_mask(uint32_t* words, size_t needed) {
  const Vocabulary& vocab = grammar_->vocab();
  auto allow = [words](uint32_t id) { words[id >> 5] |= 1u << (id & 31); };
  if (sets_.back().accepting) {
    for (uint32_t e : vocab.eos_ids()) allow(e);
  }
  const size_t base = sets_.size();
  for (size_t k = sets_.back().scans_begin; k < scans_.size(); ++k) {
    if (scans_[k].state < 0) {
      allow(static_cast<uint32_t>(grammar_->terminal(scans_[k].terminal).special_token));
    }
  }

  // Tokens that stay inside a terminal come from its per-state index; tokens that end it
  // part-way are judged by completing the terminal once and walking their suffixes. Scans in
  // one terminal state share the index entry, so one walk from a set holding all their
  // completions judges their suffixes together (at a JSON value under a oneOf of objects,
  // hundreds of scans wait in the whitespace terminal's start state).
  const size_t scans_end = scans_.size();
  auto& order = scan_order_;
  order.clear();
  for (size_t k = sets_.back().scans_begin; k < scans_end; ++k) {
    if (scans_[k].state >= 0) order.push_back(k);
  }
  std::sort(order.begin(), order.end(), [this](size_t a, size_t b) {
    return std::pair(scans_[a].terminal, scans_[a].state) < std::pair(scans_[b].terminal, scans_[b].state);
  });
  work_ = 0;
  follows_.clear();
  try {
    for (size_t i = 0, j = 0; i < order.size(); i = j) {
      const Scan s = scans_[order[i]];
      j = i + 1;
      while (j < order.size() && scans_[order[j]].terminal == s.terminal && scans_[order[j]].state == s.state) ++j;
      std::shared_ptr<const StateTokens> entry = grammar_->terminal(s.terminal).tokens(s.state);
      entry->inside.or_into(words);
      if (!entry->suffix_groups && entry->boundary_nodes.empty()) continue;
      push_set();
      for (size_t g = i; g < j; ++g) add_item(grammar_->advance(scans_[order[g]].dotted), scans_[order[g]].origin);
      closure();
      dedupe_scans();
      if (scans_.size() > sets_.back().scans_begin) {
        const TokenTrie& trie = *entry->boundary_trie;
        for (uint32_t b : entry->boundary_nodes) walk(trie, b + 1, trie.subtree_end(b), trie.depth(b), words);
        if (entry->suffix_groups) walk_suffix_groups(*entry->suffix_groups, words);
      }
      truncate(base);
    }
  } catch (...) {
    truncate(base);
    throw;
  }
  truncate(base);
  bool any = false;
  for (size_t i = 0; i < needed && !any; ++i) any = words[i] != 0;
  if (!any) {
    throw Error(ErrorKind::NoTokenAllowed,
                "no token is allowed here: the grammar needs bytes that no token of this vocabulary provides");
  }
}


// Signatures (mask_cache.hpp), computed for the sets that origins lead to first, with an
// explicit stack: origin chains are as long as the input is deeply nested.
uint64_t Matcher::signature(MaskCache& cache, size_t top) {
  const CompiledGrammar& g = *grammar_;
  const uint32_t num_dotted = static_cast<uint32_t>(g.num_dotted());
  // Usually the top set is the only one without a signature: a member scratch stack keeps
  // this hot path free of allocations.
  auto& stack = signature_stack_;
  stack.assign(1, top);
  while (!stack.empty()) {
    const size_t j = stack.back();
    if (sets_[j].signature != 0) {
      stack.pop_back();
      continue;
    }
    const size_t items_end = j + 1 < sets_.size() ? sets_[j + 1].items_begin : items_.size();
    const size_t scans_end = j + 1 < sets_.size() ? sets_[j + 1].scans_begin : scans_.size();
    bool missing = false;
    auto need = [&](uint32_t origin) {
      if (origin != j && sets_[origin].signature == 0) {
        stack.push_back(origin);
        missing = true;
      }
    };
    for (size_t k = sets_[j].items_begin; k < items_end; ++k) need(item_origin(items_[k]));
    for (size_t k = sets_[j].scans_begin; k < scans_end; ++k) need(scans_[k].origin);
    if (missing) continue;
    // What decides the future: items waiting on a nonterminal (later completions advance
    // them), dynamic items, scans, and whether the position accepts. Origins by signature.
    auto origin_sig = [&](uint32_t origin) { return origin == j ? uint64_t{0} : sets_[origin].signature; };
    auto& parts = signature_scratch_;
    parts.clear();
    for (size_t k = sets_[j].items_begin; k < items_end; ++k) {
      const uint32_t dotted = item_dotted(items_[k]);
      const uint64_t o = origin_sig(item_origin(items_[k]));
      if (dotted >= num_dotted) {
        uint64_t id = cache.intern_dynamic(unordered_.key(g, dotted - num_dotted));
        parts.push_back({(uint64_t{1} << 63) | id, o});
      } else if (g.next_symbol(dotted) >= 0) {
        parts.push_back({dotted, o});
      }
    }
    std::sort(parts.begin(), parts.end());
    const size_t num_items = parts.size();
    for (size_t k = sets_[j].scans_begin; k < scans_end; ++k) {
      const Scan& sc = scans_[k];
      // A counted terminal's states share masks across counts (counted.hpp): keyed by entry.
      const uint32_t state = sc.state < 0 ? static_cast<uint32_t>(sc.state) : g.terminal(sc.terminal).index_key(sc.state);
      parts.push_back({(static_cast<uint64_t>(sc.dotted) << 32) | state, origin_sig(sc.origin)});
    }
    std::sort(parts.begin() + static_cast<std::ptrdiff_t>(num_items), parts.end());
    std::string description((2 * parts.size() + 2) * sizeof(uint64_t), '\0');
    uint64_t head[2] = {num_items, sets_[j].accepting ? uint64_t{1} : uint64_t{0}};
    std::memcpy(description.data(), head, sizeof head);
    if (!parts.empty()) std::memcpy(description.data() + sizeof head, parts.data(), parts.size() * 2 * sizeof(uint64_t));
    sets_[j].signature = cache.intern(description);
    stack.pop_back();
  }
  return sets_[top].signature;
}

// Depth-first over the trie nodes [first, end) (a whole subtree, or the whole trie from 1) from
// the top chart set: one set per byte, popped on the way back. `base_depth` is the depth of
// the subtree's parent.
void Matcher::walk(const TokenTrie& trie, uint32_t first, uint32_t end, uint32_t base_depth, uint32_t* words) {
  const size_t base = sets_.size();
  const int64_t budget = grammar_->limits().max_mask_work;
  uint32_t node = first;
  while (node < end) {
    truncate(base + (trie.depth(node) - base_depth) - 1);
    if (scan_walk_byte(trie, node)) {
      allow_tokens_at(trie, node, words);
      const bool many_below = trie.subtree_end(node) - node > kMinHeadsSubtree;
      node = many_below && walk_scan_heads(trie, node, words) ? trie.subtree_end(node) : node + 1;
    } else {
      node = trie.subtree_end(node);
    }
    charge(budget, "max_mask_work");
  }
  truncate(base);
}

void Matcher::allow_tokens_at(const TokenTrie& trie, uint32_t node, uint32_t* words) {
  for (const uint32_t* t = trie.tokens_begin(node); t != trie.tokens_end(node); ++t) words[*t >> 5] |= 1u << (*t & 31);
}

// Below `root`, while the walk's sets hold only scans (their completions skipped, as in the
// letters of an identifier), the future is the scans' DFAs alone: this runs them side by side,
// node by node, without chart sets. The scans fall into a few (terminal, DFA state) *heads*
// that move together; where some heads accept, the completed items are those heads' scans'
// (items and origins do not change below the root), so one Follow per set of accepting heads
// judges the node. A node with a child that may follow (or whose Follow this mask has not met)
// gets its chart sets along the path and the usual walk below it. Returns false, doing
// nothing, when the top set holds items, a special-token scan, or too many heads.
bool Matcher::walk_scan_heads(const TokenTrie& trie, uint32_t root, uint32_t* words) {
  const CompiledGrammar& g = *grammar_;
  const Set& top = sets_.back();
  if (items_.size() != top.items_begin || scans_.size() == top.scans_begin) return false;
  // Scratch per nesting level: the usual walk below a node may come back here. Kept across
  // calls (most subtrees are small, and allocating per call cost more than their walk).
  auto& frames = heads_frames_.frames;
  size_t& level = heads_frames_.level;
  if (frames.size() <= level) frames.push_back(std::make_unique<HeadsFrame>());
  HeadsFrame& frame = *frames[level];
  auto& heads = frame.heads;  // (terminal, state at the root)
  auto& head_of = frame.head_of;
  heads.clear();
  head_of.clear();
  for (size_t k = top.scans_begin; k < scans_.size(); ++k) {
    const Scan& sc = scans_[k];
    if (sc.state < 0) return false;
    const auto at = std::find(heads.begin(), heads.end(), std::pair(sc.terminal, sc.state));
    if (at == heads.end() && heads.size() == kMaxWalkHeads) return false;
    head_of.push_back(static_cast<uint8_t>(at - heads.begin()));
    if (at == heads.end()) heads.emplace_back(sc.terminal, sc.state);
  }
  ++level;
  struct LevelGuard {  // charge() may throw
    size_t& level;
    ~LevelGuard() { --level; }
  } guard{level};
  auto& scans = frame.scans;
  scans.assign(scans_.begin() + top.scans_begin, scans_.end());
  const size_t num_heads = heads.size();
  auto& terms = frame.terms;
  terms.clear();
  for (const auto& h : heads) terms.push_back(&g.terminal(h.first));
  const size_t root_sets = sets_.size();
  const uint32_t root_depth = trie.depth(root);
  auto& state_at = frame.state_at;  // [depth][head]
  state_at.assign((trie.max_depth() + 1) * num_heads, Dfa::kDead);
  for (size_t h = 0; h < num_heads; ++h) state_at[root_depth * num_heads + h] = heads[h].second;
  const bool indexed = g.head_indexes() != nullptr &&
                       trie.subtree_end(root) - root >= static_cast<uint64_t>(g.limits().min_head_index_nodes);
  if (indexed && walk_indexed_heads(trie, root, frame, words)) return true;

  // The Follow of the completions of a set of accepting heads, remembered here once found.
  auto& follows = frame.follows;
  follows.clear();
  auto& completed = frame.completed;
  auto follow_of = [&](uint64_t accepting) -> const Follow* {
    for (const auto& [heads_mask, follow] : follows) {
      if (heads_mask == accepting) return follow;
    }
    completed.clear();
    for (size_t k = 0; k < scans.size(); ++k) {
      if ((accepting >> head_of[k]) & 1) completed.push_back(item_key(g.advance(scans[k].dotted), scans[k].origin));
    }
    const Follow* follow = known_follow(completed);
    if (follow != nullptr) follows.emplace_back(accepting, follow);
    return follow;
  };

  const int64_t budget = g.limits().max_mask_work;
  for (uint32_t node = root + 1, end = trie.subtree_end(root); node < end;) {
    const uint32_t d = trie.depth(node);
    const uint8_t byte = trie.byte(node);
    const int32_t* before = &state_at[(d - 1) * num_heads];
    int32_t* after = &state_at[d * num_heads];
    bool alive = false, goes_on = false;
    uint64_t accepting = 0;
    for (size_t h = 0; h < num_heads; ++h) {
      const int32_t q = before[h] == Dfa::kDead ? Dfa::kDead : terms[h]->next(before[h], byte);
      after[h] = q;
      if (q == Dfa::kDead) continue;
      alive = true;
      goes_on = goes_on || terms[h]->has_successor(q);
      if (terms[h]->accepting(q)) accepting |= uint64_t{1} << h;
    }
    work_ += static_cast<int64_t>(scans.size());
    charge(budget, "max_mask_work");
    if (!alive) {
      node = trie.subtree_end(node);
      continue;
    }
    bool viable = goes_on;
    if (accepting != 0) {
      const Follow* follow = follow_of(accepting);
      if (follow == nullptr || child_may_follow(trie, node, *follow)) {
        // The usual walk from here: the path's sets (continuing scans only), then this node.
        push_heads_path(frame, root_depth + 1, d);
        walk(trie, node, trie.subtree_end(node), d - 1, words);
        truncate(root_sets);
        node = trie.subtree_end(node);
        continue;
      }
      viable = viable || follow->viable;
    }
    if (!viable) {
      node = trie.subtree_end(node);
      continue;
    }
    allow_tokens_at(trie, node, words);
    // Without a continuing scan, no child continues a terminal, and none may follow them.
    node = goes_on ? node + 1 : trie.subtree_end(node);
  }
  return true;
}

void Matcher::push_heads_path(const HeadsFrame& frame, uint32_t first_depth, uint32_t end_depth) {
  const size_t num_heads = frame.heads.size();
  for (uint32_t dd = first_depth; dd < end_depth; ++dd) {
    push_set();
    for (size_t k = 0; k < frame.scans.size(); ++k) {
      const uint8_t h = frame.head_of[k];
      const int32_t q = frame.state_at[dd * num_heads + h];
      if (q != Dfa::kDead && frame.terms[h]->has_successor(q)) {
        scans_.push_back({frame.scans[k].dotted, frame.scans[k].origin, q, frame.scans[k].terminal});
      }
    }
    dedupe_scans();
  }
}

// walk_scan_heads from the heads' indexes (head_index.hpp): each head's tokens in one OR, and
// the usual walk below the exits whose child byte may follow that head's completion. Exact
// as the node-by-node walk is: completing several heads at a node closes the union of their
// completions, whose new scans and acceptance are the union of each one's (the closure of a
// set of items is the union of its items' closures), so a node needs chart sets exactly when
// it is an exit of some head by a byte of that head's Follow. Exits are walked in preorder,
// skipping those inside a subtree already walked (that walk saw them with the full chart).
// Returns false, having allowed nothing, when an index or a Follow is not to be had.
bool Matcher::walk_indexed_heads(const TokenTrie& trie, uint32_t root, HeadsFrame& frame, uint32_t* words) {
  const CompiledGrammar& g = *grammar_;
  const size_t num_heads = frame.heads.size();
  auto& indexes = frame.indexes;
  auto& follows = frame.head_follows;
  indexes.clear();
  follows.clear();
  bool all_indexed = true;  // every head is asked for, so that all count the visit
  for (size_t h = 0; h < num_heads; ++h) {
    const auto [terminal, state] = frame.heads[h];
    const Terminal& term = g.terminal(terminal);
    indexes.push_back(g.head_indexes()->get({&trie, root, terminal, state}, [&] {
      return build_head_index(trie, root, term, state, g.vocab().size());
    }));
    all_indexed = all_indexed && indexes.back() != nullptr;
  }
  if (!all_indexed) return false;
  for (size_t h = 0; h < num_heads; ++h) {
    const Follow* follow = nullptr;
    if (!indexes[h]->exits.empty() || !indexes[h]->accept_only.empty()) {  // the head may complete below
      frame.completed.clear();
      for (size_t k = 0; k < frame.scans.size(); ++k) {
        if (frame.head_of[k] != h) continue;
        frame.completed.push_back(item_key(g.advance(frame.scans[k].dotted), frame.scans[k].origin));
      }
      follow = follow_of_completion(frame.completed);
      if (follow == nullptr) return false;
    }
    follows.push_back(follow);
  }
  auto& exits = frame.exit_nodes;
  exits.clear();
  for (size_t h = 0; h < num_heads; ++h) {
    const HeadIndex& index = *indexes[h];
    index.inside.or_into(words);
    if (follows[h] == nullptr) continue;
    if (follows[h]->viable) index.accept_only.or_into(words);
    for (size_t w = 0; w < 4; ++w) {
      for (uint64_t bits = follows[h]->first_bytes[w]; bits != 0; bits &= bits - 1) {
        const size_t byte = 64 * w + static_cast<size_t>(__builtin_ctzll(bits));
        exits.insert(exits.end(), index.exits.begin() + index.exit_begin[byte],
                     index.exits.begin() + index.exit_begin[byte + 1]);
      }
    }
  }
  work_ += static_cast<int64_t>(num_heads + exits.size());
  charge(g.limits().max_mask_work, "max_mask_work");
  std::sort(exits.begin(), exits.end());
  const size_t root_sets = sets_.size();
  const uint32_t root_depth = trie.depth(root);
  uint32_t walked_end = 0;  // one past the last subtree walked
  for (const uint32_t exit : exits) {
    if (exit < walked_end) continue;  // inside a walked subtree, or met again
    walked_end = trie.subtree_end(exit);
    // The heads' states along the path from the root to the exit's parent.
    const uint32_t d = trie.depth(exit);
    uint32_t at = root;
    for (uint32_t dd = root_depth + 1; dd < d; ++dd) {
      uint32_t child = at + 1;
      while (trie.subtree_end(child) <= exit) child = trie.subtree_end(child);
      for (size_t h = 0; h < num_heads; ++h) {
        const int32_t before = frame.state_at[(dd - 1) * num_heads + h];
        const int32_t q = before == Dfa::kDead ? Dfa::kDead : frame.terms[h]->next(before, trie.byte(child));
        frame.state_at[dd * num_heads + h] = q;
      }
      at = child;
    }
    push_heads_path(frame, root_depth + 1, d);
    walk(trie, exit, walked_end, d - 1, words);
    truncate(root_sets);
  }
  return true;
}

const Matcher::Follow* Matcher::follow_of_completion(std::vector<uint64_t>& completed) {
  if (completed.size() > kMaxFollowItems) return nullptr;
  if (const Follow* known = known_follow(completed)) return known;
  push_set();
  for (uint64_t item : completed) add_item(item_dotted(item), item_origin(item));
  closure();
  remember_follow(sets_.back().scans_begin);
  const Follow* follow = follows_.last;
  truncate(sets_.size() - 1);
  return follow;
}

// The suffix groups whose first byte the parser allows after the terminal: only those groups'
// tries are built and walked.
void Matcher::walk_suffix_groups(const SuffixGroups& groups, uint32_t* words) {
  const size_t base = sets_.size();
  for (int c = 0; c < 256; ++c) {
    const auto byte = static_cast<uint8_t>(c);
    if (!groups.has(byte)) continue;
    const bool viable = scan_byte(byte);
    truncate(base);
    if (!viable) continue;
    if (const TokenTrie* group = groups.group(byte)) {
      walk(*group, 1, group->num_nodes(), 0, words);
    } else {  // too large to copy: walk each root's subtree in place
      const TokenTrie& trie = groups.trie();
      for (const uint32_t* r = groups.roots_begin(byte); r != groups.roots_end(byte); ++r) {
        walk(trie, *r, trie.subtree_end(*r), trie.depth(*r) - 1, words);
      }
    }
  }
}

bool Matcher::accept_bytes(const std::string& bytes) {
  if (terminated_) throw Error(ErrorKind::MatcherState, "the matcher has terminated (EOS was accepted)");
  const size_t before = sets_.size();
  work_ = 0;
  for (unsigned char b : bytes) {
    if (!scan_byte(b)) {
      truncate(before);
      return false;
    }
    if (work_ > grammar_->limits().max_accept_work) {
      truncate(before);
      charge(grammar_->limits().max_accept_work, "max_accept_work");
    }
  }
  history_.push_back({static_cast<uint32_t>(before), false});
  return true;
}

bool Matcher::accept_token(uint32_t token_id) {
  const Vocabulary& vocab = grammar_->vocab();
  if (token_id >= vocab.size()) {
    throw Error(ErrorKind::InvalidArgument,
                "token id " + std::to_string(token_id) + " is outside the vocabulary (size " +
                    std::to_string(vocab.size()) + ")");
  }
  if (terminated_) throw Error(ErrorKind::MatcherState, "the matcher has terminated (EOS was accepted)");
  const size_t before = sets_.size();
  if (grammar_->mentions_special(token_id)) {
    if (scan_special(token_id)) {
      history_.push_back({static_cast<uint32_t>(before), false});
      return true;
    }
    truncate(before);
  }
  const auto& eos = vocab.eos_ids();
  if (std::find(eos.begin(), eos.end(), token_id) != eos.end()) {
    if (!sets_.back().accepting) return false;
    terminated_ = true;
    history_.push_back({static_cast<uint32_t>(before), true});
    return true;
  }
  if (vocab.is_special(token_id)) return false;
  const std::string& bytes = vocab.token(token_id);
  if (bytes.empty()) return false;
  return accept_bytes(bytes);
}

void Matcher::rollback(size_t num_entries) {
  if (num_entries > history_.size()) {
    throw Error(ErrorKind::InvalidArgument, "cannot roll back " + std::to_string(num_entries) +
                                                " entries: only " + std::to_string(history_.size()) + " accepted");
  }
  if (num_entries == 0) return;
  const HistoryEntry target = history_[history_.size() - num_entries];
  for (size_t i = history_.size() - num_entries; i < history_.size(); ++i) {
    if (history_[i].eos) terminated_ = false;
  }
  history_.resize(history_.size() - num_entries);
  truncate(target.num_sets);
}

std::string Matcher::jump_forward() {
  std::string out;
  if (terminated_) return out;
  const size_t base = sets_.size();
  const int32_t limit = grammar_->limits().max_jump_forward_bytes;
  while (static_cast<int32_t>(out.size()) < limit && !sets_.back().accepting) {
    // The bytes any scan can take next; a special-token scan means a choice is left.
    int forced = -1;
    bool several = false;
    for (size_t k = sets_.back().scans_begin; k < scans_.size() && !several; ++k) {
      const Scan& s = scans_[k];
      if (s.state < 0) {
        several = true;
        break;
      }
      const Terminal& term = grammar_->terminal(s.terminal);
      for (int b = 0; b < 256; ++b) {
        if (term.next(s.state, static_cast<uint8_t>(b)) == Dfa::kDead) continue;
        if (forced == -1) {
          forced = b;
        } else if (forced != b) {
          several = true;
          break;
        }
      }
    }
    if (several || forced < 0) break;
    if (!scan_byte(static_cast<uint8_t>(forced))) break;  // cannot happen: live DFA edges are viable
    out.push_back(static_cast<char>(forced));
  }
  truncate(base);
  return out;
}

std::vector<std::vector<int64_t>> Matcher::describe_scans() const {
  std::vector<std::vector<int64_t>> out;
  for (size_t k = sets_.back().scans_begin; k < scans_.size(); ++k) {
    const Scan& s = scans_[k];
    std::vector<int64_t> row = {s.terminal, s.state, static_cast<int64_t>(s.dotted), static_cast<int64_t>(s.origin)};
    if (s.state >= 0) {
      auto entry = grammar_->terminal(s.terminal).tokens(s.state);
      int64_t inside = static_cast<int64_t>(entry->inside.ids.size());
      if (!entry->inside.bits.empty()) {
        inside = 0;
        for (uint32_t w : entry->inside.bits) inside += __builtin_popcount(w);
      }
      row.push_back(inside);
      row.push_back(entry->suffix_groups ? static_cast<int64_t>(entry->suffix_groups->num_roots()) : 0);
      row.push_back(static_cast<int64_t>(entry->boundary_nodes.size()));
    }
    out.push_back(std::move(row));
  }
  return out;
}

void fill_masks_parallel(const std::vector<Matcher*>& matchers, uint32_t* words, size_t words_per_row,
                         const std::vector<int64_t>& rows, int num_threads) {
  const size_t n = matchers.size();
  if (rows.size() != n) throw Error(ErrorKind::InvalidArgument, "one row index per matcher is needed");
  num_threads = std::max(1, std::min<int>(num_threads, static_cast<int>(n)));
  std::exception_ptr first_error;
  std::mutex error_mutex;
  auto work = [&](size_t start) {
    for (size_t i = start; i < n; i += static_cast<size_t>(num_threads)) {
      try {
        matchers[i]->fill_mask(words + static_cast<size_t>(rows[i]) * words_per_row, words_per_row);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
      }
    }
  };
  if (num_threads == 1) {
    work(0);
  } else {
    std::vector<std::thread> threads;
    for (int t = 0; t < num_threads; ++t) threads.emplace_back(work, static_cast<size_t>(t));
    for (auto& th : threads) th.join();
  }
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace tokensieve
