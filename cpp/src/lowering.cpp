// The native lowering: see tokensieve/lowering.hpp, and lower.py for the reasons behind each
// rule. Method names follow lower.py's, so that the two read side by side.
#include "tokensieve/lowering.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "tokensieve/error.hpp"

namespace tokensieve {

namespace {

constexpr int64_t kMaxCount = 2147483647;   // ir.MAX_COUNT: counts the parser and counters hold
constexpr int64_t kSaturated = int64_t{1} << 62;  // sizes past this compare as this
constexpr int32_t kOpBytes = 0, kOpSeq = 1, kOpAlt = 2, kOpRepeat = 3, kOpDifference = 5;  // program.py

int64_t sat_add(int64_t a, int64_t b) { return std::min(a + b, kSaturated); }
int64_t sat_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kSaturated / b ? kSaturated : std::min(a * b, kSaturated);
}

int64_t native_max_count(int64_t max) { return max < 0 || max > kMaxCount ? -1 : max; }

Error limit_error(const std::string& message, const char* limit) {
  return Error(ErrorKind::LimitExceeded, message, limit);
}

void put_word(std::string& out, int64_t value) {
  const auto word = static_cast<int32_t>(value);
  out.append(reinterpret_cast<const char*>(&word), sizeof word);
}

// Appends `n` words read from `from` (int64 IR words) as int32 program words, in one resize:
// a byte set's ranges and an automaton's header, word by word through append(), were most of
// the cost of a program.
void put_words(std::string& out, const int64_t* from, int64_t n) {
  const size_t at = out.size();
  out.resize(at + static_cast<size_t>(n) * sizeof(int32_t));
  char* to = &out[at];
  for (int64_t k = 0; k < n; ++k) {
    const auto word = static_cast<int32_t>(from[k]);
    std::memcpy(to + k * static_cast<int64_t>(sizeof word), &word, sizeof word);
  }
}

// A program's identity without its words: their number and their polynomial hash
// (ProgramText::hash), which compose over concatenation, so that a node's is made from its
// parts' in a few operations per part.
struct ProgramKey {
  uint64_t hash = 0;
  uint64_t power = 1;  // kProgramHashBase^words: what a program appended after this one multiplies it by
  int64_t words = 0;

  void append_word(int64_t w) {
    hash = hash * kProgramHashBase + static_cast<uint32_t>(static_cast<int32_t>(w));
    power *= kProgramHashBase;
    ++words;
  }
  void append(const ProgramKey& k) {
    hash = hash * k.power + k.hash;
    power *= k.power;
    words += k.words;
  }
};

int32_t word_at(const std::string& program, int64_t k) {
  int32_t w;
  std::memcpy(&w, program.data() + k * static_cast<int64_t>(sizeof w), sizeof w);
  return w;
}

using Symbols = std::vector<int32_t>;

// What lower.py's _NodeFacts holds that depends on the node alone, derived once per node.
struct Facts {
  IrKind kind;
  int64_t offset;        // the node's first word
  int32_t depth;         // nesting depth of sub-expressions (a reference counts 1)
  bool spelled_out;      // finitely many words, each written down (see lower.py)
  bool seams;            // a Seam inside, references not followed, differences hiding theirs
  bool has_refs;         // a rule reference inside
  int64_t size;          // Thompson-NFA size, -1 when a rule reference or a special is inside
};

class Lowering {
 public:
  Lowering(const IrGrammar& grammar, TerminalSource& source, const LoweringLimits& limits)
      : g_(grammar), w_(grammar.words), source_(source), limits_(limits) {
    derive_facts();
    const size_t n = facts_.size(), rules = g_.rule_body.size();
    regular_.assign(n, -1);
    counted_.assign(n, -1);
    ref_seams_.assign(n, -1);
    nfa_.assign(n, -1);
    symbols_at_.assign(n, -1);
    expr_nt_.assign(n, -1);
    rule_regular_.assign(rules, -1);
    rule_counted_.assign(rules, -1);
    rule_seam_.assign(rules, -1);
    rule_nt_.assign(rules, -1);
    seen_.assign(n, 0);
    programs_.resize(n);
    has_program_.assign(n, false);
    keys_.resize(n);
    has_key_.assign(n, false);
    analyse_rules();
  }

  NativeLoweredGrammar run() {
    const int32_t start = rule_symbol(g_.start);
    while (!pending_.empty()) {
      const auto [nt, body] = pending_.back();
      pending_.pop_back();
      const bool whole = is_regular(body) && !has_seam(body);
      if (kind(body) == IrKind::Alt && !whole) {
        const int64_t n = w_[facts_[body].offset + 1];
        for (int64_t k = 0; k < n; ++k) add_production(nt, symbols(child(body, 2 + k)));
      } else {
        add_production(nt, symbols(body));
      }
    }
    out_.start = start;
    return std::move(out_);
  }

 private:
  // ------------------------------------------------------------------ the flattened IR
  IrKind kind(int32_t node) const { return facts_[node].kind; }
  int64_t word(int32_t node, int64_t k) const { return w_[facts_[node].offset + k]; }
  int32_t child(int32_t node, int64_t k) const { return static_cast<int32_t>(word(node, k)); }

  // lower.py's _subexpressions: the expressions inside a node (a reference is a leaf).
  template <class F>
  void for_each_kid(int32_t node, F&& f) const {
    const int64_t at = facts_[node].offset;
    switch (facts_[node].kind) {
      case IrKind::Seq:
      case IrKind::Alt:
        for (int64_t k = 0; k < w_[at + 1]; ++k) f(static_cast<int32_t>(w_[at + 2 + k]));
        break;
      case IrKind::Repeat: f(static_cast<int32_t>(w_[at + 1])); break;
      case IrKind::Difference:
        f(static_cast<int32_t>(w_[at + 1]));
        f(static_cast<int32_t>(w_[at + 2]));
        break;
      case IrKind::Unordered: {
        const int64_t n = w_[at + 1];
        for (int64_t k = 0; k < n + 1; ++k) f(static_cast<int32_t>(w_[at + 2 + k]));  // items, separator
        if (w_[at + 2 + n + 1] >= 0) f(static_cast<int32_t>(w_[at + 2 + n + 1]));     // repeatable
        break;
      }
      case IrKind::Counted: {
        int64_t p = at + 2;
        for (int64_t u = 0; u < w_[at + 1]; ++u) {
          const int64_t edges = w_[p + 1];
          for (int64_t e = 0; e < edges; ++e) f(static_cast<int32_t>(w_[p + 2 + 2 * e]));
          p += 2 + 2 * edges;
        }
        break;
      }
      default: break;  // Bytes, Automaton (its labels are byte sets), Ref, Special, Seam
    }
  }

  // Where a counted automaton's last two words, its min and max, are.
  int64_t counted_tail(int32_t node) const {
    return facts_[node].offset + node_length(facts_[node].offset) - 2;
  }

  // A word read while the node's extent is not yet known: malformed words are an error, not
  // a read past the end.
  int64_t checked(int64_t at) const {
    if (at < 0 || at >= static_cast<int64_t>(w_.size())) {
      throw Error(ErrorKind::InvalidArgument, "malformed IR words: truncated node");
    }
    return w_[at];
  }

  // How many words the node at `at` takes.
  int64_t node_length(int64_t at) const {
    auto count = [&](int64_t k) {
      const int64_t n = checked(k);
      if (n < 0) throw Error(ErrorKind::InvalidArgument, "malformed IR words: negative count");
      return n;
    };
    switch (static_cast<IrKind>(checked(at))) {
      case IrKind::Bytes: return 2 + 2 * count(at + 1);
      case IrKind::Seq:
      case IrKind::Alt: return 2 + count(at + 1);
      case IrKind::Repeat: return 4;
      case IrKind::Ref:
      case IrKind::Special: return 2;
      case IrKind::Automaton: {
        const int64_t header = count(at + 1);
        return 3 + header + count(at + 2 + header);
      }
      case IrKind::Difference: return 3;
      case IrKind::Unordered: {
        const int64_t n = count(at + 1);
        return 2 + n + 5 + count(at + 2 + n + 4);
      }
      case IrKind::Seam: return 1;
      case IrKind::Counted: {
        int64_t p = at + 2;
        for (int64_t u = count(at + 1); u > 0; --u) p += 2 + 2 * count(p + 1);
        return p + 2 - at;
      }
    }
    throw Error(ErrorKind::InvalidArgument, "malformed IR words: unknown node kind");
  }

  // Every node's Facts, children first (the words list them in that order).
  void derive_facts() {
    for (int64_t at = 0; at < static_cast<int64_t>(w_.size());) {
      const int64_t length = node_length(at);  // (an unknown kind throws there)
      const auto k = static_cast<IrKind>(w_[at]);
      const auto node = static_cast<int32_t>(facts_.size());
      if (at + length > static_cast<int64_t>(w_.size())) {
        throw Error(ErrorKind::InvalidArgument, "malformed IR words: truncated node");
      }
      facts_.push_back(Facts{k, at, 1, false, false, false, -1});
      Facts f = facts_.back();
      int32_t depth = 1;
      bool all_spelled = true, any_seams = false, any_refs = false, all_sized = true;
      int64_t sum = 0;
      for_each_kid(node, [&](int32_t kid) {
        if (kid < 0 || kid >= node) throw Error(ErrorKind::InvalidArgument, "malformed IR words: child order");
        const Facts& c = facts_[kid];
        depth = std::max(depth, c.depth + 1);
        all_spelled = all_spelled && c.spelled_out;
        any_seams = any_seams || c.seams;
        any_refs = any_refs || c.has_refs;
        if (c.size < 0) all_sized = false; else sum = sat_add(sum, c.size);
      });
      f.depth = depth;
      f.has_refs = any_refs;
      switch (k) {
        case IrKind::Bytes: f.spelled_out = true; f.size = 1; break;
        case IrKind::Seq:
        case IrKind::Alt:
          f.size = all_sized ? sat_add(sum, k == IrKind::Alt ? 1 : 0) : -1;
          f.spelled_out = all_spelled;
          f.seams = any_seams;
          break;
        case IrKind::Repeat: {
          const Facts& item = facts_[child(node, 1)];
          const int64_t min = word(node, 2), max = word(node, 3);
          const int64_t copies = max >= 0 ? max : std::max<int64_t>(min, 1);
          f.size = item.size < 0 ? -1 : sat_add(1, sat_mul(item.size, copies));
          f.spelled_out = item.spelled_out && max >= 0 && max <= 1;
          f.seams = item.seams;
          break;
        }
        case IrKind::Counted: {
          const int64_t tail = counted_tail(node);
          const int64_t min = w_[tail], max = w_[tail + 1];
          const int64_t copies = sat_add(max >= 0 ? max : min, 1);
          f.size = all_sized ? sat_mul(sat_add(word(node, 1), sum), copies) : -1;
          break;
        }
        case IrKind::Ref:
          f.has_refs = true;
          if (word(node, 1) < 0 || word(node, 1) >= static_cast<int64_t>(g_.rule_body.size())) {
            throw Error(ErrorKind::InvalidArgument, "malformed IR words: rule number");
          }
          break;
        case IrKind::Automaton: {
          const int64_t header = word(node, 1);
          if (header < 2) throw Error(ErrorKind::InvalidArgument, "malformed IR words: automaton header");
          for (int64_t k = 0; k < word(node, 2 + header); ++k) {
            const int64_t label = word(node, 3 + header + k);
            if (label < 0 || label >= node || facts_[label].kind != IrKind::Bytes) {
              throw Error(ErrorKind::InvalidArgument, "malformed IR words: automaton label");
            }
          }
          f.size = sat_add(word(node, 3), word(node, 2 + header));  // states + labels
          break;
        }
        case IrKind::Difference: {
          f.size = all_sized ? sum : -1;
          f.spelled_out = facts_[child(node, 1)].spelled_out;
          break;
        }
        case IrKind::Seam: f.spelled_out = true; f.seams = true; f.size = 0; break;
        case IrKind::Unordered:
        case IrKind::Special: break;
      }
      facts_.back() = f;
      at += length;
    }
    for (int32_t body : g_.rule_body) {
      if (body < 0 || body >= static_cast<int32_t>(facts_.size())) {
        throw Error(ErrorKind::InvalidArgument, "malformed IR words: rule body");
      }
    }
  }

  // ------------------------------------------------------------------ the rule graph
  // lower.py's analyse_rules: the recursive rules (Tarjan) and the bound on the walks' depth.
  void analyse_rules() {
    const auto n = static_cast<int32_t>(g_.rule_body.size());
    int64_t total = 0;
    for (int32_t r = 0; r < n; ++r) total += facts_[g_.rule_body[r]].depth;
    // The bound of a walk that follows references in the rule names' sorted order (see
    // lower.py's analyse_rules) is needed only when the depths added exceed the limit; the
    // recursive rules do not depend on the order.
    const bool ordered = total > limits_.max_grammar_depth;
    std::vector<int32_t> rank(static_cast<size_t>(n));
    for (int32_t r = 0; r < n; ++r) rank[r] = r;
    if (ordered) {
      std::vector<int32_t> by_name(rank);
      std::sort(by_name.begin(), by_name.end(),
                [&](int32_t a, int32_t b) { return g_.rule_names[a] < g_.rule_names[b]; });
      for (int32_t k = 0; k < n; ++k) rank[by_name[k]] = k;
    }
    auto before = [&](int32_t a, int32_t b) { return rank[a] < rank[b]; };
    std::vector<std::vector<int32_t>> refs(static_cast<size_t>(n));
    std::vector<int32_t> seen(facts_.size(), -1);
    std::vector<int32_t> todo;
    for (int32_t r = 0; r < n; ++r) {
      todo.assign(1, g_.rule_body[r]);
      while (!todo.empty()) {
        const int32_t e = todo.back();
        todo.pop_back();
        if (seen[e] == r || !facts_[e].has_refs) continue;
        seen[e] = r;
        if (kind(e) == IrKind::Ref) {
          refs[r].push_back(child(e, 1));
        } else {
          for_each_kid(e, [&](int32_t kid) { todo.push_back(kid); });
        }
      }
      auto& mine = refs[r];
      std::sort(mine.begin(), mine.end(), before);
      mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
    }
    recursive_.assign(static_cast<size_t>(n), false);
    std::vector<int32_t> index(static_cast<size_t>(n), -1), low(static_cast<size_t>(n), 0);
    std::vector<int64_t> bound(static_cast<size_t>(n), 0);
    std::vector<bool> on_stack(static_cast<size_t>(n), false);
    std::vector<int32_t> component_stack;
    struct Frame {
      int32_t node;
      size_t pending;  // refs[node][0, pending) are still to visit, last first
    };
    std::vector<Frame> frames;
    int32_t counter = 0;
    int64_t deepest = 0;
    for (int32_t root = 0; root < n; ++root) {
      if (index[root] >= 0) continue;
      index[root] = low[root] = counter++;
      component_stack.push_back(root);
      on_stack[root] = true;
      frames.push_back({root, refs[root].size()});
      while (!frames.empty()) {
        Frame& top = frames.back();
        const int32_t node = top.node;
        int32_t next_child = -1;
        while (top.pending > 0) {
          const int32_t nxt = refs[node][--top.pending];
          if (index[nxt] < 0) {
            next_child = nxt;
            break;
          }
          if (on_stack[nxt] && index[nxt] < low[node]) low[node] = index[nxt];
        }
        if (next_child >= 0) {
          index[next_child] = low[next_child] = counter++;
          component_stack.push_back(next_child);
          on_stack[next_child] = true;
          frames.push_back({next_child, refs[next_child].size()});
          continue;
        }
        frames.pop_back();
        int64_t below = 0;
        for (int32_t ref : refs[node]) below = std::max(below, bound[ref]);
        bound[node] = facts_[g_.rule_body[node]].depth + below;
        deepest = std::max(deepest, bound[node]);
        if (low[node] == index[node]) {  // node roots a component: pop it
          const auto root_at = static_cast<size_t>(
              std::find(component_stack.rbegin(), component_stack.rend(), node).base() - component_stack.begin()) - 1;
          const bool self_ref = std::binary_search(refs[node].begin(), refs[node].end(), node, before);
          const bool recursive = component_stack.size() - root_at > 1 || self_ref;
          for (size_t k = root_at; k < component_stack.size(); ++k) {
            on_stack[component_stack[k]] = false;
            if (recursive) recursive_[component_stack[k]] = true;
          }
          component_stack.resize(root_at);
        }
        if (!frames.empty()) {
          const int32_t parent = frames.back().node;
          if (low[node] < low[parent]) low[parent] = low[node];
        }
      }
    }
    const int64_t depth = total <= limits_.max_grammar_depth ? total : deepest;
    if (depth > limits_.max_grammar_depth) {
      throw limit_error("the grammar nests more than " + std::to_string(limits_.max_grammar_depth) +
                            " expressions deep",
                        "max_grammar_depth");
    }
  }

  int32_t rule_body(int32_t rule) const { return g_.rule_body[rule]; }
  int32_t follow_refs(int32_t e) const {
    while (kind(e) == IrKind::Ref) e = rule_body(child(e, 1));
    return e;
  }

  // ------------------------------------------------------------------ classification
  // Whether `e` reaches no recursive rule, special token or Unordered node.
  bool is_regular(int32_t e) {
    int8_t& hit = regular_[e];
    if (hit >= 0) return hit != 0;
    bool result = true;
    switch (kind(e)) {
      case IrKind::Special:
      case IrKind::Unordered: result = false; break;
      case IrKind::Ref: result = rule_is_regular(child(e, 1)); break;
      default:
        for_each_kid(e, [&](int32_t kid) { result = result && is_regular(kid); });
    }
    hit = result ? 1 : 0;
    return result;
  }

  bool rule_is_regular(int32_t rule) {
    int8_t& hit = rule_regular_[rule];
    if (hit < 0) hit = !recursive_[rule] && is_regular(rule_body(rule)) ? 1 : 0;
    return hit != 0;
  }

  // Whether a regular `e` holds a counted automaton (rules followed).
  bool has_counted(int32_t e) {
    int8_t& hit = counted_[e];
    if (hit >= 0) return hit != 0;
    hit = 0;  // (a regular node's rules are not recursive: no cycle reaches it again)
    bool result = false;
    switch (kind(e)) {
      case IrKind::Counted: result = true; break;
      case IrKind::Ref: {
        const int32_t rule = child(e, 1);
        if (rule_counted_[rule] < 0) {
          rule_counted_[rule] = 0;
          rule_counted_[rule] = has_counted(rule_body(rule)) ? 1 : 0;
        }
        result = rule_counted_[rule] != 0;
        break;
      }
      default:
        for_each_kid(e, [&](int32_t kid) { result = result || has_counted(kid); });
    }
    hit = result ? 1 : 0;
    return result;
  }

  // Whether a regular `e` holds a Seam (rules followed); a difference holds none here.
  bool has_seam(int32_t e) {
    if (kind(e) == IrKind::Difference) return false;
    return facts_[e].seams || refs_hold_seam(e);
  }

  // Whether the body of a rule referenced inside `e` (references not followed) has a seam.
  bool refs_hold_seam(int32_t e) {
    int8_t& hit = ref_seams_[e];
    if (hit >= 0) return hit != 0;
    hit = 0;
    bool result = false;
    if (facts_[e].has_refs) {
      if (kind(e) == IrKind::Ref) {
        const int32_t rule = child(e, 1);
        if (rule_seam_[rule] < 0) {
          rule_seam_[rule] = 0;
          rule_seam_[rule] = has_seam(rule_body(rule)) ? 1 : 0;
        }
        result = rule_seam_[rule] != 0;
      } else {
        for_each_kid(e, [&](int32_t kid) { result = result || refs_hold_seam(kid); });
      }
    }
    hit = result ? 1 : 0;
    return result;
  }

  // ------------------------------------------------------------------ symbols
  int32_t new_nonterminal(int32_t name) {
    out_.nonterminal_names.push_back(name);
    return out_.num_nonterminals++;
  }

  void add_production(int32_t lhs, const Symbols& rhs) {
    out_.production_words.push_back(static_cast<int32_t>(1 + rhs.size()));
    out_.production_words.push_back(lhs);
    out_.production_words.insert(out_.production_words.end(), rhs.begin(), rhs.end());
    if (++out_.num_productions > limits_.max_productions) {
      throw limit_error("the grammar needs more than " + std::to_string(limits_.max_productions) + " parser rules",
                        "max_productions");
    }
  }

  // Thompson-NFA size of a regular expression (bounded repetitions unrolled), memoized.
  int64_t nfa_size(int32_t e) {
    if (facts_[e].size >= 0) return facts_[e].size;
    int64_t& hit = nfa_[e];
    if (hit >= 0) return hit;
    int64_t size = 1;  // Special, Unordered, a counted automaton with references
    switch (kind(e)) {
      case IrKind::Seq:
      case IrKind::Alt: {
        size = kind(e) == IrKind::Alt ? 1 : 0;
        for_each_kid(e, [&](int32_t kid) { size = sat_add(size, nfa_size(kid)); });
        break;
      }
      case IrKind::Repeat: {
        const int64_t min = word(e, 2), max = word(e, 3);
        const int64_t copies = max >= 0 ? max : std::max<int64_t>(min, 1);
        size = sat_add(1, sat_mul(nfa_size(child(e, 1)), copies));
        break;
      }
      case IrKind::Ref: size = nfa_size(rule_body(child(e, 1))); break;
      case IrKind::Difference: size = sat_add(nfa_size(child(e, 1)), nfa_size(child(e, 2))); break;
      default: break;
    }
    hit = size;
    return size;
  }

  // lower.py's _program/_emit: the regex program, int32 words, references inlined, as
  // emit() lays it out: `put` gets the node's own words (IR words, each written as an int32),
  // `kid` each sub-expression whose program follows, in order. Its one description serves
  // writing a program out (program), its key (program_key) and comparing it with a program
  // written out earlier (matches).
  template <class Put, class Kid>
  void emit(int32_t e, Put&& put, Kid&& kid) {
    const int64_t at = facts_[e].offset;
    switch (kind(e)) {
      case IrKind::Bytes:
        // [kOpBytes, n, ranges...]: the IR words of the node but its kind (IrKind::Bytes is 0 too).
        static_assert(static_cast<int64_t>(IrKind::Bytes) == kOpBytes, "a byte set's words are its program's");
        put(&w_[at], 2 + 2 * w_[at + 1]);
        break;
      case IrKind::Seq:
      case IrKind::Alt: {
        const int64_t n = w_[at + 1];
        const int64_t head[2] = {kind(e) == IrKind::Seq ? kOpSeq : kOpAlt, n};
        put(head, 2);
        for (int64_t k = 0; k < n; ++k) kid(static_cast<int32_t>(w_[at + 2 + k]));
        break;
      }
      case IrKind::Repeat: {
        const int64_t min = w_[at + 2];
        if (min > kMaxCount) {
          throw limit_error("a repetition of at least " + std::to_string(min) +
                                " copies needs more than max_nfa_states automaton states",
                            "max_nfa_states");
        }
        const int64_t head[3] = {kOpRepeat, min, native_max_count(w_[at + 3])};
        put(head, 3);
        kid(static_cast<int32_t>(w_[at + 1]));
        break;
      }
      case IrKind::Automaton: {
        const int64_t header = w_[at + 1];
        put(&w_[at + 2], header);
        const int64_t labels = w_[at + 2 + header];
        for (int64_t k = 0; k < labels; ++k) kid(static_cast<int32_t>(w_[at + 3 + header + k]));
        break;
      }
      case IrKind::Difference: {
        const int64_t head[1] = {kOpDifference};
        put(head, 1);
        kid(static_cast<int32_t>(w_[at + 1]));
        kid(static_cast<int32_t>(w_[at + 2]));
        break;
      }
      case IrKind::Seam: {  // inside one terminal a seam is just the empty string
        const int64_t head[2] = {kOpSeq, 0};
        put(head, 2);
        break;
      }
      case IrKind::Counted:
        throw std::logic_error("a counted automaton has no regex program: it runs as a counted terminal");
      default: throw std::logic_error("not a regular expression");
    }
  }

  // The key of `e`'s program (remembered per node: a sequence's is made from its items').
  const ProgramKey& program_key(int32_t e) {
    e = follow_refs(e);
    if (has_key_[e]) return keys_[e];
    ProgramKey key;
    emit(
        e,
        [&](const int64_t* words, int64_t n) {
          for (int64_t k = 0; k < n; ++k) key.append_word(words[k]);
        },
        [&](int32_t kid) { key.append(program_key(kid)); });
    keys_[e] = key;
    has_key_[e] = true;
    return keys_[e];
  }

  // Whether `e`'s program is the words of `program` from word `pos` on (then `pos` moves past it).
  bool matches(int32_t e, const std::string& program, int64_t& pos) {
    e = follow_refs(e);
    const int64_t n = program_key(e).words;
    if (pos + n > static_cast<int64_t>(program.size() / sizeof(int32_t))) return false;
    if (has_program_[e]) {  // written out already: one memcmp
      const bool same = std::memcmp(program.data() + pos * 4, programs_[e].data(), static_cast<size_t>(n) * 4) == 0;
      pos += n;
      return same;
    }
    bool same = true;
    emit(
        e,
        [&](const int64_t* words, int64_t count) {
          if (!same) return;
          const char* at = program.data() + pos * 4;
          uint32_t differ = 0;  // (no early exit: the loop vectorizes)
          for (int64_t k = 0; k < count; ++k) {
            uint32_t w;
            std::memcpy(&w, at + 4 * k, sizeof w);
            differ |= w ^ static_cast<uint32_t>(words[k]);
          }
          same = differ == 0;
          pos += count;
        },
        [&](int32_t kid) { same = same && matches(kid, program, pos); });
    return same;
  }

  // The program of `e`, written out (remembered per node, as lower.py remembers them).
  const std::string& program(int32_t e) {
    e = follow_refs(e);
    if (has_program_[e]) return programs_[e];
    std::string out;
    out.reserve(static_cast<size_t>(program_key(e).words) * sizeof(int32_t));
    emit(
        e, [&](const int64_t* words, int64_t n) { put_words(out, words, n); },
        [&](int32_t kid) { out += program(kid); });
    programs_[e] = std::move(out);
    has_program_[e] = true;
    return programs_[e];
  }

  // The program of Seq(items), written out.
  std::string seq_program(const int32_t* items, size_t n) {
    std::string out;
    put_word(out, kOpSeq);
    put_word(out, static_cast<int64_t>(n));
    for (size_t k = 0; k < n; ++k) out += program(items[k]);
    return out;
  }

  // A node's program, as the terminal source sees it.
  class NodeProgram final : public ProgramText {
   public:
    NodeProgram(Lowering& lowering, int32_t e) : l_(lowering), e_(lowering.follow_refs(e)), key_(l_.program_key(e_)) {}
    uint64_t hash() const override { return key_.hash; }
    int64_t num_words() const override { return key_.words; }
    bool equals(const std::string& program) const override {
      if (static_cast<int64_t>(program.size()) != key_.words * 4) return false;
      int64_t pos = 0;
      return l_.matches(e_, program, pos);
    }
    const std::string& text() const override { return l_.program(e_); }
    int32_t node() const { return e_; }

   private:
    Lowering& l_;
    int32_t e_;
    ProgramKey key_;
  };

  // The program of Seq(items) (a run of a sequence), as the terminal source sees it.
  class RunProgram final : public ProgramText {
   public:
    RunProgram(Lowering& lowering, const int32_t* items, size_t n) : l_(lowering), items_(items), n_(n) {
      key_.append_word(kOpSeq);
      key_.append_word(static_cast<int64_t>(n));
      for (size_t k = 0; k < n; ++k) key_.append(l_.program_key(items[k]));
    }
    uint64_t hash() const override { return key_.hash; }
    int64_t num_words() const override { return key_.words; }
    bool equals(const std::string& program) const override {
      if (static_cast<int64_t>(program.size()) != key_.words * 4) return false;
      if (word_at(program, 0) != kOpSeq || word_at(program, 1) != static_cast<int32_t>(n_)) return false;
      int64_t pos = 2;
      for (size_t k = 0; k < n_; ++k) {
        if (!l_.matches(items_[k], program, pos)) return false;
      }
      return true;
    }
    const std::string& text() const override {
      if (!written_) {
        text_ = l_.seq_program(items_, n_);
        written_ = true;
      }
      return text_;
    }
    const int32_t* items() const { return items_; }
    size_t size() const { return n_; }

   private:
    Lowering& l_;
    const int32_t* items_;
    size_t n_;
    ProgramKey key_;
    mutable std::string text_;
    mutable bool written_ = false;
  };

  bool too_large_to_try(int64_t nfa_size, int64_t subset_slack, int64_t budget = -1) const {
    const int64_t b = budget > 0 ? budget : limits_.max_terminal_states;
    return nfa_size > sat_mul(sat_mul(8, b), subset_slack);
  }

  bool is_atomic(int32_t e) const {
    e = follow_refs(e);
    return kind(e) == IrKind::Repeat && kind(child(e, 1)) == IrKind::Bytes;
  }

  bool long_repeat(int32_t e, int64_t at_least) const {
    e = follow_refs(e);
    if (kind(e) == IrKind::Counted) return true;
    if (kind(e) != IrKind::Repeat) return false;
    const int64_t min = word(e, 2), max = word(e, 3);
    return (max < 0 ? min : max) >= at_least;
  }

  // The terminal symbol for a regular expression, or 0 ("none": symbols are never 0 here,
  // terminals are negative) if its DFA is too large.
  int32_t try_terminal(int32_t e, int64_t budget = -1, int64_t subset_slack = 1, int64_t size_budget = -1) {
    if (has_counted(e)) return 0;
    const IrKind k = kind(e);
    const bool splittable =
        (k == IrKind::Seq || k == IrKind::Alt || k == IrKind::Repeat || k == IrKind::Ref) && !is_atomic(e);
    if (splittable && too_large_to_try(nfa_size(e), subset_slack, size_budget)) return 0;
    return terminal_for(NodeProgram(*this, e), splittable, budget, subset_slack);
  }

  int32_t try_run_terminal(const std::vector<int32_t>& run, int64_t budget = -1, int64_t subset_slack = 1) {
    for (int32_t it : run) {
      if (has_counted(it)) return 0;
    }
    int64_t size = 0;
    for (int32_t it : run) size = sat_add(size, nfa_size(it));
    if (too_large_to_try(size, subset_slack)) return 0;
    return terminal_for(RunProgram(*this, run.data(), run.size()), true, budget, subset_slack);
  }

  bool is_word_list(int32_t e) const {
    e = follow_refs(e);
    return kind(e) == IrKind::Alt && facts_[e].spelled_out;
  }

  int64_t word_list_budget() const { return std::min(8 * limits_.max_terminal_states, limits_.max_dfa_states); }
  int64_t group_budget() const { return 4 * limits_.max_terminal_states; }
  int64_t subset_cap(int64_t budget, int64_t subset_slack) const {
    return std::max(budget, std::min(sat_mul(budget, subset_slack), limits_.max_dfa_states));
  }

  struct TerminalTry {
    int64_t budget;
    int64_t cap;
    int32_t terminal;  // -1: none under that budget
  };

  // A program tried as a terminal in this grammar: the node or run it was the program of.
  struct KnownProgram {
    int64_t words;
    int32_t node;                 // >= 0: the node's program
    std::vector<int32_t> items;   // else Seq(items)'s
    std::vector<TerminalTry> tries;
  };

  static bool identical(const NodeProgram& p, const KnownProgram& known) { return known.node == p.node(); }
  static bool identical(const RunProgram& p, const KnownProgram& known) {
    return known.node < 0 && known.items.size() == p.size() && std::equal(known.items.begin(), known.items.end(), p.items());
  }
  static KnownProgram known(const NodeProgram& p) { return {p.num_words(), p.node(), {}, {}}; }
  static KnownProgram known(const RunProgram& p) {
    return {p.num_words(), -1, std::vector<int32_t>(p.items(), p.items() + p.size()), {}};
  }
  // Whether `p` is `known`'s program: the same node or run, else the same words (different
  // nodes of one program, rare: the words of one are compared with the other's written out).
  template <class P>
  bool same_program(const P& p, const KnownProgram& known) {
    if (known.words != p.num_words()) return false;
    if (identical(p, known)) return true;
    if (known.node >= 0) return p.equals(program(known.node));
    return p.equals(seq_program(known.items.data(), known.items.size()));
  }

  template <class P>
  int32_t terminal_for(const P& prog, bool splittable, int64_t budget, int64_t subset_slack) {
    const bool must_fit = budget < 0 && !splittable;
    if (budget < 0) budget = splittable ? limits_.max_terminal_states : limits_.max_dfa_states;
    const int64_t cap = subset_cap(budget, subset_slack);
    // Found by the program's hash, then by its words, then by (budget, cap).
    std::vector<KnownProgram>& same_hash = terminal_of_program_[prog.hash()];
    KnownProgram* found = nullptr;
    for (KnownProgram& k : same_hash) {
      if (same_program(prog, k)) {
        found = &k;
        break;
      }
    }
    if (found != nullptr) {
      for (const TerminalTry& tried : found->tries) {
        if (tried.budget == budget && tried.cap == cap) return tried.terminal < 0 ? 0 : -(tried.terminal + 1);
      }
    } else {
      same_hash.push_back(known(prog));
      found = &same_hash.back();
    }
    int64_t states = 0;
    const int32_t handle = build_in_time(prog, budget, cap, states);
    int32_t t = -1;
    if (handle < 0) {
      if (must_fit) {
        throw limit_error("a regular part of the grammar needs more than " + std::to_string(budget) +
                              " automaton states",
                          "max_dfa_states");
      }
    } else {
      t = add_terminal(handle, states);
    }
    found->tries.push_back({budget, cap, t});
    return t < 0 ? 0 : -(t + 1);
  }

  int32_t build_in_time(const ProgramText& prog, int64_t budget, int64_t cap, int64_t& states) {
    const double now =
        std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    if (now > limits_.deadline) {
      throw limit_error("compiling the grammar took more than " + limits_.max_compile_seconds + " s",
                        "max_compile_seconds");
    }
    return source_.dfa(prog, budget, cap, states);
  }

  // A counted terminal `prefix e suffix` for a regular repetition `e`, or 0.
  int32_t try_counted(int32_t e, const int32_t* prefix = nullptr, size_t n_prefix = 0,
                      const int32_t* suffix = nullptr, size_t n_suffix = 0) {
    e = follow_refs(e);
    for (size_t k = 0; k < n_prefix; ++k) {
      if (has_counted(prefix[k])) return 0;
    }
    for (size_t k = 0; k < n_suffix; ++k) {
      if (has_counted(suffix[k])) return 0;
    }
    if (kind(e) == IrKind::Counted) return try_counted_units(e, prefix, n_prefix, suffix, n_suffix);
    if (has_counted(e)) return 0;
    if (!source_.has_counted() || kind(e) != IrKind::Repeat || word(e, 3) == 0) return 0;
    int64_t size = 0;
    for (size_t k = 0; k < n_prefix; ++k) size = sat_add(size, nfa_size(prefix[k]));
    size = sat_add(size, nfa_size(child(e, 1)));
    for (size_t k = 0; k < n_suffix; ++k) size = sat_add(size, nfa_size(suffix[k]));
    if (too_large_to_try(size, 1)) return 0;
    const std::string& item = program(child(e, 1));
    const bool has_before = n_prefix > 0, has_after = n_suffix > 0;
    const std::string before = has_before ? seq_program(prefix, n_prefix) : std::string();
    const std::string after = has_after ? seq_program(suffix, n_suffix) : std::string();
    const int64_t min = word(e, 2), max = word(e, 3);
    std::string key = "c";
    append_key(key, min, max, &item, has_before ? &before : nullptr, has_after ? &after : nullptr);
    return counted_symbol(key, [&](int64_t& states) {
      return source_.counted(has_before ? &before : nullptr, item, min, max, has_after ? &after : nullptr, states);
    });
  }

  int32_t try_counted_units(int32_t e, const int32_t* prefix, size_t n_prefix, const int32_t* suffix,
                            size_t n_suffix) {
    if (!source_.has_units()) return 0;
    std::vector<bool> accepting;
    std::vector<TerminalSource::UnitEdge> edges;
    const int64_t at = facts_[e].offset;
    int64_t p = at + 2;
    for (int64_t u = 0; u < w_[at + 1]; ++u) {
      accepting.push_back(w_[p] != 0);
      const int64_t n = w_[p + 1];
      for (int64_t k = 0; k < n; ++k) {
        edges.push_back({u, w_[p + 3 + 2 * k], program(static_cast<int32_t>(w_[p + 2 + 2 * k]))});
      }
      p += 2 + 2 * n;
    }
    const int64_t min = w_[p], max = w_[p + 1];
    const bool has_before = n_prefix > 0, has_after = n_suffix > 0;
    const std::string before = has_before ? seq_program(prefix, n_prefix) : std::string();
    const std::string after = has_after ? seq_program(suffix, n_suffix) : std::string();
    std::string key = "u";
    append_key(key, min, max, nullptr, has_before ? &before : nullptr, has_after ? &after : nullptr);
    for (bool a : accepting) key.push_back(a ? '1' : '0');
    for (const auto& edge : edges) {
      append_number(key, edge.from);
      append_number(key, edge.to);
      append_piece(key, &edge.label);
    }
    return counted_symbol(key, [&](int64_t& states) {
      return source_.units(has_before ? &before : nullptr, accepting, edges, min, max,
                           has_after ? &after : nullptr, states);
    });
  }

  static void append_number(std::string& key, int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); }
  static void append_piece(std::string& key, const std::string* piece) {
    append_number(key, piece == nullptr ? -1 : static_cast<int64_t>(piece->size()));
    if (piece != nullptr) key += *piece;
  }
  static void append_key(std::string& key, int64_t min, int64_t max, const std::string* item, const std::string* before,
                         const std::string* after) {
    append_number(key, min);
    append_number(key, max);
    append_piece(key, item);
    append_piece(key, before);
    append_piece(key, after);
  }

  template <class Build>
  int32_t counted_symbol(const std::string& key, Build&& build) {
    auto found = counted_of_key_.find(key);
    if (found != counted_of_key_.end()) return found->second < 0 ? 0 : -(found->second + 1);
    int64_t states = 0;
    const int32_t handle = build(states);
    if (handle < 0) {
      counted_of_key_.emplace(key, -1);
      return 0;
    }
    const int32_t t = add_terminal(handle, states);
    counted_of_key_.emplace(key, t);
    return -(t + 1);
  }

  // Symbols for a run holding a repetition of bound >= at_least as a counted terminal with
  // its neighbours; false when none suits a counter.
  bool counted_run(const std::vector<int32_t>& run, int64_t at_least, Symbols& out) {
    size_t j = run.size();
    for (size_t k = 0; k < run.size(); ++k) {
      if (long_repeat(run[k], at_least)) {
        j = k;
        break;
      }
    }
    if (j == run.size()) return false;
    const size_t after_j = run.size() - j - 1;
    // (prefix length, suffix length): the prefix ends at j, the suffix starts after it.
    const std::pair<size_t, size_t> attempts[3] = {{j, after_j}, {0, std::min<size_t>(1, after_j)}, {0, 0}};
    for (int a = 0; a < 3; ++a) {
      bool repeated = false;
      for (int b = 0; b < a; ++b) repeated = repeated || attempts[b] == attempts[a];
      if (repeated) continue;
      const auto [n_prefix, n_suffix] = attempts[a];
      const int32_t t = try_counted(run[j], run.data() + (j - n_prefix), n_prefix, run.data() + j + 1, n_suffix);
      if (t != 0) {
        out = seq_symbols(run.data(), j - n_prefix);
        out.push_back(t);
        const Symbols rest = seq_symbols(run.data() + j + 1 + n_suffix, run.size() - (j + 1 + n_suffix));
        out.insert(out.end(), rest.begin(), rest.end());
        return true;
      }
    }
    return false;
  }

  // Symbols for a run too large for one terminal, its largest item with the items beside it
  // as one terminal; false when no such group fits.
  bool neighbours_run(const std::vector<int32_t>& run, Symbols& out) {
    size_t j = 0;
    int64_t largest = -1;
    for (size_t k = 0; k < run.size(); ++k) {
      const int64_t size = nfa_size(run[k]);
      if (size > largest) {
        largest = size;
        j = k;
      }
    }
    int64_t budget = group_budget();
    const bool whole_tried = !is_word_list(run[j]);
    if (!whole_tried) budget = std::max(budget, word_list_budget());
    bool failed_once = false;
    const auto len = static_cast<int64_t>(run.size()), jj = static_cast<int64_t>(j);
    const std::pair<int64_t, int64_t> groups[3] = {{jj - 1, jj + 2}, {jj, jj + 2}, {jj - 1, jj + 1}};
    for (const auto& [lo, hi] : groups) {
      if (lo < 0 || hi > len || (lo == 0 && hi == len && whole_tried)) continue;
      const std::vector<int32_t> group(run.begin() + lo, run.begin() + hi);
      const int64_t slack = group_slack(group);
      if (failed_once && !fits_alone(run[j], budget)) return false;
      const int32_t t = try_run_terminal(group, budget, slack);
      if (t != 0) {
        out = seq_symbols(run.data(), static_cast<size_t>(lo));
        out.push_back(t);
        const Symbols rest = seq_symbols(run.data() + hi, static_cast<size_t>(len - hi));
        out.insert(out.end(), rest.begin(), rest.end());
        return true;
      }
      failed_once = true;
    }
    return false;
  }

  // The terminal for a regular alternation standing alone between seams, or 0.
  int32_t lone_alternation(int32_t item) {
    const int32_t e = follow_refs(item);
    if (kind(e) != IrKind::Alt || !is_regular(item) || has_seam(item)) return 0;
    if (is_word_list(item)) return 0;
    const int32_t t = try_terminal(item);
    if (t != 0) return t;
    const int64_t budget = group_budget();
    if (!fits_alone(item, budget)) return 0;
    return try_terminal(item, budget, group_slack({item}), budget);
  }

  int64_t group_slack(const std::vector<int32_t>& items) {
    for (int32_t it : items) {
      if (unrolls_large_repeat(it)) return 1;
    }
    return 8;
  }

  bool fits_alone(int32_t item, int64_t budget) {
    const int64_t slack = group_slack({item});
    if (has_counted(item) || too_large_to_try(nfa_size(item), slack)) return false;
    int64_t states = 0;
    return build_in_time(NodeProgram(*this, item), budget, subset_cap(budget, slack), states) >= 0;
  }

  bool unrolls_large_repeat(int32_t e) {
    std::vector<int32_t> todo{e};
    const int32_t walk = ++walk_;
    while (!todo.empty()) {
      const int32_t x = todo.back();
      todo.pop_back();
      if (seen_[x] == walk) continue;
      seen_[x] = walk;
      switch (kind(x)) {
        case IrKind::Ref: todo.push_back(rule_body(child(x, 1))); break;
        case IrKind::Repeat:
          if (word(x, 3) >= 0 && nfa_size(x) > limits_.max_terminal_states) return true;
          todo.push_back(child(x, 1));
          break;
        case IrKind::Seq:
        case IrKind::Alt:
        case IrKind::Difference: for_each_kid(x, [&](int32_t kid) { todo.push_back(kid); }); break;
        default: break;
      }
    }
    return false;
  }

  int32_t special(int64_t token_id) {
    auto found = special_terminal_.find(token_id);
    if (found != special_terminal_.end()) return -(found->second + 1);
    out_.terminals.push_back({true, static_cast<int32_t>(token_id)});
    const auto t = static_cast<int32_t>(out_.terminals.size() - 1);
    special_terminal_.emplace(token_id, t);
    return -(t + 1);
  }

  int32_t rule_symbol(int32_t rule) {
    int32_t& nt = rule_nt_[rule];
    if (nt < 0) {
      nt = new_nonterminal(rule);
      pending_.emplace_back(nt, rule_body(rule));
    }
    return nt;
  }

  int32_t add_terminal(int32_t handle, int64_t states) {
    total_states_ = sat_add(total_states_, states);
    if (total_states_ > limits_.max_total_dfa_states) {
      throw limit_error("the grammar's automata need more than " + std::to_string(limits_.max_total_dfa_states) +
                            " states",
                        "max_total_dfa_states");
    }
    out_.terminals.push_back({false, handle});
    return static_cast<int32_t>(out_.terminals.size() - 1);
  }

  // Symbols whose concatenation is `e`'s language (memoized: IR nodes are shared).
  const Symbols& symbols(int32_t e) {
    if (symbols_at_[e] < 0) {
      Symbols result = symbols_of(e);
      symbols_at_[e] = static_cast<int32_t>(memo_.size());
      memo_.push_back(std::move(result));
    }
    return memo_[symbols_at_[e]];
  }

  Symbols symbols_of(int32_t e) {
    const IrKind k = kind(e);
    if (k == IrKind::Seam || (k == IrKind::Seq && word(e, 1) == 0)) return {};
    bool regular = is_regular(e);
    if (regular && has_seam(e)) {
      const int32_t seamed_seq = seamed(e);
      if (seamed_seq >= 0) {
        const std::vector<int32_t> items = items_vector(seamed_seq);
        return seq_symbols(items.data(), items.size());
      }
      Symbols counted;
      if (counted_across_seams(e, counted)) return counted;
      regular = false;
    }
    if (regular) {
      if (k == IrKind::Seq) {
        Symbols counted;
        if (counted_run(items_vector(e), limits_.min_counted_repeat, counted)) return counted;
      }
      int32_t t = 0;
      if (is_word_list(e)) {
        const int64_t budget = word_list_budget();
        t = try_terminal(e, budget, 8, budget);
      } else {
        const bool counted_first = long_repeat(e, limits_.min_counted_repeat);
        if (counted_first) t = try_counted(e);
        if (t == 0) t = try_terminal(e);
        if (t == 0 && !counted_first) t = try_counted(e);
      }
      if (t != 0) return {t};
    }
    switch (k) {
      case IrKind::Seq: {
        const std::vector<int32_t> items = items_vector(e);
        return seq_symbols(items.data(), items.size());
      }
      case IrKind::Ref: return {rule_symbol(child(e, 1))};
      case IrKind::Special: return {special(word(e, 1))};
      case IrKind::Unordered: return {unordered_symbol(e)};
      case IrKind::Difference:
        throw Error(ErrorKind::GrammarSyntax,
                    "a Difference needs regular operands (no recursive rule, no special token)");
      default: return {expr_symbol(e)};
    }
  }

  // The items of a Seq or Alt.
  std::vector<int32_t> items_vector(int32_t e) const {
    const int64_t n = word(e, 1);
    std::vector<int32_t> items;
    items.reserve(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) items.push_back(child(e, 2 + k));
    return items;
  }

  bool counted_across_seams(int32_t e, Symbols& out) {
    e = follow_refs(e);
    const int64_t at_least = limits_.min_counted_repeat;
    if (kind(e) == IrKind::Seq) return counted_run(items_vector(e), at_least, out);
    if (long_repeat(e, at_least)) {
      const int32_t t = try_counted(e);
      if (t == 0) return false;
      out = {t};
      return true;
    }
    return false;
  }

  // The sequence a regular `e` stands for when it has a seam of its own, else -1.
  int32_t seamed(int32_t e) const {
    e = follow_refs(e);
    if (kind(e) != IrKind::Seq) return -1;
    for (int64_t k = 0; k < word(e, 1); ++k) {
      if (kind(child(e, 2 + k)) == IrKind::Seam) return e;
    }
    return -1;
  }

  // A sequence: each maximal run of regular items becomes one terminal when it fits.
  Symbols seq_symbols(const int32_t* items, size_t n) {
    Symbols out;
    std::vector<int32_t> run;
    auto flush = [&]() {
      if (!run.empty()) {
        const Symbols& s = run_symbols(run);
        out.insert(out.end(), s.begin(), s.end());
        run.clear();
      }
    };
    constexpr int32_t kEndOfSeamed = -1;
    std::vector<int32_t> pending(items, items + n);
    std::reverse(pending.begin(), pending.end());
    while (!pending.empty()) {
      const int32_t it = pending.back();
      pending.pop_back();
      if (it == kEndOfSeamed || kind(it) == IrKind::Seam) {
        flush();
        continue;
      }
      const bool regular = is_regular(it);
      if (regular && !has_seam(it)) {
        if (kind(it) == IrKind::Seq && !facts_[it].spelled_out) {
          for (int64_t k = word(it, 1) - 1; k >= 0; --k) pending.push_back(child(it, 2 + k));
          continue;
        }
        run.push_back(it);
        continue;
      }
      const int32_t seamed_seq = regular ? seamed(it) : -1;
      if (seamed_seq >= 0) {
        pending.push_back(kEndOfSeamed);
        for (int64_t k = word(seamed_seq, 1) - 1; k >= 0; --k) pending.push_back(child(seamed_seq, 2 + k));
      } else {
        flush();
        const Symbols& s = symbols(it);
        out.insert(out.end(), s.begin(), s.end());
      }
    }
    flush();
    return out;
  }

  const Symbols& run_symbols(const std::vector<int32_t>& run) {
    std::string key(reinterpret_cast<const char*>(run.data()), run.size() * sizeof(int32_t));
    auto found = run_memo_.find(key);
    if (found == run_memo_.end()) {
      Symbols s = run_symbols_of(run);
      found = run_memo_.emplace(std::move(key), std::move(s)).first;
    }
    return found->second;
  }

  Symbols run_symbols_of(const std::vector<int32_t>& run) {
    if (run.size() > 1) {
      Symbols counted;
      bool found = counted_run(run, limits_.min_counted_repeat, counted);
      if (!found) {
        const int32_t t = try_run_terminal(run);
        if (t != 0) return {t};
        found = counted_run(run, 2, counted);
        if (!found) found = neighbours_run(run, counted);
      }
      if (found) return counted;
    } else if (run.size() == 1) {
      const int32_t t = lone_alternation(run[0]);
      if (t != 0) return {t};
    }
    Symbols out;
    for (int32_t it : run) {
      const Symbols& s = symbols(it);
      out.insert(out.end(), s.begin(), s.end());
    }
    return out;
  }

  // A nonterminal for an alternation or repetition (shared when the node is shared).
  int32_t expr_symbol(int32_t e) {
    if (expr_nt_[e] >= 0) return expr_nt_[e];
    switch (kind(e)) {
      case IrKind::Alt: {
        const int32_t nt = new_nonterminal(static_cast<int32_t>(HelperName::Alt));
        expr_nt_[e] = nt;
        for (int64_t k = 0; k < word(e, 1); ++k) {
          const Symbols s = symbols(child(e, 2 + k));  // (a copy: symbols() may grow the memo)
          add_production(nt, s);
        }
        return nt;
      }
      case IrKind::Repeat: {
        const int32_t nt = repeat_symbol(e);
        expr_nt_[e] = nt;
        return nt;
      }
      case IrKind::Counted:
        throw limit_error(
            "a length-bounded pattern could not be run with a counter (its units are not prefix-free and "
            "disjoint, or its lengths have gaps)",
            "max_dfa_states");
      default: throw std::logic_error("regular leaves are always terminals");
    }
  }

  int32_t unordered_symbol(int32_t e) {
    if (expr_nt_[e] >= 0) return expr_nt_[e];
    const int32_t nt = new_nonterminal(static_cast<int32_t>(HelperName::Unordered));
    expr_nt_[e] = nt;
    const int64_t n = word(e, 1);
    std::vector<int32_t> items;
    for (int64_t k = 0; k < n; ++k) {
      items.push_back(single_nonterminal(child(e, 2 + k), static_cast<int32_t>(HelperName::Item)));
    }
    const int32_t separator = single_nonterminal(child(e, 2 + n), static_cast<int32_t>(HelperName::Separator));
    const int64_t repeatable = word(e, 2 + n + 1);
    const int32_t rest = repeatable < 0 ? -1
                                        : single_nonterminal(static_cast<int32_t>(repeatable),
                                                             static_cast<int32_t>(HelperName::Repeatable));
    const int64_t min_count = word(e, 2 + n + 2), max_count = word(e, 2 + n + 3);
    if (min_count > kMaxCount) {
      throw limit_error("an object of at least " + std::to_string(min_count) + " members needs too many parser symbols",
                        "max_productions");
    }
    std::vector<int32_t> row{nt, separator, rest, static_cast<int32_t>(min_count),
                             static_cast<int32_t>(native_max_count(max_count)), static_cast<int32_t>(n)};
    row.insert(row.end(), items.begin(), items.end());
    const int64_t required = word(e, 2 + n + 4);
    std::vector<int32_t> sorted_required;
    for (int64_t k = 0; k < required; ++k) sorted_required.push_back(static_cast<int32_t>(word(e, 2 + n + 5 + k)));
    std::sort(sorted_required.begin(), sorted_required.end());
    row.insert(row.end(), sorted_required.begin(), sorted_required.end());
    out_.unordered.push_back(std::move(row));
    return nt;
  }

  int32_t single_nonterminal(int32_t e, int32_t hint) {
    const Symbols syms = symbols(e);
    if (syms.size() == 1 && syms[0] >= 0) return syms[0];
    const int32_t nt = new_nonterminal(hint);
    add_production(nt, syms);
    return nt;
  }

  int32_t repeat_symbol(int32_t e) {
    const Symbols item = symbols(child(e, 1));
    const int64_t min = word(e, 2), max = word(e, 3);
    if (max < 0) {
      // star ::= star item | ε  (left recursion keeps Earley sets small)
      const int32_t star = new_nonterminal(static_cast<int32_t>(HelperName::Star));
      Symbols rhs{star};
      rhs.insert(rhs.end(), item.begin(), item.end());
      add_production(star, rhs);
      add_production(star, {});
      if (min == 0) return star;
      const int32_t nt = new_nonterminal(static_cast<int32_t>(HelperName::Repeat));
      Symbols body = repeated(item, min);
      body.push_back(star);
      add_production(nt, body);
      return nt;
    }
    // upto_k ::= ε | item upto_{k-1}: linear in the bound, no exponential unrolling.
    int32_t optional_tail = -1;
    for (int64_t k = 0; k < max - min; ++k) {
      const int32_t nt = new_nonterminal(static_cast<int32_t>(HelperName::Upto));
      add_production(nt, {});
      Symbols rhs = item;
      if (optional_tail >= 0) rhs.push_back(optional_tail);
      add_production(nt, rhs);
      optional_tail = nt;
    }
    const int32_t nt = new_nonterminal(static_cast<int32_t>(HelperName::Repeat));
    Symbols rhs = repeated(item, min);
    if (optional_tail >= 0) rhs.push_back(optional_tail);
    add_production(nt, rhs);
    return nt;
  }

  Symbols repeated(const Symbols& item, int64_t count) const {
    if (sat_mul(static_cast<int64_t>(item.size()), count) > limits_.max_productions) {
      throw limit_error("a repetition needs too many parser symbols", "max_productions");
    }
    Symbols out;
    out.reserve(item.size() * static_cast<size_t>(count));
    for (int64_t k = 0; k < count; ++k) out.insert(out.end(), item.begin(), item.end());
    return out;
  }

  const IrGrammar& g_;
  const std::vector<int64_t>& w_;
  TerminalSource& source_;
  const LoweringLimits& limits_;
  std::vector<Facts> facts_;
  std::vector<bool> recursive_;
  std::vector<int8_t> regular_, counted_, ref_seams_;
  std::vector<int8_t> rule_regular_, rule_counted_, rule_seam_;
  std::vector<int64_t> nfa_;
  std::vector<int32_t> symbols_at_, expr_nt_, rule_nt_;
  std::deque<Symbols> memo_;  // a deque: references to its entries stay valid as it grows
  std::vector<int32_t> seen_;  // unrolls_large_repeat's visit marks, by walk number
  int32_t walk_ = 0;
  std::unordered_map<std::string, Symbols> run_memo_;
  std::unordered_map<uint64_t, std::vector<KnownProgram>> terminal_of_program_;  // by program hash
  std::unordered_map<std::string, int32_t> counted_of_key_;
  std::vector<std::string> programs_;  // programs written out, by node
  std::vector<bool> has_program_;
  std::vector<ProgramKey> keys_;  // program keys, by node
  std::vector<bool> has_key_;
  std::unordered_map<int64_t, int32_t> special_terminal_;
  std::vector<std::pair<int32_t, int32_t>> pending_;
  int64_t total_states_ = 0;
  NativeLoweredGrammar out_;
};

}  // namespace

NativeLoweredGrammar lower_grammar(const IrGrammar& grammar, TerminalSource& source, const LoweringLimits& limits) {
  if (grammar.rule_names.size() != grammar.rule_body.size() || grammar.start < 0 ||
      grammar.start >= static_cast<int32_t>(grammar.rule_body.size())) {
    throw Error(ErrorKind::InvalidArgument, "malformed IR grammar: rules");
  }
  return Lowering(grammar, source, limits).run();
}

}  // namespace tokensieve
