#include "tokensieve/counted.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "state_tokens_builder.hpp"
#include "tokensieve/error.hpp"
#include "tokensieve/hash_mix.hpp"

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

// Bounds the item states of a counted automaton (tuples of its labels' states).
constexpr size_t kMaxUnitLoopStates = 200'000;

// A hash of a tuple of label states, for the map from tuples to item states.
struct TupleHash {
  size_t operator()(const std::vector<int32_t>& tuple) const {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ tuple.size();
    for (int32_t s : tuple) h = (h ^ static_cast<uint32_t>(s)) * 0x100000001B3ull;  // FNV-1a over words
    return static_cast<size_t>(detail::mix(h));
  }
};

// The common refinement of the pieces' byte classes: bytes that fall in one class of every
// piece. Returns each byte's class and one byte per class, classes numbered by first byte.
std::pair<std::vector<uint8_t>, std::vector<uint8_t>> refine_classes(const std::vector<const Dfa*>& pieces) {
  std::vector<uint8_t> class_of(256), representative;
  std::map<std::vector<uint8_t>, int32_t> seen;
  std::vector<uint8_t> signature(pieces.size());
  for (int b = 0; b < 256; ++b) {
    for (size_t i = 0; i < pieces.size(); ++i) signature[i] = pieces[i]->class_of(static_cast<uint8_t>(b));
    auto [it, inserted] = seen.try_emplace(signature, static_cast<int32_t>(representative.size()));
    if (inserted) representative.push_back(static_cast<uint8_t>(b));
    class_of[b] = static_cast<uint8_t>(it->second);
  }
  return {std::move(class_of), std::move(representative)};
}

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

// The item states of a unit state with the given labels, as the walk over tuples of the
// labels' states finds them (state 0 is the boundary, the start tuple; the others are numbered
// as found). steps[j * classes + c]: what class c does in state j: 0 nothing (no label goes on;
// state 0 is never a target), j2 > 0 a move to item state j2, kComplete - i (<= kComplete) the
// completion of label i's unit. live[j]: the labels still running in item state j.
struct ItemTemplate {
  static constexpr int32_t kComplete = -1;
  std::vector<int32_t> steps;
  std::vector<std::vector<int32_t>> live;
};

template <typename Bad>
ItemTemplate item_template(const std::vector<const Dfa*>& labels, const std::vector<uint8_t>& representative,
                           const Bad& bad) {
  const size_t row = representative.size();
  ItemTemplate out;
  std::unordered_map<std::vector<int32_t>, int32_t, TupleHash> ids;
  std::vector<std::pair<std::vector<int32_t>, int32_t>> todo;
  std::vector<int32_t> start_tuple;
  for (const Dfa* label : labels) start_tuple.push_back(label->start());
  todo.emplace_back(start_tuple, 0);
  out.live.emplace_back();
  out.steps.assign(row, 0);
  std::vector<int32_t> next;  // (one buffer for every step: a vector per step was most of the cost)
  while (!todo.empty()) {
    auto [tuple, id] = std::move(todo.back());
    todo.pop_back();
    for (size_t c = 0; c < row; ++c) {
      const uint8_t r = representative[c];
      next.assign(tuple.size(), Dfa::kDead);
      int32_t live = 0, done = -1;
      for (size_t i = 0; i < tuple.size(); ++i) {
        if (tuple[i] == Dfa::kDead) continue;
        next[i] = labels[i]->next(tuple[i], r);
        if (next[i] == Dfa::kDead) continue;
        ++live;
        if (labels[i]->accepting(next[i])) done = static_cast<int32_t>(i);
      }
      if (live == 0) continue;
      if (done >= 0) {
        if (live > 1) bad("the units leaving a state must match disjoint words");
        out.steps[static_cast<size_t>(id) * row + c] = ItemTemplate::kComplete - done;
        continue;
      }
      auto [it, inserted] = ids.try_emplace(next, 0);
      if (inserted) {
        if (out.live.size() >= kMaxUnitLoopStates) {
          throw Error(ErrorKind::LimitExceeded, "counted automaton: too many loop states", "max_dfa_states");
        }
        it->second = static_cast<int32_t>(out.live.size());
        out.live.emplace_back();
        for (size_t i = 0; i < next.size(); ++i) {
          if (next[i] != Dfa::kDead) out.live.back().push_back(static_cast<int32_t>(i));
        }
        out.steps.resize(out.steps.size() + row, 0);
        todo.emplace_back(next, it->second);
      }
      out.steps[static_cast<size_t>(id) * row + c] = it->second;
    }
  }
  return out;
}

}  // namespace

CountedTerminal::CountedTerminal(const Dfa* prefix, const Dfa& item, int32_t min, int32_t max, const Dfa* suffix,
                                 std::shared_ptr<const Vocabulary> vocab, std::shared_ptr<const TokenSlice> slice,
                                 size_t max_boundary_nodes)
    : min_(min), max_(max), max_boundary_nodes_(max_boundary_nodes), vocab_(std::move(vocab)) {
  check_bounds();
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

  // Byte classes: the common refinement of the pieces' classes.
  std::vector<const Dfa*> pieces{&item};
  if (prefix) pieces.push_back(prefix);
  if (suffix) pieces.push_back(suffix);
  std::vector<uint8_t> class_of, representative;
  std::tie(class_of, representative) = refine_classes(pieces);
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
    const uint8_t r = representative[c];
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
  std::vector<uint8_t> accepting(static_cast<size_t>(num_loop_states_), 0);
  accepting[boundary_] = suffix == nullptr || suffix->nullable() ? 1 : 0;
  if (suffix) {
    for (int32_t q = 0; q < suffix->num_states(); ++q) accepting[suffix_id[q]] = suffix->accepting(q) ? 1 : 0;
  }
  for (int32_t c = 0; c < classes; ++c) {
    const int32_t t = trans[static_cast<size_t>(boundary_) * row + c];
    if (t != kDead && phase_[t] == kSuffix) boundary_exits_ = true;
  }
  const int32_t start = prefix ? prefix_id[prefix->start()] : boundary_;
  // Every tick count from the fewest on finishes (the item repeats freely): B from 0, an item
  // state from 1, a prefix state from 0.
  cofinite_.assign(phase_.size(), 0);
  for (size_t d = 0; d < phase_.size(); ++d) cofinite_[d] = phase_[d] == kItem ? 1 : 0;
  horizon_ = 1;
  short_.assign(phase_.size() * 2, 0);
  finish_loop(std::move(class_of), std::move(representative), std::move(trans), std::move(accepting), start,
              std::move(slice));
}

CountedTerminal::CountedTerminal(const Dfa* prefix, int32_t num_units, const std::vector<uint8_t>& unit_accepting,
                                 const std::vector<UnitEdge>& edges, int32_t min, int32_t max, const Dfa* suffix,
                                 std::shared_ptr<const Vocabulary> vocab, std::shared_ptr<const TokenSlice> slice,
                                 size_t max_boundary_nodes)
    : boundary_(kDead), min_(min), max_(max), max_boundary_nodes_(max_boundary_nodes), vocab_(std::move(vocab)) {
  auto bad = [](const std::string& why) { throw Error(ErrorKind::InvalidArgument, "counted automaton: " + why); };
  check_bounds();
  if (num_units <= 0 || unit_accepting.size() != static_cast<size_t>(num_units)) bad("needs unit states");
  std::vector<std::vector<size_t>> out(static_cast<size_t>(num_units));  // edge indices by source
  for (size_t i = 0; i < edges.size(); ++i) {
    const UnitEdge& e = edges[i];
    if (e.from < 0 || e.from >= num_units || e.to < 0 || e.to >= num_units || e.label == nullptr) bad("bad edge");
    check_piece(*e.label, "unit", false, true);
    out[e.from].push_back(i);
  }
  if (prefix != nullptr) {
    check_piece(*prefix, "prefix", true, true);
    if (prefix->nullable()) prefix = nullptr;
  }
  if (suffix != nullptr) check_piece(*suffix, "suffix", true, false);
  // R[k]: the unit states that finish in exactly k more units. R[k + 1] is a function of R[k],
  // so once two consecutive layers are equal all later ones are: from there on, each state
  // finishes in every number of units or in none. A counter needs that to happen early.
  std::vector<std::vector<uint8_t>> layers{std::vector<uint8_t>(unit_accepting.begin(), unit_accepting.end())};
  for (;;) {
    const std::vector<uint8_t>& r = layers.back();
    std::vector<uint8_t> next(r.size(), 0);
    for (const UnitEdge& e : edges) {
      if (r[e.to]) next[e.from] = 1;
    }
    if (next == r) break;
    if (layers.size() > 4 * static_cast<size_t>(num_units) + 64 || layers.size() > 4096) {
      bad("the lengths that finish from a state do not settle into all or none");
    }
    layers.push_back(std::move(next));
  }
  const auto settled = static_cast<int32_t>(layers.size()) - 1;  // layers[settled] repeats forever
  horizon_ = settled + 1;  // item states finish one unit later than their targets
  // Units that never finish take no part: edges into them are dropped.
  std::vector<uint8_t> finishing(static_cast<size_t>(num_units), 0);
  for (const auto& layer : layers) {
    for (int32_t q = 0; q < num_units; ++q) finishing[q] |= layer[q];
  }
  for (auto& from : out) {
    from.erase(std::remove_if(from.begin(), from.end(), [&](size_t i) { return !finishing[edges[i].to]; }),
               from.end());
  }
  // Byte classes: the common refinement of every piece's classes.
  std::vector<const Dfa*> pieces;
  if (prefix) pieces.push_back(prefix);
  if (suffix) pieces.push_back(suffix);
  for (const UnitEdge& e : edges) pieces.push_back(e.label);
  std::sort(pieces.begin(), pieces.end());  // (the same label on many edges: refined once)
  pieces.erase(std::unique(pieces.begin(), pieces.end()), pieces.end());
  std::vector<uint8_t> class_of, representative;
  std::tie(class_of, representative) = refine_classes(pieces);
  const size_t row = representative.size();
  std::vector<int32_t> trans;
  auto add_state = [&](Phase phase) {
    if (phase_.size() >= kMaxUnitLoopStates) {
      throw Error(ErrorKind::LimitExceeded, "counted automaton: too many loop states", "max_dfa_states");
    }
    phase_.push_back(phase);
    trans.resize(trans.size() + row, kDead);
    tick_.resize(tick_.size() + row, 0);
    return static_cast<int32_t>(phase_.size() - 1);
  };
  auto set = [&](int32_t from, size_t c, int32_t to, bool tick) {
    const size_t k = static_cast<size_t>(from) * row + c;
    if (trans[k] != kDead) bad("a unit and what follows the loop start with a common byte");
    trans[k] = to;
    tick_[k] = tick ? 1 : 0;
  };
  // Loop states: B_q = q, then the prefix's non-accepting states, the suffix's, and item states.
  for (int32_t q = 0; q < num_units; ++q) add_state(kBoundary);
  std::vector<int32_t> prefix_id(prefix ? static_cast<size_t>(prefix->num_states()) : 0, 0);
  if (prefix) {
    for (int32_t q = 0; q < prefix->num_states(); ++q) {
      if (!prefix->accepting(q)) prefix_id[q] = add_state(kPrefix);
    }
  }
  std::vector<int32_t> suffix_id(suffix ? static_cast<size_t>(suffix->num_states()) : 0, kDead);
  if (suffix) {
    for (int32_t q = 0; q < suffix->num_states(); ++q) suffix_id[q] = add_state(kSuffix);
  }
  for (size_t c = 0; c < row; ++c) {
    const uint8_t r = representative[c];
    if (prefix) {
      for (int32_t q = 0; q < prefix->num_states(); ++q) {
        if (prefix->accepting(q)) continue;
        const int32_t t = prefix->next(q, r);
        if (t != Dfa::kDead) set(prefix_id[q], c, prefix_id[t], false);  // accepting prefix states map to B_0
      }
    }
    if (suffix) {
      for (int32_t q = 0; q < suffix->num_states(); ++q) {
        const int32_t t = suffix->next(q, r);
        if (t != Dfa::kDead) set(suffix_id[q], c, suffix_id[t], false);
      }
      const int32_t t = suffix->next(suffix->start(), r);
      if (t != Dfa::kDead) {
        for (int32_t q = 0; q < num_units; ++q) {
          if (unit_accepting[q]) set(q, c, suffix_id[t], false);
        }
      }
    }
  }
  // Item states of unit state q: the states of q's labels, run side by side (kDead once a
  // label can no longer match). The start tuple is B_q itself. Unit states whose labels are
  // the same automata (a word-count pattern's: "a non-space character", "a space") have the
  // same item states but for the units they complete into, so the walk over the tuples is
  // made once per list of labels (an ItemTemplate) and laid out for each unit state.
  std::map<int32_t, std::vector<int32_t>> item_targets;  // the units an item state may complete into
  std::map<std::vector<const Dfa*>, ItemTemplate> templates;
  std::vector<const Dfa*> label_dfas;
  for (int32_t q = 0; q < num_units; ++q) {
    const std::vector<size_t>& labels = out[q];
    label_dfas.clear();
    for (size_t i : labels) label_dfas.push_back(edges[i].label);
    auto found = templates.find(label_dfas);
    if (found == templates.end()) {
      found = templates.emplace(label_dfas, item_template(label_dfas, representative, bad)).first;
    }
    const ItemTemplate& item = found->second;
    const auto first = static_cast<int32_t>(phase_.size());  // item state j is first + j - 1
    for (size_t j = 1; j < item.live.size(); ++j) add_state(kItem);
    auto id = [&](int32_t j) { return j == 0 ? q : first + j - 1; };
    for (int32_t j = 0; j < static_cast<int32_t>(item.live.size()); ++j) {
      for (size_t c = 0; c < row; ++c) {
        const int32_t step = item.steps[static_cast<size_t>(j) * row + c];
        if (step > 0) {
          set(id(j), c, id(step), false);
        } else if (step <= ItemTemplate::kComplete) {
          set(id(j), c, edges[labels[ItemTemplate::kComplete - step]].to, true);  // tick into B_to
        }
      }
      if (j > 0) {
        std::vector<int32_t>& to = item_targets[id(j)];
        for (int32_t i : item.live[j]) to.push_back(edges[labels[i]].to);
      }
    }
  }
  std::vector<uint8_t> accepting(phase_.size(), 0);
  for (int32_t q = 0; q < num_units; ++q) {
    accepting[q] = unit_accepting[q] && (suffix == nullptr || suffix->nullable()) ? 1 : 0;
  }
  if (suffix) {
    for (int32_t q = 0; q < suffix->num_states(); ++q) accepting[suffix_id[q]] = suffix->accepting(q) ? 1 : 0;
  }
  // Finishing tick counts: B_q from the layers; an item state one more than the units it may
  // complete into; a prefix state as B_0.
  const auto width = static_cast<size_t>(horizon_) + 1;
  cofinite_.assign(phase_.size(), kNever);
  short_.assign(phase_.size() * width, 0);
  for (int32_t q = 0; q < num_units; ++q) {
    if (layers[settled][q]) {
      int32_t u = settled;
      while (u > 0 && layers[u - 1][q]) --u;
      cofinite_[q] = u;
    }
    for (int32_t k = 0; k <= settled; ++k) short_[q * width + k] = layers[k][q];
  }
  for (const auto& [d, targets] : item_targets) {
    for (int32_t to : targets) {
      if (cofinite_[to] != kNever) cofinite_[d] = std::min(cofinite_[d], cofinite_[to] + 1);
      for (int32_t k = 1; k <= horizon_; ++k) short_[d * width + k] |= short_[to * width + k - 1];
    }
  }
  for (size_t d = 0; d < phase_.size(); ++d) {
    if (phase_[d] != kPrefix) continue;
    cofinite_[d] = cofinite_[0];
    std::copy(short_.begin(), short_.begin() + static_cast<std::ptrdiff_t>(width),
              short_.begin() + static_cast<std::ptrdiff_t>(d * width));
  }
  const int32_t start = prefix ? prefix_id[prefix->start()] : 0;
  finish_loop(std::move(class_of), std::move(representative), std::move(trans), std::move(accepting), start,
              std::move(slice));
}

void CountedTerminal::check_bounds() const {
  if (min_ < 0 || max_ < kUnbounded || max_ == 0 || (max_ != kUnbounded && max_ < min_)) {
    throw Error(ErrorKind::InvalidArgument,
                "counted repetition: bad bounds {" + std::to_string(min_) + "," + std::to_string(max_) + "}");
  }
}

void CountedTerminal::finish_loop(std::vector<uint8_t> class_of, std::vector<uint8_t> representative,
                                  std::vector<int32_t> trans, std::vector<uint8_t> accepting, int32_t start,
                                  std::shared_ptr<const TokenSlice> slice) {
  num_loop_states_ = static_cast<int32_t>(phase_.size());
  const int32_t cap = max_ == kUnbounded ? min_ : max_;
  if (static_cast<int64_t>(cap + 1) * num_loop_states_ > std::numeric_limits<int32_t>::max()) {
    throw Error(ErrorKind::LimitExceeded, "counted repetition: too many counter states", "max_dfa_states");
  }
  empty_ = phase_[start] != kSuffix && !finishes(start, min_, max_ == kUnbounded ? kNever - 1 : max_);
  if (!empty_) {  // every state reachable from the start can still finish (the matcher relies on it)
    const size_t row = representative.size();
    std::vector<uint8_t> seen(static_cast<size_t>(num_loop_states_), 0);
    std::vector<int32_t> todo{start};
    seen[start] = 1;
    while (!todo.empty()) {
      const int32_t d = todo.back();
      todo.pop_back();
      if (phase_[d] != kSuffix && !finishes(d, 0, kNever - 1)) {
        throw Error(ErrorKind::InvalidArgument, "counted repetition: a state of the loop can never finish");
      }
      for (size_t c = 0; c < row; ++c) {
        const int32_t t = trans[static_cast<size_t>(d) * row + c];
        if (t != kDead && !seen[t]) {
          seen[t] = 1;
          todo.push_back(t);
        }
      }
    }
  }
  const auto classes = static_cast<int32_t>(representative.size());
  representative_ = std::move(representative);
  loop_ = std::make_shared<Dfa>(classes, std::move(class_of), std::move(trans), std::move(accepting), start);

  longest_token_ = static_cast<int32_t>(vocab_->trie().max_depth());
  if (longest_token_ > 60'000) {
    throw Error(ErrorKind::InvalidArgument, "counted repetition: tokens longer than 60000 bytes are not supported");
  }
  slice_ = std::move(slice);
  far_ = std::make_shared<DfaTokenIndex>(loop_, vocab_, slice_, max_boundary_nodes_);
  slice_counts_items_ = check_slice_counts_items();
}

bool CountedTerminal::finishes(int32_t d, int32_t min_gap, int32_t max_gap) const {
  const int32_t u = cofinite_[d];
  if (u != kNever && max_gap >= std::max(min_gap, u)) return true;
  const int32_t hi = std::min({max_gap, u == kNever ? horizon_ : u - 1, horizon_});
  const size_t row = static_cast<size_t>(d) * (static_cast<size_t>(horizon_) + 1);
  for (int32_t t = std::max(min_gap, 0); t <= hi; ++t) {
    if (short_[row + static_cast<size_t>(t)]) return true;
  }
  return false;
}

// Every string of the slice's plain language read from B must keep D alive and not accepting,
// and tick exactly when a character completes, which must bring D back to B.
bool CountedTerminal::check_slice_counts_items() const {
  if (slice_ == nullptr || boundary_ == kDead || loop_->accepting(boundary_)) return false;
  return slice_->all_plain_strings(boundary_, *loop_, [this](int32_t d, uint8_t byte, bool completes) {
    const int32_t d2 = loop_->next(d, byte);
    if (d2 == kDead || loop_->accepting(d2)) return kDead;
    if (ticks(d, byte) != completes || (completes && d2 != boundary_)) return kDead;
    return d2;
  });
}

int32_t CountedTerminal::slice_chars(int32_t d, int32_t min_gap, int32_t max_gap) const {
  if (slice_ == nullptr || loop_->accepting(d)) return -1;
  // Strings of the slice that tick would change the gaps, and the loop automaton's accepting
  // states may not accept (too few items): both are left to the walk.
  return slice_->char_horizon(d, *loop_, [&](int32_t q, uint8_t byte) {
    const int32_t q2 = loop_->next(q, byte);
    if (q2 == kDead) return kDead;
    if (ticks(q, byte) || loop_->accepting(q2)) return TokenSlice::kFail;
    return edge_allowed(q, q2, min_gap, max_gap) ? q2 : kDead;
  }, longest_token_);
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
  if (phase_[d] == kSuffix) return loop_->has_successor(d);
  if (boundary_ != kDead) {  // a repetition: only B depends on the count
    if (phase_[d] != kBoundary) return true;
    return max_ == kUnbounded || n < max_ || (boundary_exits_ && n >= min_);
  }
  if (far(d, n)) return loop_->has_successor(d);  // every edge of D is allowed
  for (uint8_t byte : representative_) {  // near a bound: try each byte class
    if (next(state, byte) != kDead) return true;
  }
  return false;
}

int32_t CountedTerminal::min_gap(int32_t n) const {
  return std::min(std::max(min_ - n, 0), longest_token_ + horizon_);
}

int32_t CountedTerminal::max_gap(int32_t n) const {
  return max_ == kUnbounded ? far_max_gap() : std::min(max_ - n, far_max_gap());
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
  const GapWalk::State gap_start{d, lo, hi};
  if (d == boundary_ && slice_counts_items_) {  // every character an item: hi characters at most
    entry = detail::build_state_tokens(GapWalk{*this}, gap_start, *vocab_, slice_.get(), static_cast<uint32_t>(hi),
                                        max_boundary_nodes_);
  } else if (const int32_t chars = slice_chars(d, lo, hi); chars >= 0) {
    entry = detail::build_state_tokens(GapWalk{*this}, gap_start, *vocab_, slice_.get(), static_cast<uint32_t>(chars),
                                        max_boundary_nodes_);
  } else {
    entry = detail::build_state_tokens(GapWalk{*this}, gap_start, *vocab_, nullptr, 0, max_boundary_nodes_);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  return near_.emplace(key, std::move(entry)).first->second;
}

uint32_t CountedTerminal::index_key(int32_t state) const {
  const int64_t width = static_cast<int64_t>(far_max_gap()) + 1;
  if ((width * width + width) * num_loop_states_ >= std::numeric_limits<int32_t>::max()) {
    return static_cast<uint32_t>(state);
  }
  const int32_t d = loop_state(state), n = count(state);
  const int64_t gaps = far(d, n) ? far_max_gap() : min_gap(n) * width + max_gap(n);
  return static_cast<uint32_t>(gaps * num_loop_states_ + d);
}

size_t CountedTerminal::memory_bytes() const {
  size_t total = sizeof(*this) + loop_->memory_bytes() + tick_.capacity() + phase_.capacity() +
                 cofinite_.capacity() * sizeof(int32_t) + short_.capacity() + representative_.capacity() +
                 far_->memory_bytes();
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [key, entry] : near_) total += sizeof(key) + entry->memory_bytes();
  return total;
}

}  // namespace tokensieve
