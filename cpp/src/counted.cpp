#include "tokensieve/counted.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "state_tokens_builder.hpp"
#include "tokensieve/error.hpp"

namespace tokensieve {

// Walks the loop automaton with the two gaps instead of the count: a tick brings both closer.
// Clamped gaps stay exact within one token: a far min gap (L + 1) never reaches 0 in L ticks,
// a far max gap (L + 2) never reaches 1.
struct CountedTerminal::GapWalk {
  struct State {
    int32_t d;
    int32_t min_gap;
    int32_t max_gap;
  };
  const CountedTerminal& c;

  State next(const State& s, uint8_t byte) const {
    const int32_t d2 = c.loop_->next(s.d, byte);
    if (d2 == kDead) return {kDead, 0, 0};
    State out{d2, s.min_gap, s.max_gap};
    if (c.ticks(s.d, byte)) {
      out.min_gap = std::max(out.min_gap - 1, 0);
      if (--out.max_gap < 0) return {kDead, 0, 0};
    }
    if (!c.edge_allowed(s.d, d2, out.min_gap, out.max_gap)) return {kDead, 0, 0};
    return out;
  }
  bool dead(const State& s) const { return s.d == kDead; }
  bool accepting(const State& s) const {
    return c.loop_->accepting(s.d) && (c.phase_[s.d] == kSuffix || s.min_gap == 0);
  }
};

namespace {

// Checks one piece of the loop; `what` names it in the error.
void check_piece(const Dfa& dfa, const char* what, bool allow_nullable, bool need_prefix_free) {
  auto bad = [what](const std::string& why) {
    throw Error(ErrorKind::InvalidArgument, std::string("counted repetition: the ") + what + " " + why);
  };
  if (dfa.start() == Dfa::kDead) bad("matches nothing");
  if (!allow_nullable && dfa.nullable()) bad("must not match the empty string");
  if (need_prefix_free) {
    for (int32_t q = 0; q < dfa.num_states(); ++q) {
      if (dfa.accepting(q) && dfa.has_successor(q)) bad("must be prefix-free (a word of it extends another)");
    }
  }
}

}  // namespace

CountedTerminal::CountedTerminal(const Dfa* prefix, const Dfa& item, int32_t min, int32_t max, const Dfa* suffix,
                                 std::shared_ptr<const Vocabulary> vocab, std::shared_ptr<const TokenSlice> slice,
                                 size_t max_boundary_nodes)
    : min_(min), max_(max), max_boundary_nodes_(max_boundary_nodes), vocab_(std::move(vocab)) {
  if (min < 0 || max < kUnbounded || max == 0 || (max != kUnbounded && max < min)) {
    throw Error(ErrorKind::InvalidArgument,
                "counted repetition: bad bounds {" + std::to_string(min) + "," + std::to_string(max) + "}");
  }
  check_piece(item, "item", false, true);
  if (prefix != nullptr) {
    check_piece(*prefix, "prefix", true, true);
    if (prefix->nullable()) prefix = nullptr;  // prefix-free and nullable: only the empty string
  }
  if (suffix != nullptr) check_piece(*suffix, "suffix", true, false);

  // Loop states: B = 0, then the prefix's and the item's non-accepting states, then the suffix's.
  std::vector<int32_t> prefix_id(prefix ? static_cast<size_t>(prefix->num_states()) : 0, boundary_);
  std::vector<int32_t> item_id(static_cast<size_t>(item.num_states()), boundary_);
  std::vector<int32_t> suffix_id(suffix ? static_cast<size_t>(suffix->num_states()) : 0, kDead);
  phase_.assign(1, kBoundary);
  auto number = [&](std::vector<int32_t>& ids, const Dfa& dfa, Phase phase, bool skip_accepting) {
    for (int32_t q = 0; q < dfa.num_states(); ++q) {
      if (skip_accepting && dfa.accepting(q)) continue;
      ids[q] = static_cast<int32_t>(phase_.size());
      phase_.push_back(phase);
    }
  };
  if (prefix) number(prefix_id, *prefix, kPrefix, true);
  number(item_id, item, kItem, true);
  if (suffix) number(suffix_id, *suffix, kSuffix, false);
  num_loop_states_ = static_cast<int32_t>(phase_.size());
  const int32_t cap = max_ == kUnbounded ? min_ : max_;
  if (static_cast<int64_t>(cap + 1) * num_loop_states_ > std::numeric_limits<int32_t>::max()) {
    throw Error(ErrorKind::LimitExceeded, "counted repetition: too many counter states", "max_dfa_states");
  }

  // Byte classes: the common refinement of the pieces' classes.
  std::vector<uint8_t> class_of(256);
  std::vector<int> representative;
  {
    std::vector<std::pair<uint32_t, int>> seen;  // (pieces' classes, our class)
    for (int b = 0; b < 256; ++b) {
      const auto byte = static_cast<uint8_t>(b);
      const uint32_t key = (static_cast<uint32_t>(prefix ? prefix->class_of(byte) : 0) << 16) |
                           (static_cast<uint32_t>(item.class_of(byte)) << 8) | (suffix ? suffix->class_of(byte) : 0);
      auto it = std::find_if(seen.begin(), seen.end(), [key](const auto& e) { return e.first == key; });
      if (it == seen.end()) {
        seen.emplace_back(key, static_cast<int>(representative.size()));
        representative.push_back(b);
        class_of[b] = static_cast<uint8_t>(representative.size() - 1);
      } else {
        class_of[b] = static_cast<uint8_t>(it->second);
      }
    }
  }
  const int32_t classes = static_cast<int32_t>(representative.size());
  const size_t row = static_cast<size_t>(classes);
  std::vector<int32_t> trans(static_cast<size_t>(num_loop_states_) * row, kDead);
  tick_.assign(trans.size(), 0);
  auto set = [&](int32_t from, int32_t c, int32_t to, bool tick) {
    const size_t k = static_cast<size_t>(from) * row + static_cast<size_t>(c);
    if (trans[k] != kDead) {
      throw Error(ErrorKind::InvalidArgument,
                  "counted repetition: the item and what follows the repetition start with a common byte");
    }
    trans[k] = to;
    tick_[k] = tick ? 1 : 0;
  };
  for (int32_t c = 0; c < classes; ++c) {
    const auto r = static_cast<uint8_t>(representative[c]);
    auto item_edge = [&](int32_t from_loop, int32_t from_item) {
      const int32_t t = item.next(from_item, r);
      if (t != Dfa::kDead) set(from_loop, c, item_id[t], item.accepting(t));
    };
    auto suffix_edge = [&](int32_t from_loop, int32_t from_suffix) {
      const int32_t t = suffix->next(from_suffix, r);
      if (t != Dfa::kDead) set(from_loop, c, suffix_id[t], false);
    };
    item_edge(boundary_, item.start());
    if (suffix) suffix_edge(boundary_, suffix->start());
    for (int32_t q = 0; q < item.num_states(); ++q) {
      if (!item.accepting(q)) item_edge(item_id[q], q);
    }
    if (prefix) {
      for (int32_t q = 0; q < prefix->num_states(); ++q) {
        if (prefix->accepting(q)) continue;
        const int32_t t = prefix->next(q, r);
        if (t != Dfa::kDead) set(prefix_id[q], c, prefix_id[t], false);  // accepting prefix states map to B
      }
    }
    if (suffix) {
      for (int32_t q = 0; q < suffix->num_states(); ++q) suffix_edge(suffix_id[q], q);
    }
  }
  for (int32_t c = 0; c < classes; ++c) {
    if (trans[static_cast<size_t>(boundary_) * row + c] != kDead && phase_[trans[static_cast<size_t>(boundary_) * row + c]] == kSuffix) {
      boundary_to_suffix_ = true;
    }
  }
  std::vector<uint8_t> accepting(static_cast<size_t>(num_loop_states_), 0);
  accepting[boundary_] = suffix == nullptr || suffix->nullable() ? 1 : 0;
  if (suffix) {
    for (int32_t q = 0; q < suffix->num_states(); ++q) accepting[suffix_id[q]] = suffix->accepting(q) ? 1 : 0;
  }
  const int32_t start = prefix ? prefix_id[prefix->start()] : boundary_;
  loop_ = std::make_shared<Dfa>(classes, std::move(class_of), std::move(trans), std::move(accepting), start);

  longest_token_ = static_cast<int32_t>(vocab_->trie().max_depth());
  if (longest_token_ > 60'000) {
    throw Error(ErrorKind::InvalidArgument, "counted repetition: tokens longer than 60000 bytes are not supported");
  }
  slice_ = std::move(slice);
  far_ = std::make_shared<DfaTokenIndex>(loop_, vocab_, slice_, max_boundary_nodes_);
  slice_counts_items_ = check_slice_counts_items();
}

// Every string of the slice's plain language read from B must keep D alive and not accepting,
// and tick exactly when a character completes, which must bring D back to B.
bool CountedTerminal::check_slice_counts_items() const {
  if (slice_ == nullptr || loop_->accepting(boundary_)) return false;
  return slice_->all_plain_strings(boundary_, *loop_, [this](int32_t d, uint8_t byte, bool completes) {
    const int32_t d2 = loop_->next(d, byte);
    if (d2 == kDead || loop_->accepting(d2)) return kDead;
    if (ticks(d, byte) != completes || (completes && d2 != boundary_)) return kDead;
    return d2;
  });
}

int32_t CountedTerminal::next(int32_t state, uint8_t byte) const {
  const int32_t d = loop_state(state);
  int32_t n = count(state);
  const int32_t d2 = loop_->next(d, byte);
  if (d2 == kDead) return kDead;
  if (ticks(d, byte)) {
    ++n;
    if (max_ == kUnbounded) {
      n = std::min(n, min_);
    } else if (n > max_) {
      return kDead;
    }
  }
  const int32_t max_gap = max_ == kUnbounded ? std::numeric_limits<int32_t>::max() : max_ - n;
  if (!edge_allowed(d, d2, std::max(min_ - n, 0), max_gap)) return kDead;
  return n * num_loop_states_ + d2;
}

bool CountedTerminal::accepting(int32_t state) const {
  const int32_t d = loop_state(state);
  return loop_->accepting(d) && (phase_[d] == kSuffix || count(state) >= min_);
}

bool CountedTerminal::has_successor(int32_t state) const {
  const int32_t d = loop_state(state), n = count(state);
  switch (phase_[d]) {
    case kPrefix:
    case kItem:
      return true;
    case kSuffix:
      return loop_->has_successor(d);
    case kBoundary:
      return max_ == kUnbounded || n < max_ || (boundary_to_suffix_ && n >= min_);
  }
  return false;
}

int32_t CountedTerminal::min_gap(int32_t n) const { return std::min(std::max(min_ - n, 0), longest_token_ + 1); }

int32_t CountedTerminal::max_gap(int32_t n) const {
  return max_ == kUnbounded ? longest_token_ + 2 : std::min(max_ - n, longest_token_ + 2);
}

std::shared_ptr<const StateTokens> CountedTerminal::tokens(int32_t state) const {
  const int32_t d = loop_state(state), n = count(state);
  if (far(d, n)) return far_->get(d);
  const int32_t lo = min_gap(n), hi = max_gap(n);
  const uint64_t key = (static_cast<uint64_t>(d) << 32) | (static_cast<uint64_t>(lo) << 16) | static_cast<uint64_t>(hi);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = near_.find(key);
    if (it != near_.end()) return it->second;
  }
  // Built outside the lock; two threads racing on one key build equal entries.
  std::shared_ptr<const StateTokens> entry;
  if (d == boundary_ && slice_counts_items_) {
    const std::vector<uint32_t> seed = slice_->bits_up_to(static_cast<uint32_t>(hi));
    entry = detail::build_state_tokens(GapWalk{*this}, GapWalk::State{d, lo, hi}, *vocab_, slice_->rest(), &seed,
                                        max_boundary_nodes_);
  } else {
    entry = detail::build_state_tokens(GapWalk{*this}, GapWalk::State{d, lo, hi}, *vocab_, vocab_->trie(), nullptr,
                                        max_boundary_nodes_);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  return near_.emplace(key, std::move(entry)).first->second;
}

uint32_t CountedTerminal::index_key(int32_t state) const {
  const int64_t width = static_cast<int64_t>(longest_token_) + 3;
  if ((width * width + width) * num_loop_states_ >= std::numeric_limits<int32_t>::max()) {
    return static_cast<uint32_t>(state);
  }
  const int32_t d = loop_state(state), n = count(state);
  const int64_t gaps = far(d, n) ? longest_token_ + 2 : min_gap(n) * width + max_gap(n);
  return static_cast<uint32_t>(gaps * num_loop_states_ + d);
}

size_t CountedTerminal::memory_bytes() const {
  size_t total = sizeof(*this) + loop_->memory_bytes() + tick_.capacity() + phase_.capacity() + far_->memory_bytes();
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [key, entry] : near_) total += sizeof(key) + entry->memory_bytes();
  return total;
}

}  // namespace tokensieve
