#include "tokensieve/grammar.hpp"

#include <algorithm>

#include "tokensieve/error.hpp"

namespace tokensieve {

namespace {

bool terminal_productive(const Terminal& t) { return t.productive(); }
bool terminal_nullable(const Terminal& t) { return !t.is_special() && t.nullable(); }

}  // namespace

CompiledGrammar::CompiledGrammar(std::shared_ptr<const Vocabulary> vocab, std::vector<Terminal> terminals,
                                 int32_t num_nonterminals, const std::vector<std::vector<int32_t>>& productions,
                                 int32_t start, MatcherLimits limits, std::vector<UnorderedRule> unordered,
                                 std::shared_ptr<MemoryMeter> meter)
    : vocab_(std::move(vocab)), terminals_(std::move(terminals)), limits_(limits), unordered_(std::move(unordered)) {
  const int32_t nt_count = num_nonterminals;
  const int32_t t_count = static_cast<int32_t>(terminals_.size());
  if (start < 0 || start >= nt_count) throw Error(ErrorKind::InvalidArgument, "start symbol out of range");
  for (const auto& p : productions) {
    if (p.empty() || p[0] < 0 || p[0] >= nt_count) throw Error(ErrorKind::InvalidArgument, "bad production lhs");
    for (size_t i = 1; i < p.size(); ++i) {
      int32_t s = p[i];
      if (s >= nt_count || (s < 0 && -(s + 1) >= t_count)) {
        throw Error(ErrorKind::InvalidArgument, "production symbol out of range");
      }
    }
  }
  unordered_of_.assign(nt_count + 1, -1);
  auto check_nt = [&](int32_t s, bool optional) {
    if ((s < 0 && !(optional && s == -1)) || s >= nt_count) {
      throw Error(ErrorKind::InvalidArgument, "unordered rule symbol out of range");
    }
  };
  for (size_t u = 0; u < unordered_.size(); ++u) {
    UnorderedRule& r = unordered_[u];
    check_nt(r.nonterminal, false);
    check_nt(r.separator, false);
    check_nt(r.repeatable, true);
    for (int32_t s : r.items) check_nt(s, false);
    if (unordered_of_[r.nonterminal] != -1) throw Error(ErrorKind::InvalidArgument, "two unordered rules share a symbol");
    if (r.required.size() != r.words()) throw Error(ErrorKind::InvalidArgument, "unordered required set size");
    if (r.min_count < 0 || (r.max_count >= 0 && r.max_count < r.min_count)) {
      throw Error(ErrorKind::InvalidArgument, "unordered count bounds");
    }
    unordered_of_[r.nonterminal] = static_cast<int32_t>(u);
    for (size_t i = 0; i < r.items.size(); ++i) r.item_of_symbol.push_back({r.items[i], static_cast<int32_t>(i)});
    std::sort(r.item_of_symbol.begin(), r.item_of_symbol.end());
  }
  for (const auto& p : productions) {
    if (unordered_of_[p[0]] != -1) throw Error(ErrorKind::InvalidArgument, "an unordered symbol has productions");
  }
  for (const auto& t : terminals_) {
    if (t.dfa == nullptr && (t.special_token < 0 || static_cast<uint32_t>(t.special_token) >= vocab_->size())) {
      throw Error(ErrorKind::InvalidArgument, "special-token terminal id out of range");
    }
    if (t.dfa != nullptr && t.index == nullptr && t.counted == nullptr) throw Error(ErrorKind::InvalidArgument, "terminal without token index");
  }

  // Productive nonterminals (fixpoint): those deriving at least one finite string.
  std::vector<uint8_t> productive(nt_count, 0);
  auto sym_productive = [&](int32_t s) {
    return s >= 0 ? productive[s] != 0 : terminal_productive(terminals_[-(s + 1)]);
  };
  // An unordered rule's usable items, and whether it is productive, given `productive`.
  auto update_unordered = [&](UnorderedRule& r) {
    r.usable.assign(r.words(), 0);
    for (size_t i = 0; i < r.items.size(); ++i) {
      if (productive[r.items[i]]) r.usable[i >> 6] |= uint64_t{1} << (i & 63);
    }
    r.repeatable_usable = r.repeatable >= 0 && productive[r.repeatable];
    r.effective_max = r.max_count;
    if (!productive[r.separator]) r.effective_max = r.max_count < 0 ? 1 : std::min(r.max_count, 1);
    return r.productive();
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& r : unordered_) {
      if (!productive[r.nonterminal] && update_unordered(r)) {
        productive[r.nonterminal] = 1;
        changed = true;
      }
    }
    for (const auto& p : productions) {
      if (productive[p[0]]) continue;
      if (std::all_of(p.begin() + 1, p.end(), sym_productive)) {
        productive[p[0]] = 1;
        changed = true;
      }
    }
  }
  if (!productive[start]) throw Error(ErrorKind::EmptyLanguage, "the grammar's language is empty");
  for (auto& r : unordered_) {
    update_unordered(r);
    // Counts only matter up to the largest bound that is checked.
    const int32_t cap = r.effective_max >= 0 ? r.effective_max : r.min_count;
    r.count_cap = static_cast<uint32_t>(std::max(cap, 0));
  }

  // Nullable nonterminals (fixpoint).
  nullable_.assign(nt_count, 0);
  auto sym_nullable = [&](int32_t s) { return s >= 0 ? nullable_[s] != 0 : terminal_nullable(terminals_[-(s + 1)]); };
  for (const auto& r : unordered_) {
    bool none_required = std::all_of(r.required.begin(), r.required.end(), [](uint64_t w) { return w == 0; });
    if (productive[r.nonterminal] && none_required && r.min_count == 0) nullable_[r.nonterminal] = 1;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& p : productions) {
      if (nullable_[p[0]]) continue;
      if (std::all_of(p.begin() + 1, p.end(), sym_productive) && std::all_of(p.begin() + 1, p.end(), sym_nullable)) {
        nullable_[p[0]] = 1;
        changed = true;
      }
    }
  }

  // An unordered rule never completes at its origin, so its parts must not derive the empty string.
  for (const auto& r : unordered_) {
    if (!productive[r.nonterminal]) continue;
    bool bad = nullable_[r.separator] || (r.repeatable >= 0 && nullable_[r.repeatable]);
    for (int32_t s : r.items) bad = bad || nullable_[s];
    if (bad) throw Error(ErrorKind::InvalidArgument, "the items and separator of an unordered rule must not be nullable");
  }

  // Dotted rules: the augmented start S' -> S gets ids 0 and 1; S' has id nt_count.
  predictions_.assign(nt_count + 1, {});
  auto add_production = [&](int32_t lhs, const int32_t* rhs, size_t n) {
    uint32_t base = static_cast<uint32_t>(next_symbol_.size());
    for (size_t i = 0; i < n; ++i) {
      next_symbol_.push_back(rhs[i]);
      lhs_.push_back(lhs);
    }
    next_symbol_.push_back(kEnd);
    lhs_.push_back(lhs);
    predictions_[lhs].push_back(base);
    ++num_productions_;
  };
  add_production(nt_count, &start, 1);
  nullable_.push_back(nullable_[start]);
  for (const auto& p : productions) {
    if (!std::all_of(p.begin() + 1, p.end(), sym_productive)) continue;
    add_production(p[0], p.data() + 1, p.size() - 1);
  }

  if (limits_.mask_cache_bytes > 0) {
    mask_cache_ = std::make_unique<MaskCache>(static_cast<size_t>(limits_.mask_cache_bytes), meter);
  }
  if (limits_.head_index_bytes > 0) {
    head_indexes_ = std::make_unique<HeadIndexCache>(static_cast<size_t>(limits_.head_index_bytes), meter);
  }

  for (int32_t t = 0; t < t_count; ++t) {
    if (terminals_[t].dfa != nullptr) continue;
    uint32_t id = static_cast<uint32_t>(terminals_[t].special_token);
    auto it = std::find_if(specials_.begin(), specials_.end(), [&](const auto& e) { return e.first == id; });
    if (it == specials_.end()) {
      specials_.push_back({id, {t}});
    } else {
      it->second.push_back(t);
    }
  }
}

bool CompiledGrammar::nullable_symbol(int32_t sym) const {
  return sym >= 0 ? nullable_[sym] != 0 : terminal_nullable(terminals_[-(sym + 1)]);
}

const std::vector<int32_t>& CompiledGrammar::special_terminals(uint32_t token_id) const {
  static const std::vector<int32_t> kNone;
  for (const auto& e : specials_) {
    if (e.first == token_id) return e.second;
  }
  return kNone;
}

bool CompiledGrammar::mentions_special(uint32_t token_id) const { return !special_terminals(token_id).empty(); }

size_t CompiledGrammar::memory_bytes() const {
  size_t n = sizeof(*this) + 8 * next_symbol_.capacity();
  if (mask_cache_) n += mask_cache_->memory_bytes();
  if (head_indexes_) n += head_indexes_->memory_bytes();
  for (const auto& p : predictions_) n += 4 * p.capacity() + sizeof(p);
  for (const auto& t : terminals_) {
    if (t.counted) {
      n += t.counted->memory_bytes();
    } else if (t.dfa) {
      n += t.dfa->memory_bytes();
    }
  }
  return n;
}

}  // namespace tokensieve
