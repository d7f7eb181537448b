// Regex program -> trimmed, minimized DFA over byte classes.
//
// The pipeline, one section per stage, in the order build_dfa() runs them:
//   1. parse     prefix-encoded program -> flat AST (explicit stack: programs nest thousands deep)
//   2. classes   coarsest partition of 0..255 that every byte set in the program is a union of
//   3. nfa       Thompson NFA, built backwards from the accepting state; its size is computed
//                (saturating) before anything is allocated, so `{0,100000000}` fails at once
//   4. subset    subset construction over classes; DFA states are sorted sets of NFA states
//   5. trim      drop states from which no accepting state is reachable
//   6. minimize  Valmari-Lehtinen partition refinement (Hopcroft's algorithm for partial DFAs)
//   7. renumber  start = 0, then breadth-first order
// Nothing recurses: every tree walk uses an explicit stack or the prefix order of node ids.
// Working vectors are ScratchVectors (scratch_allocator.hpp): their blocks are kept per thread
// from one build to the next; only what a Dfa keeps (class_of, the transition table) is a
// std::vector.
#include "tokensieve/dfa.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "byte_blocks.hpp"
#include "json_literal.hpp"
#include "tokensieve/error.hpp"
#include "tokensieve/scratch_allocator.hpp"

namespace tokensieve {

// ---------------------------------------------------------------------------------------------
// Dfa
// ---------------------------------------------------------------------------------------------

Dfa::Dfa(Unchecked, int32_t num_classes, std::vector<uint8_t> class_of, std::vector<int32_t> trans,
         std::vector<uint8_t> accepting, int32_t start)
    : num_classes_(num_classes),
      class_of_(std::move(class_of)),
      trans_(std::move(trans)),
      accepting_(std::move(accepting)),
      start_(start) {
  find_successors();
}

Dfa::Dfa(int32_t num_classes, std::vector<uint8_t> class_of, std::vector<int32_t> trans,
         std::vector<uint8_t> accepting, int32_t start)
    : num_classes_(num_classes),
      class_of_(std::move(class_of)),
      trans_(std::move(trans)),
      accepting_(std::move(accepting)),
      start_(start) {
  auto bad = [](const std::string& what) { throw Error(ErrorKind::InvalidArgument, "Dfa: " + what); };
  if (num_classes_ < 1 || num_classes_ > 256) bad("num_classes must be in 1..256");
  if (class_of_.size() != 256) bad("class_of must have 256 entries");
  for (uint8_t c : class_of_) {
    if (c >= num_classes_) bad("class_of names a class >= num_classes");
  }
  const size_t n = accepting_.size();
  if (n > static_cast<size_t>(std::numeric_limits<int32_t>::max())) bad("too many states");
  if (trans_.size() != n * static_cast<size_t>(num_classes_)) {
    bad("trans must have num_states * num_classes entries");
  }
  const auto num = static_cast<int32_t>(n);
  for (int32_t t : trans_) {
    if (t != kDead && (t < 0 || t >= num)) bad("transition target out of range");
  }
  if (start_ != kDead && (start_ < 0 || start_ >= num)) bad("start state out of range");
  find_successors();
}

void Dfa::find_successors() {
  const size_t n = accepting_.size();
  has_successor_.assign(n, 0);
  for (size_t s = 0; s < n; ++s) {
    const int32_t* row = trans_.data() + s * num_classes_;
    has_successor_[s] = std::any_of(row, row + num_classes_, [](int32_t t) { return t != kDead; });
  }
}

size_t Dfa::memory_bytes() const {
  return sizeof(Dfa) + class_of_.capacity() + trans_.capacity() * sizeof(int32_t) +
         accepting_.capacity() + has_successor_.capacity();
}

namespace {

// ---------------------------------------------------------------------------------------------
// 1. parse
// ---------------------------------------------------------------------------------------------

[[noreturn]] void fail_program(size_t word, const std::string& what) {
  throw Error(ErrorKind::InvalidArgument,
              "malformed regex program: " + what + " (at word " + std::to_string(word) + ")");
}

// The regex tree with nodes numbered in prefix order, so every child has a larger id than its
// parent: a loop over ids from last to first visits children before parents, without a stack.
struct Ast {
  ScratchVector<int32_t> op;
  ScratchVector<int32_t> a;  // OP_BYTES: offset of the first range in the program; OP_REPEAT: min
  ScratchVector<int32_t> b;  // OP_BYTES: number of ranges; OP_REPEAT: max (-1 = unbounded)
  ScratchVector<int32_t> kid_begin, kid_count;  // children: kids[kid_begin .. kid_begin + kid_count)
  ScratchVector<int32_t> kids;
  ScratchVector<int32_t> at;  // program offset of each node's opcode

  int32_t size() const { return static_cast<int32_t>(op.size()); }
  int32_t kid(int32_t node, int32_t i) const { return kids[kid_begin[node] + i]; }
};

Ast parse_program(const int32_t* program, size_t length) {
  if (length == 0) fail_program(0, "empty program");
  if (program == nullptr) fail_program(0, "null program");
  if (length > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    fail_program(0, "program longer than 2^31-1 words");
  }
  Ast ast;
  for (auto* v : {&ast.op, &ast.a, &ast.b, &ast.kid_begin, &ast.kid_count, &ast.kids, &ast.at}) {
    v->reserve(length / 2 + 1);  // every node takes at least two words
  }
  struct Open {
    int32_t node;
    int32_t remaining;  // children still to parse
  };
  ScratchVector<Open> open;     // nodes whose children are being parsed
  ScratchVector<int32_t> done;  // finished nodes not yet attached to their parent
  size_t pos = 0;
  auto word = [&](const char* what) -> int32_t {
    if (pos >= length) fail_program(pos, std::string("truncated, expected ") + what);
    return program[pos++];
  };
  do {
    const size_t at = pos;
    const int32_t op = word("an opcode");
    const int32_t node = ast.size();
    int32_t a = 0, b = 0, children = 0;
    switch (op) {
      case OP_BYTES: {
        const int32_t n = word("a range count");
        if (n < 0) fail_program(at, "negative range count");
        if ((length - pos) / 2 < static_cast<size_t>(n)) fail_program(pos, "truncated byte ranges");
        for (int32_t i = 0; i < n; ++i) {
          const int32_t lo = program[pos + 2 * i], hi = program[pos + 2 * i + 1];
          if (lo < 0 || lo > 255 || hi < 0 || hi > 255) {
            fail_program(pos + 2 * i, "byte outside 0..255");
          }
          if (lo > hi) fail_program(pos + 2 * i, "byte range with lo > hi");
        }
        a = static_cast<int32_t>(pos);
        b = n;
        pos += 2 * static_cast<size_t>(n);
        break;
      }
      case OP_SEQ:
      case OP_ALT:
        children = word("a child count");
        if (children < 0) fail_program(at, "negative child count");
        break;
      case OP_REPEAT:
        a = word("a repeat min");
        b = word("a repeat max");
        if (a < 0) fail_program(at, "negative repeat min");
        if (b < -1) fail_program(at, "repeat max below -1");
        if (b != -1 && a > b) fail_program(at, "repeat min > max");
        children = 1;
        break;
      case OP_AUTOMATON: {
        const int32_t n = word("an automaton state count");
        if (n <= 0) fail_program(at, "an automaton needs at least one state");
        a = static_cast<int32_t>(pos);
        b = n;
        int64_t edges = 0;
        for (int32_t st = 0; st < n; ++st) {
          const int32_t accept = word("an accept flag");
          if (accept != 0 && accept != 1) fail_program(pos - 1, "accept flag must be 0 or 1");
          const int32_t k = word("an edge count");
          if (k < 0) fail_program(pos - 1, "negative edge count");
          for (int32_t e = 0; e < k; ++e) {
            const int32_t target = word("an edge target");
            if (target < 0 || target >= n) fail_program(pos - 1, "edge target out of range");
          }
          edges += k;
          if (edges > std::numeric_limits<int32_t>::max()) fail_program(pos, "too many automaton edges");
        }
        children = static_cast<int32_t>(edges);  // the edge labels follow as OP_BYTES nodes
        break;
      }
      case OP_DIFFERENCE:
        children = 2;
        break;
      default:
        fail_program(at, "unknown opcode " + std::to_string(op));
    }
    ast.op.push_back(op);
    ast.at.push_back(static_cast<int32_t>(at));
    ast.a.push_back(a);
    ast.b.push_back(b);
    ast.kid_begin.push_back(0);
    ast.kid_count.push_back(children);
    if (children > 0) {
      open.push_back({node, children});
      continue;
    }
    // `node` is complete; so is every open parent whose last child this was.
    done.push_back(node);
    while (!open.empty() && --open.back().remaining == 0) {
      const int32_t parent = open.back().node;
      open.pop_back();
      const int32_t count = ast.kid_count[parent];
      ast.kid_begin[parent] = static_cast<int32_t>(ast.kids.size());
      ast.kids.insert(ast.kids.end(), done.end() - count, done.end());
      done.resize(done.size() - count);
      done.push_back(parent);
    }
  } while (!open.empty());
  if (pos != length) fail_program(pos, "trailing words after the root expression");
  return ast;
}

// ---------------------------------------------------------------------------------------------
// 2. classes
// ---------------------------------------------------------------------------------------------

using ByteSet = std::array<uint64_t, 4>;

bool contains(const ByteSet& set, int byte) { return (set[byte >> 6] >> (byte & 63)) & 1; }

void add_range(ByteSet& set, int lo, int hi) {
  for (int word = lo >> 6; word <= hi >> 6; ++word) {
    const int from = std::max(lo, word * 64) & 63, to = std::min(hi, word * 64 + 63) & 63;
    set[word] |= (~uint64_t{0} >> (63 - to)) & (~uint64_t{0} << from);
  }
}

struct ByteClasses {
  int32_t count = 1;
  std::vector<uint8_t> of = std::vector<uint8_t>(256, 0);
  // Distinct non-empty byte sets of the program, each as the list of classes it covers.
  ScratchVector<int32_t> set_begin{0}, set_classes;
  ScratchVector<int32_t> node_set;  // per AST node: distinct set id, -1 for an empty set / non-leaf
};

uint64_t hash_byte_set(const ByteSet& set) {
  uint64_t h = 0x9E3779B97F4A7C15ull;
  for (uint64_t w : set) h = (h ^ w) * 0xFF51AFD7ED558CCDull;
  return h ^ (h >> 32);
}

// Calls f(byte) for every byte of `set`, ascending.
template <class F>
void for_each_byte(const ByteSet& set, F&& f) {
  for (int word = 0; word < 4; ++word) {
    for (uint64_t bits = set[word]; bits != 0; bits &= bits - 1) f(word * 64 + __builtin_ctzll(bits));
  }
}

// Classes for the byte sets of nodes 0 .. num_nodes - 1: `ranges_of(node, add)` calls
// add(lo, hi) for each range of the node's set (none: no set, node_set -1).
template <class RangesOf>
ByteClasses compute_classes(int32_t num_nodes, RangesOf&& ranges_of) {
  ByteClasses cls;
  cls.node_set.assign(num_nodes, -1);
  // Cutting 0..255 at every range end gives elementary intervals, and every byte set of the
  // program is a union of them, so the refinement below works on intervals (named by their
  // first byte), not bytes.
  ByteSet cuts{};
  cuts[0] = 1;
  auto cut = [&cuts](int byte) {
    if (byte < 256) cuts[byte >> 6] |= uint64_t{1} << (byte & 63);
  };
  // Distinct sets by first appearance (a program repeats a few sets in hundreds of nodes: the
  // characters of property names and their escapes), found through an open-addressing table.
  ScratchVector<ByteSet> distinct;
  ScratchVector<int32_t> table(64, -1);
  for (int32_t node = 0; node < num_nodes; ++node) {
    ByteSet set{};
    ranges_of(node, [&](int32_t lo, int32_t hi) {
      add_range(set, lo, hi);
      cut(lo);
      cut(hi + 1);
    });
    if (set == ByteSet{}) continue;
    size_t mask = table.size() - 1, slot = hash_byte_set(set) & mask;
    while (table[slot] >= 0 && distinct[table[slot]] != set) slot = (slot + 1) & mask;
    if (table[slot] >= 0) {
      cls.node_set[node] = table[slot];
      continue;
    }
    cls.node_set[node] = table[slot] = static_cast<int32_t>(distinct.size());
    distinct.push_back(set);
    if (2 * distinct.size() > table.size()) {  // keep the load at most 1/2
      table.assign(2 * table.size(), -1);
      mask = table.size() - 1;
      for (size_t id = 0; id < distinct.size(); ++id) {
        size_t i = hash_byte_set(distinct[id]) & mask;
        while (table[i] >= 0) i = (i + 1) & mask;
        table[i] = static_cast<int32_t>(id);
      }
    }
  }
  // A set's elementary intervals, each named by its first byte.
  auto interval_starts = [&](int32_t id) {
    const ByteSet& set = distinct[id];
    return ByteSet{set[0] & cuts[0], set[1] & cuts[1], set[2] & cuts[2], set[3] & cuts[3]};
  };
  // Refine the partition of intervals by each distinct set: the intervals of a set leave their
  // block for a fresh one (one per block they leave), the others stay. Two intervals end in one
  // block iff they agree on membership in every set. The work is the intervals each set holds,
  // not all intervals per set (a property name's letters are one interval each).
  detail::ByteBlocks blocks;  // by interval's first byte
  for (int32_t id = 0; id < static_cast<int32_t>(distinct.size()); ++id) {
    for_each_byte(interval_starts(id), [&](int byte) { blocks.move(byte, id); });
  }
  // Classes numbered by first interval; every byte takes its interval's class.
  ScratchVector<int32_t> class_of_block(blocks.num_blocks(), -1);
  std::array<uint8_t, 256> interval_class{};  // by interval's first byte
  cls.count = 0;
  for_each_byte(cuts, [&](int byte) {
    int32_t& c = class_of_block[blocks.block[byte]];
    if (c < 0) c = cls.count++;
    interval_class[byte] = static_cast<uint8_t>(c);
  });
  for (int byte = 0, c = 0; byte < 256; ++byte) {
    if (contains(cuts, byte)) c = interval_class[byte];
    cls.of[byte] = static_cast<uint8_t>(c);
  }
  // Each distinct set as the list of classes it covers, in order of first byte.
  std::array<int32_t, 256> seen_by;
  seen_by.fill(-1);
  for (int32_t id = 0; id < static_cast<int32_t>(distinct.size()); ++id) {
    for_each_byte(interval_starts(id), [&](int byte) {
      const uint8_t c = interval_class[byte];
      if (seen_by[c] != id) {
        seen_by[c] = id;
        cls.set_classes.push_back(c);
      }
    });
    cls.set_begin.push_back(static_cast<int32_t>(cls.set_classes.size()));
  }
  return cls;
}

ByteClasses compute_classes(const Ast& ast, const int32_t* program) {
  return compute_classes(ast.size(), [&](int32_t node, auto&& add) {
    if (ast.op[node] != OP_BYTES) return;
    const int32_t* range = program + ast.a[node];
    for (int32_t i = 0; i < ast.b[node]; ++i) add(range[2 * i], range[2 * i + 1]);
  });
}

// ---------------------------------------------------------------------------------------------
// 3. nfa
// ---------------------------------------------------------------------------------------------

// Sizes saturate here, far above any limit and far below overflow of a sum of two.
constexpr uint64_t kSizeCap = uint64_t{1} << 62;

uint64_t sat_add(uint64_t x, uint64_t y) { return std::min(x + y, kSizeCap); }
uint64_t sat_mul(uint64_t x, uint64_t y) {
  return (y != 0 && x > kSizeCap / y) ? kSizeCap : std::min(x * y, kSizeCap);
}

// NFA states each node's construction below creates (saturating), children before parents.
ScratchVector<uint64_t> nfa_sizes(const Ast& ast) {
  ScratchVector<uint64_t> size(ast.size(), 0);
  for (int32_t node = ast.size() - 1; node >= 0; --node) {
    uint64_t total = 0;
    for (int32_t i = 0; i < ast.kid_count[node]; ++i) total = sat_add(total, size[ast.kid(node, i)]);
    switch (ast.op[node]) {
      case OP_BYTES: total = 1; break;
      case OP_SEQ: break;
      case OP_ALT: total = sat_add(total, 1); break;
      case OP_AUTOMATON: total = sat_add(total, static_cast<uint64_t>(ast.b[node])); break;
      case OP_REPEAT: {
        const uint64_t c = total, min = static_cast<uint64_t>(ast.a[node]);
        const uint64_t optional = ast.b[node] < 0 ? 1 : static_cast<uint64_t>(ast.b[node]) - min;
        // An epsilon-only child (size 0) repeats to epsilon: nothing is built.
        total = c == 0 ? 0 : sat_add(sat_mul(min, c), sat_mul(optional, c + 1));
        break;
      }
    }
    size[node] = total;
  }
  return size;
}

// State 0 accepts. A state either reads one byte set (`byte_set` >= 0, then goes to `next`) or
// has epsilon edges eps[eps_begin[s] .. eps_begin[s + 1]) (none: a dead end or state 0).
// Edge slots are reserved when a state is created and states are created in id order, so
// eps_begin is a CSR index as is; the epsilon targets are filled in once their states exist.
struct Nfa {
  ScratchVector<int32_t> byte_set, next, eps_begin, eps;
  int32_t start = 0;

  int32_t add(int32_t set, int32_t to, int32_t num_eps) {
    byte_set.push_back(set);
    next.push_back(to);
    eps_begin.push_back(static_cast<int32_t>(eps.size()));
    eps.resize(eps.size() + num_eps, 0);
    return static_cast<int32_t>(byte_set.size()) - 1;
  }
  int32_t* eps_of(int32_t state) { return eps.data() + eps_begin[state]; }
};

// Builds each node backwards: the construction of a node is given the state to continue with
// (`next`) and returns its entry state, so concatenation and alternation need no join states.
// Repetition {m,n} is m copies followed by n-m nested optional copies x(x(x)?)?, which keeps
// subset-construction sets small; {m,} is m copies followed by a loop.
Nfa build_nfa(const Ast& ast, const int32_t* program, const ByteClasses& cls, const ScratchVector<uint64_t>& size,
              size_t num_states) {
  Nfa nfa;
  nfa.byte_set.reserve(num_states);
  nfa.next.reserve(num_states);
  nfa.eps_begin.reserve(num_states + 1);
  nfa.add(-1, -1, 0);  // the accepting state
  struct Frame {
    int32_t node, step;  // step: children built so far
    int32_t cur, next;   // cur: continuation for the next child to build
    int32_t aux;         // ALT: the branching state; unbounded REPEAT: the loop state
  };
  ScratchVector<Frame> stack{{0, 0, 0, 0, -1}};
  int32_t ret = 0;  // entry state of the node built last
  while (!stack.empty()) {
    Frame& f = stack.back();
    const int32_t node = f.node;
    int32_t child = -1, child_next = -1;
    switch (ast.op[node]) {
      case OP_BYTES: {
        const int32_t set = cls.node_set[node];
        ret = set < 0 ? nfa.add(-1, -1, 0) : nfa.add(set, f.next, 0);
        break;
      }
      case OP_SEQ: {  // children last to first, each continuing into the one after it
        if (f.step > 0) f.cur = ret;
        if (f.step == ast.kid_count[node]) {
          ret = f.cur;
          break;
        }
        child = ast.kid(node, ast.kid_count[node] - 1 - f.step);
        child_next = f.cur;
        break;
      }
      case OP_ALT: {  // one state with an epsilon edge to each alternative
        if (f.step == 0) f.aux = nfa.add(-1, -1, ast.kid_count[node]);
        if (f.step > 0) nfa.eps_of(f.aux)[f.step - 1] = ret;
        if (f.step == ast.kid_count[node]) {
          ret = f.aux;
          break;
        }
        child = ast.kid(node, f.step);
        child_next = f.next;
        break;
      }
      case OP_AUTOMATON: {  // one branching state per automaton state, one byte state per edge
        const int32_t n = ast.b[node];
        ScratchVector<int32_t> branch(n);
        const int32_t* meta = program + ast.a[node];
        for (int32_t st = 0; st < n; ++st) {
          const int32_t accept = meta[0], k = meta[1];
          branch[st] = nfa.add(-1, -1, k + accept);
          meta += 2 + k;
        }
        meta = program + ast.a[node];
        int32_t label = 0;
        for (int32_t st = 0; st < n; ++st) {
          const int32_t accept = meta[0], k = meta[1];
          const size_t slots = static_cast<size_t>(nfa.eps_begin[branch[st]]);
          for (int32_t e = 0; e < k; ++e) {
            const int32_t kid = ast.kid(node, label++);
            if (ast.op[kid] != OP_BYTES) {
              throw Error(ErrorKind::InvalidArgument, "malformed regex program: automaton edge label is not OP_BYTES");
            }
            const int32_t set = cls.node_set[kid];
            const int32_t target = meta[2 + e];
            const int32_t state = set < 0 ? nfa.add(-1, -1, 0) : nfa.add(set, branch[target], 0);
            nfa.eps[slots + e] = state;
          }
          if (accept) nfa.eps[slots + k] = f.next;
          meta += 2 + k;
        }
        ret = branch[0];
        break;
      }
      case OP_REPEAT: {
        const int32_t min = ast.a[node], max = ast.b[node];
        if (size[ast.kid(node, 0)] == 0) {
          ret = f.next;
          break;
        }
        const int32_t optional = max < 0 ? 1 : max - min;  // copies built first (innermost out)
        if (f.step > 0 && f.step <= optional) {
          const int32_t branch = max < 0 ? f.aux : nfa.add(-1, -1, 2);
          nfa.eps_of(branch)[0] = ret;  // one more copy
          nfa.eps_of(branch)[1] = f.next;  // or done
          f.cur = branch;
        } else if (f.step > optional) {
          f.cur = ret;
        }
        if (f.step - optional == min) {
          ret = f.cur;
          break;
        }
        child = ast.kid(node, 0);
        child_next = f.cur;
        if (max < 0 && f.step == 0) child_next = f.aux = nfa.add(-1, -1, 2);  // loops back here
        break;
      }
    }
    if (child < 0) {
      stack.pop_back();
    } else {
      ++f.step;
      stack.push_back({child, 0, child_next, child_next, -1});  // invalidates f
    }
  }
  nfa.eps_begin.push_back(static_cast<int32_t>(nfa.eps.size()));
  nfa.start = ret;
  return nfa;
}

// ---------------------------------------------------------------------------------------------
// 4. subset
// ---------------------------------------------------------------------------------------------

// Upper bound on the NFA-state entries stored for all DFA states together (256 MiB): guards
// memory when the DFA-state limit alone would allow huge sets. Reported as max_dfa_states.
constexpr size_t kMaxSubsetEntries = size_t{1} << 26;

// The subset construction's output as edge lists: state s has edges edge_begin[s] ..
// edge_begin[s + 1] (by class), so the passes below cost O(edges), not O(states x classes):
// a key automaton has ~60 byte classes and 2-3 edges per state.
struct RawDfa {
  int32_t num_states = 0;
  ScratchVector<int32_t> edge_begin{0};
  ScratchVector<int32_t> edge_class, edge_target;
  ScratchVector<uint8_t> accepting;
};

// A DFA state is the sorted set of NFA states it stands for, keeping only those that matter
// after an epsilon closure: byte-reading states and the accepting state 0.
class SubsetBuilder {
 public:
  SubsetBuilder(const Nfa& nfa, const ByteClasses& cls, int32_t max_states)
      : nfa_(nfa), cls_(cls), max_states_(max_states), stamp_(nfa.byte_set.size(), 0),
        class_end_(cls.count + 1), table_(64, -1), seed_stamp_(nfa.byte_set.size(), 0), seed_table_(64, -1) {
    set_begin_.reserve(64);
    hashes_.reserve(64);
    dfa_.edge_begin.reserve(65);
    dfa_.accepting.reserve(64);
  }

  RawDfa run() {
    const int32_t num_classes = cls_.count;
    closure(&nfa_.start, 1);
    if (!set_.empty()) intern();
    for (int32_t d = 0; d < dfa_.num_states; ++d) {
      // Group the targets of the state's byte-reading NFA states by class, then close each
      // group: that closure is the DFA state reached on the class. Neighbouring classes often
      // have the same targets (all plain characters of a string body, say): then they share
      // the previous class's closure.
      int32_t prev_begin = 0, prev_end = 0, prev_target = Dfa::kDead;
      auto step = [&](int32_t c, int32_t begin, int32_t end) {
        if (end - begin != prev_end - prev_begin ||
            !std::equal(targets_.begin() + begin, targets_.begin() + end, targets_.begin() + prev_begin)) {
          prev_target = target_of(targets_.data() + begin, end - begin);
        }
        prev_begin = begin;
        prev_end = end;
        if (prev_target != Dfa::kDead) {
          dfa_.edge_class.push_back(c);
          dfa_.edge_target.push_back(prev_target);
        }
      };
      int32_t num_edges = 0;
      for_each_edge(d, [&](int32_t, int32_t) { ++num_edges; });
      if (4 * static_cast<int64_t>(num_edges) < num_classes) {
        // Few edges for many classes (a key among 60 byte classes): sort the edges rather
        // than count over every class.
        pairs_.clear();
        for_each_edge(d, [&](int32_t c, int32_t to) { pairs_.emplace_back(c, to); });
        std::sort(pairs_.begin(), pairs_.end());
        targets_.resize(pairs_.size());
        for (size_t i = 0; i < pairs_.size(); ++i) targets_[i] = pairs_[i].second;
        for (int32_t i = 0; i < num_edges;) {
          int32_t j = i + 1;
          while (j < num_edges && pairs_[j].first == pairs_[i].first) ++j;
          step(pairs_[i].first, i, j);
          i = j;
        }
      } else {
        // A counting sort by class into targets_: class c's targets end at class_end_[c] and
        // start where class c - 1's end.
        std::fill(class_end_.begin(), class_end_.end(), 0);
        for_each_edge(d, [&](int32_t c, int32_t) { ++class_end_[c + 1]; });
        for (int32_t c = 0; c < num_classes; ++c) class_end_[c + 1] += class_end_[c];
        targets_.resize(class_end_[num_classes]);
        for_each_edge(d, [&](int32_t c, int32_t to) { targets_[class_end_[c]++] = to; });
        for (int32_t c = 0; c < num_classes; ++c) {
          const int32_t begin = c == 0 ? 0 : class_end_[c - 1], end = class_end_[c];
          if (begin != end) step(c, begin, end);
        }
      }
      dfa_.edge_begin.push_back(static_cast<int32_t>(dfa_.edge_class.size()));
    }
    return std::move(dfa_);
  }

 private:
  // Calls f(class, target) for every byte edge of the NFA states in DFA state d.
  template <class F>
  void for_each_edge(int32_t d, F&& f) const {
    for (int32_t i = set_begin_[d]; i < set_begin_[d + 1]; ++i) {
      const int32_t s = set_data_[i], set = nfa_.byte_set[s];
      if (set < 0) continue;
      for (int32_t j = cls_.set_begin[set]; j < cls_.set_begin[set + 1]; ++j) {
        f(cls_.set_classes[j], nfa_.next[s]);
      }
    }
  }

  // The DFA state reached from the byte targets seeds[0 .. n) (kDead when their closure is
  // empty). The same targets recur from many DFA states (every state inside a `\S+` loop
  // reaches the loop's head on most classes), and their closure is the costly step (a
  // depth-first walk over the NFA's epsilon edges, hundreds of states for a pattern with
  // large classes): each distinct set of targets is closed once, and looked up after that.
  // The states are created in the same order as without the lookup, so the DFA is the same.
  int32_t target_of(const int32_t* seeds, int32_t n) {
    if (++seed_epoch_ == 0) {  // wrapped: old stamps could collide
      std::fill(seed_stamp_.begin(), seed_stamp_.end(), 0);
      seed_epoch_ = 1;
    }
    seeds_.clear();
    uint64_t h = 0;
    for (int32_t i = 0; i < n; ++i) {  // as a set: byte-reading states may share a target
      const int32_t s = seeds[i];
      if (seed_stamp_[s] == seed_epoch_) continue;
      seed_stamp_[s] = seed_epoch_;
      seeds_.push_back(s);
      h += mix(static_cast<uint32_t>(s));
    }
    h ^= seeds_.size() * 0x9E3779B97F4A7C15ull;
    const size_t mask = seed_table_.size() - 1;
    size_t slot = h & mask;
    for (; seed_table_[slot] >= 0; slot = (slot + 1) & mask) {
      const int32_t e = seed_table_[slot];
      if (seed_hashes_[e] != h) continue;
      const int32_t b = seed_begin_[e], end = seed_begin_[e + 1];
      if (static_cast<size_t>(end - b) != seeds_.size()) continue;
      bool same = true;
      for (int32_t i = b; i < end && same; ++i) same = seed_stamp_[seed_data_[i]] == seed_epoch_;
      if (same) return seed_target_[e];
    }
    closure(seeds_.data(), static_cast<int32_t>(seeds_.size()));
    const int32_t target = set_.empty() ? Dfa::kDead : intern();
    // The remembered seeds share the subset sets' budget of entries: past it, sets are
    // closed again rather than stored (the same DFA, made more slowly).
    if (set_data_.size() + seed_data_.size() + seeds_.size() > kMaxSubsetEntries) return target;
    seed_data_.insert(seed_data_.end(), seeds_.begin(), seeds_.end());
    seed_begin_.push_back(static_cast<int32_t>(seed_data_.size()));
    seed_hashes_.push_back(h);
    seed_target_.push_back(target);
    seed_table_[slot] = static_cast<int32_t>(seed_target_.size() - 1);
    grow_if_half_full(seed_table_, seed_hashes_);
    return target;
  }

  // set_ = the important states epsilon-reachable from seeds[0 .. n), in the order found, and
  // set_hash_ its hash. The set is not sorted: its hash is a sum over its members (the same
  // in any order), and intern() tests membership with the closure's visit stamps. Sorting was
  // a fifth of building a large terminal (an array of pattern strings: sets of hundreds).
  void closure(const int32_t* seeds, int32_t n) {
    if (++epoch_ == 0) {  // wrapped: old stamps could collide
      std::fill(stamp_.begin(), stamp_.end(), 0);
      epoch_ = 1;
    }
    set_.clear();
    set_hash_ = 0;
    stack_.assign(seeds, seeds + n);
    while (!stack_.empty()) {
      const int32_t s = stack_.back();
      stack_.pop_back();
      if (stamp_[s] == epoch_) continue;
      stamp_[s] = epoch_;
      if (nfa_.byte_set[s] >= 0 || s == 0) {
        set_.push_back(s);
        set_hash_ += mix(static_cast<uint32_t>(s));
      }
      for (int32_t e = nfa_.eps_begin[s]; e < nfa_.eps_begin[s + 1]; ++e) {
        if (stamp_[nfa_.eps[e]] != epoch_) stack_.push_back(nfa_.eps[e]);
      }
    }
    set_hash_ ^= set_.size() * 0x9E3779B97F4A7C15ull;
  }

  static uint64_t mix(uint64_t x) {  // splitmix64's finalizer
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }

  // Whether DFA state `state` stands for set_ (right after the closure that made set_): sets
  // of one size are equal when every member of the stored one was visited by that closure.
  bool equals_closure(int32_t state) const {
    const int32_t b = set_begin_[state], e = set_begin_[state + 1];
    if (static_cast<size_t>(e - b) != set_.size()) return false;
    for (int32_t i = b; i < e; ++i) {
      if (stamp_[set_data_[i]] != epoch_) return false;
    }
    return true;
  }

  // Id of the DFA state for set_, creating it when new.
  int32_t intern() {
    const uint64_t h = set_hash_;
    const size_t mask = table_.size() - 1;
    size_t slot = h & mask;
    for (; table_[slot] >= 0; slot = (slot + 1) & mask) {
      if (hashes_[table_[slot]] == h && equals_closure(table_[slot])) return table_[slot];
    }
    if (dfa_.num_states >= max_states_) {
      throw Error(ErrorKind::LimitExceeded,
                  "regex DFA exceeds max_dfa_states (" + std::to_string(max_states_) + ")",
                  "max_dfa_states");
    }
    if (set_data_.size() + set_.size() > kMaxSubsetEntries) {
      throw Error(ErrorKind::LimitExceeded,
                  "regex DFA construction needs more than " + std::to_string(kMaxSubsetEntries) +
                      " NFA-state entries; counted against max_dfa_states",
                  "max_dfa_states");
    }
    const int32_t id = dfa_.num_states++;
    set_data_.insert(set_data_.end(), set_.begin(), set_.end());
    set_begin_.push_back(static_cast<int32_t>(set_data_.size()));
    hashes_.push_back(h);
    dfa_.accepting.push_back(stamp_[0] == epoch_);  // state 0 accepts
    table_[slot] = id;
    grow_if_half_full(table_, hashes_);
    return id;
  }

  // An open-addressing table of ids 0 .. hashes.size() - 1 (-1 = free slot, linear probing by
  // hash): doubled and refilled once the ids fill half of it, so probes stay short.
  static void grow_if_half_full(ScratchVector<int32_t>& table, const ScratchVector<uint64_t>& hashes) {
    if (2 * hashes.size() <= table.size()) return;
    table.assign(2 * table.size(), -1);
    const size_t mask = table.size() - 1;
    for (size_t id = 0; id < hashes.size(); ++id) {
      size_t i = hashes[id] & mask;
      while (table[i] >= 0) i = (i + 1) & mask;
      table[i] = static_cast<int32_t>(id);
    }
  }

  const Nfa& nfa_;
  const ByteClasses& cls_;
  const int32_t max_states_;
  ScratchVector<uint32_t> stamp_;  // closure visit marks, by epoch
  uint32_t epoch_ = 0;
  ScratchVector<int32_t> stack_, set_;
  uint64_t set_hash_ = 0;
  ScratchVector<int32_t> class_end_, targets_;  // byte edges of the current state, by class
  ScratchVector<std::pair<int32_t, int32_t>> pairs_;  // (class, target) when sorted instead
  ScratchVector<int32_t> set_data_, set_begin_{0};  // NFA-state sets of DFA states, concatenated
  ScratchVector<uint64_t> hashes_;
  ScratchVector<int32_t> table_;  // open addressing: DFA state ids, -1 = free
  // Seed sets closed so far (target_of), concatenated, each with its hash and DFA state.
  ScratchVector<uint32_t> seed_stamp_;  // membership marks of the current seed set, by epoch
  uint32_t seed_epoch_ = 0;
  ScratchVector<int32_t> seeds_;
  ScratchVector<int32_t> seed_data_, seed_begin_{0}, seed_target_;
  ScratchVector<uint64_t> seed_hashes_;
  ScratchVector<int32_t> seed_table_;  // open addressing: seed set ids, -1 = free
  RawDfa dfa_;
};

// ---------------------------------------------------------------------------------------------
// 5. trim
// ---------------------------------------------------------------------------------------------

// live[s] = 1 when an accepting state is reachable from s (backward search over reversed edges).
ScratchVector<uint8_t> co_reachable(const RawDfa& dfa) {
  const int32_t n = dfa.num_states;
  ScratchVector<int32_t> pred_begin(n + 1, 0), preds(dfa.edge_target.size());
  for (int32_t t : dfa.edge_target) ++pred_begin[t + 1];
  for (int32_t s = 0; s < n; ++s) pred_begin[s + 1] += pred_begin[s];
  ScratchVector<int32_t> fill(pred_begin.begin(), pred_begin.end() - 1);
  for (int32_t s = 0; s < n; ++s) {
    for (int32_t e = dfa.edge_begin[s]; e < dfa.edge_begin[s + 1]; ++e) preds[fill[dfa.edge_target[e]]++] = s;
  }
  ScratchVector<uint8_t> live(n, 0);
  ScratchVector<int32_t> queue;
  for (int32_t s = 0; s < n; ++s) {
    if (dfa.accepting[s]) {
      live[s] = 1;
      queue.push_back(s);
    }
  }
  for (size_t q = 0; q < queue.size(); ++q) {
    for (int32_t i = pred_begin[queue[q]]; i < pred_begin[queue[q] + 1]; ++i) {
      if (!live[preds[i]]) {
        live[preds[i]] = 1;
        queue.push_back(preds[i]);
      }
    }
  }
  return live;
}

// ---------------------------------------------------------------------------------------------
// 6. minimize
// ---------------------------------------------------------------------------------------------

// Refinable partition of 0..n-1 (Valmari & Lehtinen, "Efficient minimization of DFAs with
// partial transition functions", 2008). Elements of set s are elems[first[s] .. past[s]);
// mark() moves an element to the front of its set, split() cuts every set with marked
// elements in two, the smaller part becoming a new set. Per-set arrays grow with the sets.
struct Partition {
  ScratchVector<int32_t> elems, loc, set_of, first, past, marked, touched;

  // Elements 0..n-1 in order, cut into sets at the ascending positions `cuts` (empty sets skipped).
  Partition(int32_t n, const ScratchVector<int32_t>& cuts) : elems(n), loc(n), set_of(n) {
    for (int32_t i = 0; i < n; ++i) elems[i] = loc[i] = i;
    int32_t begin = 0;
    for (size_t k = 0; k <= cuts.size(); ++k) {
      const int32_t end = k < cuts.size() ? cuts[k] : n;
      if (end == begin) continue;
      std::fill(set_of.begin() + begin, set_of.begin() + end, sets());
      first.push_back(begin);
      past.push_back(end);
      marked.push_back(0);
      begin = end;
    }
  }

  int32_t sets() const { return static_cast<int32_t>(first.size()); }

  void mark(int32_t e) {
    const int32_t s = set_of[e], i = loc[e], j = first[s] + marked[s];
    elems[i] = elems[j];
    loc[elems[i]] = i;
    elems[j] = e;
    loc[e] = j;
    if (marked[s]++ == 0) touched.push_back(s);
  }

  void split() {
    while (!touched.empty()) {
      const int32_t s = touched.back();
      touched.pop_back();
      const int32_t j = first[s] + marked[s];
      marked[s] = 0;
      if (j == past[s]) continue;  // all marked: nothing to cut
      const int32_t fresh = sets();
      if (j - first[s] <= past[s] - j) {  // the marked part is the smaller one
        const int32_t begin = first[s];
        first.push_back(begin);
        past.push_back(j);
        first[s] = j;
      } else {
        const int32_t end = past[s];
        first.push_back(j);
        past.push_back(end);
        past[s] = j;
      }
      marked.push_back(0);
      for (int32_t i = first[fresh]; i < past[fresh]; ++i) set_of[elems[i]] = fresh;
    }
  }
};

// The equivalence classes ("blocks") of a trimmed DFA's states: block_of[state], and one
// member of each block.
struct Blocks {
  ScratchVector<int32_t> block_of, member;
};

// Hopcroft's algorithm, for any trimmed DFA.
Partition hopcroft(const RawDfa& dfa, int32_t num_classes) {
  const int32_t n = dfa.num_states;
  const ScratchVector<uint8_t>& accepting = dfa.accepting;
  // Transitions t: tail[t] --label[t]--> head[t], numbered in label order (a counting sort).
  ScratchVector<int32_t> tail, head, label_begin(num_classes + 1, 0);
  for (int32_t c : dfa.edge_class) ++label_begin[c + 1];
  for (int32_t c = 0; c < num_classes; ++c) label_begin[c + 1] += label_begin[c];
  const int32_t m = label_begin[num_classes];
  tail.resize(m);
  head.resize(m);
  ScratchVector<int32_t> fill(label_begin.begin(), label_begin.end() - 1);
  for (int32_t s = 0; s < n; ++s) {
    for (int32_t e = dfa.edge_begin[s]; e < dfa.edge_begin[s + 1]; ++e) {
      const int32_t c = dfa.edge_class[e];
      tail[fill[c]] = s;
      head[fill[c]++] = dfa.edge_target[e];
    }
  }
  // Incoming transitions of each state: in_edges[in_begin[s] .. in_begin[s + 1]).
  ScratchVector<int32_t> in_begin(n + 1, 0), in_edges(m);
  for (int32_t t = 0; t < m; ++t) ++in_begin[head[t] + 1];
  for (int32_t s = 0; s < n; ++s) in_begin[s + 1] += in_begin[s];
  ScratchVector<int32_t> in_fill(in_begin.begin(), in_begin.end() - 1);
  for (int32_t t = 0; t < m; ++t) in_edges[in_fill[head[t]]++] = t;

  Partition blocks(n, {});
  for (int32_t s = 0; s < n; ++s) {
    if (accepting[s]) blocks.mark(s);
  }
  blocks.split();
  // "Cords" partition the transitions; initially one cord per label.
  Partition cords(m, ScratchVector<int32_t>(label_begin.begin() + 1, label_begin.end() - 1));
  // Hopcroft's loop: split blocks by the tails of each cord, and cords by the heads' blocks.
  // Block 0 is never used as a splitter ("all but one"), which keeps the work O(m log n).
  int32_t b = 1;
  for (int32_t c = 0; c < cords.sets(); ++c) {
    for (int32_t i = cords.first[c]; i < cords.past[c]; ++i) blocks.mark(tail[cords.elems[i]]);
    blocks.split();
    for (; b < blocks.sets(); ++b) {
      for (int32_t i = blocks.first[b]; i < blocks.past[b]; ++i) {
        const int32_t s = blocks.elems[i];
        for (int32_t j = in_begin[s]; j < in_begin[s + 1]; ++j) cords.mark(in_edges[j]);
      }
      cords.split();
    }
  }
  return blocks;
}

// Revuz's linear-time minimization ("Minimisation of acyclic deterministic automata in linear
// time", 1992), extended by a *core*: states (closed under successors) already known to be
// pairwise inequivalent, each its own block. The other states must form no cycle among
// themselves: a property name, an enum or a const (empty core), or "any string but these
// names" (the core is the string automaton, reached once no name can match any more). They
// are visited in depth-first post-order (every state after its successors), and a state joins
// the block of an earlier state, core or not, with the same acceptance and the same (class,
// target block) edges. Empty when the other states have a cycle.
Blocks minimize_acyclic(const RawDfa& dfa, const std::vector<uint8_t>& core) {
  const int32_t n = dfa.num_states;
  auto in_core = [&core](int32_t s) { return !core.empty() && core[s] != 0; };
  ScratchVector<int32_t> order;  // core states first, then the others in post-order
  order.reserve(n);
  ScratchVector<uint8_t> color(n, 0);  // 0 unseen, 1 on the stack, 2 done
  for (int32_t s = 0; s < n; ++s) {
    if (in_core(s)) {
      color[s] = 2;
      order.push_back(s);
    }
  }
  ScratchVector<std::pair<int32_t, int32_t>> stack;  // (state, next edge)
  for (int32_t root = 0; root < n; ++root) {
    if (color[root] != 0) continue;
    color[root] = 1;
    stack.emplace_back(root, dfa.edge_begin[root]);
    while (!stack.empty()) {
      auto& [s, e] = stack.back();
      if (e == dfa.edge_begin[s + 1]) {
        color[s] = 2;
        order.push_back(s);
        stack.pop_back();
        continue;
      }
      const int32_t t = dfa.edge_target[e++];
      if (color[t] == 1) return {};  // a back edge: a cycle outside the core
      if (color[t] == 0) {
        color[t] = 1;
        stack.emplace_back(t, dfa.edge_begin[t]);  // invalidates s and e
      }
    }
  }
  Blocks blocks;
  blocks.block_of.assign(n, -1);
  // A core state's targets are core states; give every core state its block before hashing.
  int32_t num_core = 0;
  for (; num_core < n && in_core(order[num_core]); ++num_core) {
    blocks.block_of[order[num_core]] = num_core;
    blocks.member.push_back(order[num_core]);
  }
  ScratchVector<uint64_t> block_hash;
  auto hash_of = [&](int32_t s) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ dfa.accepting[s];
    for (int32_t e = dfa.edge_begin[s]; e < dfa.edge_begin[s + 1]; ++e) {
      const uint64_t edge = (static_cast<uint64_t>(dfa.edge_class[e]) << 32) |
                            static_cast<uint32_t>(blocks.block_of[dfa.edge_target[e]]);
      h = (h ^ edge) * 0xFF51AFD7ED558CCDull;
      h ^= h >> 29;
    }
    return h;
  };
  auto same = [&](int32_t a, int32_t b) {
    const int32_t ea = dfa.edge_begin[a], eb = dfa.edge_begin[b], k = dfa.edge_begin[a + 1] - ea;
    if (dfa.accepting[a] != dfa.accepting[b] || k != dfa.edge_begin[b + 1] - eb) return false;
    for (int32_t i = 0; i < k; ++i) {
      if (dfa.edge_class[ea + i] != dfa.edge_class[eb + i] ||
          blocks.block_of[dfa.edge_target[ea + i]] != blocks.block_of[dfa.edge_target[eb + i]]) {
        return false;
      }
    }
    return true;
  };
  size_t capacity = 64;
  while (capacity < 2 * static_cast<size_t>(n)) capacity *= 2;  // load at most 1/2 throughout
  ScratchVector<int32_t> table(capacity, -1);  // open addressing: block ids, -1 = free
  const size_t mask = capacity - 1;
  for (int32_t i = 0; i < n; ++i) {
    const int32_t s = order[i];
    const uint64_t h = hash_of(s);
    size_t slot = h & mask;
    while (table[slot] >= 0 && !(block_hash[table[slot]] == h && same(blocks.member[table[slot]], s))) {
      slot = (slot + 1) & mask;
    }
    if (i < num_core || table[slot] < 0) {  // core states are distinct by assumption
      if (i >= num_core) {
        blocks.block_of[s] = static_cast<int32_t>(blocks.member.size());
        blocks.member.push_back(s);
      }
      block_hash.resize(blocks.member.size());
      block_hash[blocks.block_of[s]] = h;
      if (table[slot] < 0) table[slot] = blocks.block_of[s];
    } else {
      blocks.block_of[s] = table[slot];
    }
  }
  return blocks;
}

// The blocks of a trimmed DFA (`core`: see minimize_acyclic; may be empty): in linear time when
// the states outside the core have no cycle, else by Hopcroft.
Blocks minimize(const RawDfa& dfa, int32_t num_classes, const std::vector<uint8_t>& core) {
  Blocks blocks = minimize_acyclic(dfa, core);
  if (!blocks.member.empty() || dfa.num_states == 0) return blocks;
  const Partition partition = hopcroft(dfa, num_classes);
  blocks.block_of = partition.set_of;
  blocks.member.resize(partition.sets());
  for (int32_t b = 0; b < partition.sets(); ++b) blocks.member[b] = partition.elems[partition.first[b]];
  return blocks;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// build_dfa: the pipeline, plus 7. renumber
// ---------------------------------------------------------------------------------------------

namespace {

// Program end of a node: the start of the node after its last descendant.
size_t program_end(const Ast& ast, int32_t node, size_t length) {
  while (ast.kid_count[node] > 0) node = ast.kid(node, ast.kid_count[node] - 1);
  return node + 1 < ast.size() ? static_cast<size_t>(ast.at[node + 1]) : length;
}

// The program with every outermost OP_DIFFERENCE replaced by its product automaton (inner
// ones are handled when the operands are built), or empty when there is none.
std::vector<int32_t> expand_differences(const Ast& ast, const int32_t* program, size_t length,
                                        const DfaLimits& limits) {
  if (std::find(ast.op.begin(), ast.op.end(), OP_DIFFERENCE) == ast.op.end()) return {};
  auto end_of = [&](int32_t node) { return program_end(ast, node, length); };
  std::vector<int32_t> out;
  size_t copied = 0;
  for (int32_t node = 0; node < ast.size(); ++node) {
    if (ast.op[node] != OP_DIFFERENCE || static_cast<size_t>(ast.at[node]) < copied) continue;
    out.insert(out.end(), program + copied, program + ast.at[node]);
    const int32_t left = ast.kid(node, 0), right = ast.kid(node, 1);
    const size_t left_at = static_cast<size_t>(ast.at[left]), right_at = static_cast<size_t>(ast.at[right]);
    const Dfa l = build_dfa(program + left_at, end_of(left) - left_at, limits);
    const Dfa r = build_dfa(program + right_at, end_of(right) - right_at, limits);
    append_difference(l, r, limits.max_dfa_states, out);
    copied = end_of(node);
  }
  out.insert(out.end(), program + copied, program + length);
  return out;
}

// Repetitions that unroll into this many copies or more have their item determinized first,
// and their large neighbours too.
constexpr int32_t kMinCopiesToDeterminize = 4;
// ... when the piece's NFA has at least this many states (a byte set or a short literal has
// nothing to gain).
constexpr uint64_t kMinItemToDeterminize = 16;

// The program with its large pieces replaced by their minimal DFAs (as OP_AUTOMATON), where
// that is the smaller NFA; empty when nothing was replaced. The pieces: the item of every
// outermost repetition that unrolls into many copies of a large item, and that repetition's
// large neighbours in its sequence (a loop's item, or an alternation without repetition
// inside: a character class such as \S, a choice of literals).
//
// Why: the copies of an item's NFA multiply its nondeterminism, and so does a piece that runs
// beside them. In `(\S+\s+){0,49}\S+`, after a lead byte that starts both a space and a
// non-space character, each copy holds several partial characters at once, and the subset
// construction made 11,500 states (697,000 edges) that minimized to 1,350; with the item's
// minimal DFA in the copies it still made as many, as the final `\S+`, read beside the copy
// that may end before it, kept its own finer partial characters (43 ms). With that neighbour
// determinized too: 1,700 states, 2.5 ms. Only neighbours: determinizing every large piece
// of a program made nested arrays of numbers (GeoJSON coordinates) 3x slower to build.
std::vector<int32_t> determinize_repeated_items(const Ast& ast, const int32_t* program, size_t length,
                                                const ScratchVector<uint64_t>& sizes, const DfaLimits& limits) {
  auto large = [&](int32_t piece) {
    return sizes[piece] >= kMinItemToDeterminize && ast.op[piece] != OP_AUTOMATON;  // (not again)
  };
  auto many_copies = [&](int32_t node) {
    if (ast.op[node] != OP_REPEAT || !large(ast.kid(node, 0))) return false;
    const int32_t min = ast.a[node], max = ast.b[node];
    return (max < 0 ? int64_t{min} + 1 : int64_t{max}) >= kMinCopiesToDeterminize;
  };
  bool any = false;
  for (int32_t node = 0; node < ast.size() && !any; ++node) any = many_copies(node);
  if (!any) return {};
  // repeats[node]: a repetition is at or below node (children have larger ids than parents).
  ScratchVector<uint8_t> repeats(ast.size(), 0);
  for (int32_t node = ast.size() - 1; node >= 0; --node) {
    repeats[node] = ast.op[node] == OP_REPEAT;
    for (int32_t k = 0; k < ast.kid_count[node] && !repeats[node]; ++k) repeats[node] = repeats[ast.kid(node, k)];
  }
  ScratchVector<uint8_t> is_piece(ast.size(), 0);
  for (int32_t node = 0; node < ast.size(); ++node) {
    if (many_copies(node)) is_piece[ast.kid(node, 0)] = 1;
    if (ast.op[node] != OP_SEQ) continue;
    bool neighbours = false;
    for (int32_t k = 0; k < ast.kid_count[node] && !neighbours; ++k) neighbours = many_copies(ast.kid(node, k));
    for (int32_t k = 0; k < ast.kid_count[node] && neighbours; ++k) {
      const int32_t kid = ast.kid(node, k);
      if (ast.op[kid] == OP_REPEAT && large(ast.kid(kid, 0))) {
        is_piece[ast.kid(kid, 0)] = 1;
      } else if (ast.op[kid] == OP_ALT && !repeats[kid] && large(kid)) {
        is_piece[kid] = 1;
      }
    }
  }
  std::vector<int32_t> out;
  size_t copied = 0;
  for (int32_t piece = 0; piece < ast.size(); ++piece) {
    if (!is_piece[piece] || static_cast<size_t>(ast.at[piece]) < copied) continue;
    const size_t piece_at = static_cast<size_t>(ast.at[piece]), piece_end = program_end(ast, piece, length);
    Dfa dfa;
    try {
      dfa = build_dfa(program + piece_at, piece_end - piece_at, limits);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::LimitExceeded) throw;
      continue;  // too large alone: the unrolled copies decide
    }
    if (dfa.start() > 0) continue;  // (build_dfa numbers its start 0; OP_AUTOMATON starts there)
    std::vector<int32_t> encoded;
    const int64_t edges = append_automaton(dfa, encoded);
    // The OP_AUTOMATON's NFA: a branching state per DFA state and a byte state per edge.
    if (static_cast<uint64_t>(dfa.num_states() + edges) >= sizes[piece]) continue;
    out.insert(out.end(), program + copied, program + piece_at);
    out.insert(out.end(), encoded.begin(), encoded.end());
    copied = piece_end;
  }
  if (copied == 0) return {};
  out.insert(out.end(), program + copied, program + length);
  return out;
}

// Steps 5 to 7 on an automaton whose state 0 starts: trim, minimize, renumber. `core` (per
// state, or empty): states known to be pairwise inequivalent, see minimize_acyclic.
Dfa finish(RawDfa raw, std::vector<uint8_t> class_of, int32_t num_classes, const std::vector<uint8_t>& core = {}) {
  // Trim: keep live states, numbered densely in their old order, and the edges between them.
  const ScratchVector<uint8_t> live = co_reachable(raw);
  if (raw.num_states == 0 || !live[0]) {
    return Dfa(Dfa::Unchecked{}, num_classes, std::move(class_of), {}, {}, Dfa::kDead);
  }
  RawDfa trimmed;
  std::vector<uint8_t> trimmed_core;
  if (std::all_of(live.begin(), live.end(), [](uint8_t l) { return l != 0; })) {
    trimmed = std::move(raw);  // nothing to trim (a trie of choices, most products)
    trimmed_core = core;
  } else {
    ScratchVector<int32_t> dense(raw.num_states, Dfa::kDead);
    for (int32_t s = 0; s < raw.num_states; ++s) {
      if (!live[s]) continue;
      dense[s] = trimmed.num_states++;
      if (!core.empty()) trimmed_core.push_back(core[s]);
    }
    trimmed.accepting.reserve(trimmed.num_states);
    trimmed.edge_class.reserve(raw.edge_class.size());
    trimmed.edge_target.reserve(raw.edge_target.size());
    for (int32_t s = 0; s < raw.num_states; ++s) {
      if (!live[s]) continue;
      trimmed.accepting.push_back(raw.accepting[s]);
      for (int32_t e = raw.edge_begin[s]; e < raw.edge_begin[s + 1]; ++e) {
        if (!live[raw.edge_target[e]]) continue;
        trimmed.edge_class.push_back(raw.edge_class[e]);
        trimmed.edge_target.push_back(dense[raw.edge_target[e]]);
      }
      trimmed.edge_begin.push_back(static_cast<int32_t>(trimmed.edge_class.size()));
    }
    raw = RawDfa();  // release
  }

  // Minimize, then number blocks breadth-first from the start's block (the start is state 0
  // of the subset construction, hence dense state 0).
  const Blocks blocks = minimize(trimmed, num_classes, trimmed_core);
  const auto num_blocks = static_cast<int32_t>(blocks.member.size());
  ScratchVector<int32_t> order(num_blocks, Dfa::kDead), queue{blocks.block_of[0]};
  order[blocks.block_of[0]] = 0;
  std::vector<int32_t> out_trans(static_cast<size_t>(num_blocks) * num_classes, Dfa::kDead);
  std::vector<uint8_t> out_accepting(num_blocks);
  for (size_t q = 0; q < queue.size(); ++q) {
    const int32_t block = queue[q];
    const int32_t rep = blocks.member[block];  // any member: they are equivalent
    out_accepting[q] = trimmed.accepting[rep];
    for (int32_t e = trimmed.edge_begin[rep]; e < trimmed.edge_begin[rep + 1]; ++e) {
      const int32_t tb = blocks.block_of[trimmed.edge_target[e]];
      if (order[tb] == Dfa::kDead) {
        order[tb] = static_cast<int32_t>(queue.size());
        queue.push_back(tb);
      }
      out_trans[q * num_classes + trimmed.edge_class[e]] = order[tb];
    }
  }
  // Blocks the start does not reach (possible only in automata given as rows) are dropped.
  out_trans.resize(queue.size() * num_classes);
  out_accepting.resize(queue.size());
  return Dfa(Dfa::Unchecked{}, num_classes, std::move(class_of), std::move(out_trans), std::move(out_accepting), 0);
}

// A direct construction for the commonest terminals, which the subset construction would
// only rediscover: *chains of choices* and alternations of them. A chain is a sequence whose
// every item is a finite, prefix-free set of strings of byte sets. A JSON-quoted property name
// is one: the quotes, then per character its raw UTF-8 bytes, its short escape or its \u
// escape (hex letters in either case); "any of these names" is an alternation of such chains.
//
// The chains go into one trie, item by item: chains that begin with the same items (the same
// program words) share their states, and at a state each distinct next item inserts its
// strings into the state's byte-set trie, ending in a state of its own where its chains go on.
// The result is deterministic by construction and acyclic, so finishing it (Revuz) takes
// linear time. Returns false, leaving `raw` unusable, when the program is not of this shape
// (any repetition, automaton or nesting beyond ALT of SEQ of items, an item that is ALT of
// strings of BYTES), when strings of one state overlap without being equal or one is a prefix
// of another (no deterministic trie), or past `max_states`: the general pipeline then builds it.
bool build_choice_trie(const Ast& ast, const int32_t* program, size_t length, const ByteClasses& cls,
                       int32_t max_states, RawDfa& raw) {
  // The chains, as item nodes: chain c is items[chain_begin[c] .. chain_begin[c + 1]).
  // Per-state and per-edge vectors are reserved for the most the program can need (a state
  // per BYTES node and item end, an edge per BYTES node): a name's DFA is small, and growing
  // its vectors step by step cost a tenth of building it.
  const auto nodes = static_cast<size_t>(ast.size());
  ScratchVector<int32_t> items, chain_begin{0};
  items.reserve(nodes);
  auto add_chain = [&](int32_t node) {
    if (ast.op[node] == OP_SEQ) {
      for (int32_t i = 0; i < ast.kid_count[node]; ++i) {
        const int32_t k = ast.kid(node, i);
        if (!(ast.op[k] == OP_SEQ && ast.kid_count[k] == 0)) items.push_back(k);  // skip seams
      }
    } else {
      items.push_back(node);
    }
    chain_begin.push_back(static_cast<int32_t>(items.size()));
  };
  if (ast.op[0] == OP_ALT) {
    if (ast.kid_count[0] == 0) return false;
    for (int32_t i = 0; i < ast.kid_count[0]; ++i) add_chain(ast.kid(0, i));
  } else {
    add_chain(0);
  }
  // One string of an item: BYTES nodes in order, as ids of distinct sets.
  ScratchVector<int32_t> text;
  auto string_of = [&](int32_t node) {
    text.clear();
    if (ast.op[node] == OP_BYTES) {
      text.push_back(cls.node_set[node]);
    } else if (ast.op[node] == OP_SEQ) {
      for (int32_t i = 0; i < ast.kid_count[node]; ++i) {
        const int32_t k = ast.kid(node, i);
        if (ast.op[k] != OP_BYTES) return false;
        text.push_back(cls.node_set[k]);
      }
    } else {
      return false;
    }
    // An empty set (no string at all) or an empty string (a prefix of every other) is left
    // to the general pipeline.
    return !text.empty() && std::find(text.begin(), text.end(), -1) == text.end();
  };
  // Edges as linked lists in flat arrays (a state's edges are added between other states').
  struct Edge {
    int32_t set, target, next;
  };
  ScratchVector<Edge> edges;
  ScratchVector<int32_t> first_edge;
  ScratchVector<ByteSet> used;         // per state: the classes its edges take
  ScratchVector<uint8_t> item_end;     // per state: where an item ends (its chains go on)
  ScratchVector<uint8_t> accepting;
  edges.reserve(nodes);
  first_edge.reserve(nodes + 1);
  used.reserve(nodes + 1);
  item_end.reserve(nodes + 1);
  accepting.reserve(nodes + 1);
  auto add_state = [&](bool at_item_end) {
    first_edge.push_back(-1);
    used.push_back(ByteSet{});
    item_end.push_back(at_item_end ? 1 : 0);
    accepting.push_back(0);
    return static_cast<int32_t>(first_edge.size() - 1);
  };
  // Adds `text` from `from`, ending in `end`; false when it overlaps or extends a string there.
  auto insert = [&](int32_t from, int32_t end) {
    int32_t at = from;
    for (size_t i = 0; i < text.size(); ++i) {
      const bool last = i + 1 == text.size();
      const int32_t set = text[i];
      int32_t e = first_edge[at];
      while (e >= 0 && edges[e].set != set) e = edges[e].next;
      if (e >= 0) {
        const int32_t target = edges[e].target;
        // The same string again is fine; one that another item's string, or a longer one,
        // shares (or one that goes on past an item's end) is not a trie.
        if (last ? target != end : item_end[target] != 0) return false;
        at = target;
        continue;
      }
      for (int32_t j = cls.set_begin[set]; j < cls.set_begin[set + 1]; ++j) {
        const int32_t c = cls.set_classes[j];
        if (contains(used[at], c)) return false;  // overlaps a different set: not a trie
        used[at][c >> 6] |= uint64_t{1} << (c & 63);
      }
      const int32_t target = last ? end : add_state(false);
      edges.push_back({set, target, first_edge[at]});
      first_edge[at] = static_cast<int32_t>(edges.size() - 1);
      if (static_cast<int32_t>(first_edge.size()) >= max_states) return false;
      at = target;
    }
    return true;
  };
  // An item's program words, with a hash: items are the same when their words are.
  struct ItemWords {
    size_t begin, size;
    uint64_t hash;
    bool operator==(const ItemWords& o) const {
      return hash == o.hash && size == o.size && std::equal(program_words + begin, program_words + begin + size, program_words + o.begin);
    }
    const int32_t* program_words;
  };
  auto words_of = [&](int32_t node) {
    const auto begin = static_cast<size_t>(ast.at[node]);
    const size_t size = program_end(ast, node, length) - begin;
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < size; ++i) h = (h ^ static_cast<uint32_t>(program[begin + i])) * 0xFF51AFD7ED558CCDull;
    return ItemWords{begin, size, h, program};
  };
  // Work: a state and the chains there, all past the same `pos` items; the chains of a piece of
  // work are members[begin .. end).
  struct Work {
    int32_t state, pos, begin, end;
  };
  ScratchVector<int32_t> members;
  members.reserve(items.size() + chain_begin.size());  // each chain once per item it passes, and at its end
  for (int32_t c = 0; c + 1 < static_cast<int32_t>(chain_begin.size()); ++c) members.push_back(c);
  ScratchVector<Work> queue{{add_state(true), 0, 0, static_cast<int32_t>(members.size())}};
  queue.reserve(nodes + 1);
  ScratchVector<ItemWords> group_item;  // per distinct next item at a state
  ScratchVector<int32_t> group_state;
  ScratchVector<int32_t> group_of;                 // per member: its group
  for (size_t q = 0; q < queue.size(); ++q) {
    const Work w = queue[q];
    group_item.clear();
    group_state.clear();
    group_of.clear();
    for (int32_t m = w.begin; m < w.end; ++m) {
      const int32_t c = members[m];
      if (chain_begin[c] + w.pos == chain_begin[c + 1]) {  // this chain ends here
        accepting[w.state] = 1;
        group_of.push_back(-1);
        continue;
      }
      const int32_t item = items[chain_begin[c] + w.pos];
      const ItemWords words = words_of(item);
      size_t g = 0;
      while (g < group_item.size() && !(group_item[g] == words)) ++g;
      if (g == group_item.size()) {
        group_item.push_back(words);
        group_state.push_back(add_state(true));
        const int32_t end = group_state.back();
        if (ast.op[item] == OP_ALT) {
          if (ast.kid_count[item] == 0) return false;
          for (int32_t i = 0; i < ast.kid_count[item]; ++i) {
            if (!string_of(ast.kid(item, i)) || !insert(w.state, end)) return false;
          }
        } else if (!string_of(item) || !insert(w.state, end)) {
          return false;
        }
      }
      group_of.push_back(static_cast<int32_t>(g));
    }
    for (size_t g = 0; g < group_item.size(); ++g) {
      const auto begin = static_cast<int32_t>(members.size());
      for (int32_t m = w.begin; m < w.end; ++m) {
        const int32_t c = members[m];
        if (group_of[m - w.begin] == static_cast<int32_t>(g)) members.push_back(c);
      }
      queue.push_back({group_state[g], w.pos + 1, begin, static_cast<int32_t>(members.size())});
    }
  }
  // Rows by class: each set edge becomes one edge per class it covers, sorted by class.
  raw.num_states = static_cast<int32_t>(first_edge.size());
  raw.accepting = std::move(accepting);
  raw.edge_begin.reserve(raw.num_states + 1);
  raw.edge_class.reserve(edges.size() + edges.size() / 2);
  raw.edge_target.reserve(edges.size() + edges.size() / 2);
  ScratchVector<std::pair<int32_t, int32_t>> row;
  for (int32_t s = 0; s < raw.num_states; ++s) {
    row.clear();
    for (int32_t e = first_edge[s]; e >= 0; e = edges[e].next) {
      for (int32_t j = cls.set_begin[edges[e].set]; j < cls.set_begin[edges[e].set + 1]; ++j) {
        row.emplace_back(cls.set_classes[j], edges[e].target);
      }
    }
    std::sort(row.begin(), row.end());
    for (const auto& [c, t] : row) {
      raw.edge_class.push_back(c);
      raw.edge_target.push_back(t);
    }
    raw.edge_begin.push_back(static_cast<int32_t>(raw.edge_class.size()));
  }
  return true;
}

// Trims, minimizes and renumbers a product. With `left_core` (a difference of minimal DFAs), the
// states where the right side no longer matches accept what the left accepts from there: they
// are pairwise inequivalent, and when the right side is finite (names) the other states have no
// cycle, so minimization takes linear time.
Dfa finish_product(ProductAutomaton product, bool left_core) {
  RawDfa raw;
  raw.num_states = product.num_states();
  raw.edge_begin = std::move(product.edge_begin);
  raw.edge_class = std::move(product.edge_class);
  raw.edge_target = std::move(product.edge_target);
  raw.accepting = std::move(product.accepting);
  const int32_t num_classes = product.num_classes();
  return finish(std::move(raw), std::move(product.class_of), num_classes,
                left_core ? product.right_done : std::vector<uint8_t>{});
}

// A program that is one OP_DIFFERENCE (a JSON object's "any other key"): the product of the
// operands' DFAs is finished directly instead of being re-encoded and built again.
Dfa build_difference(const Ast& ast, const int32_t* program, size_t length, const DfaLimits& limits) {
  auto end_of = [&](int32_t node) { return program_end(ast, node, length); };
  const int32_t left = ast.kid(0, 0), right = ast.kid(0, 1);
  const size_t left_at = static_cast<size_t>(ast.at[left]), right_at = static_cast<size_t>(ast.at[right]);
  const Dfa l = build_dfa(program + left_at, end_of(left) - left_at, limits);
  const Dfa r = build_dfa(program + right_at, end_of(right) - right_at, limits);
  Dfa direct;
  if (difference_of_finite(l, r, std::max(limits.max_dfa_states, 0), direct)) return direct;
  ProductAutomaton product = tokensieve::product(l, r, ProductOp::Minus, std::max(limits.max_dfa_states, 0));
  return finish_product(std::move(product), true);
}

}  // namespace

size_t program_node_end(const int32_t* program, size_t length, size_t start) {
  const Ast ast = parse_program(program, length);
  // Nodes are numbered in prefix order, so their offsets ascend.
  const auto node = std::lower_bound(ast.at.begin(), ast.at.end(), static_cast<int32_t>(std::min<size_t>(start, length)));
  if (node == ast.at.end() || static_cast<size_t>(*node) != start) fail_program(start, "no expression starts here");
  return program_end(ast, static_cast<int32_t>(node - ast.at.begin()), length);
}

namespace {

// build_dfa, where `determinize_items` says whether repeated items may still be determinized
// first (not again in the program that came out of that).
Dfa build(const int32_t* program, size_t length, const DfaLimits& limits, bool determinize_items) {
  if (std::optional<Dfa> literal = detail::build_json_literal(program, length, std::max(limits.max_dfa_states, 0))) {
    return std::move(*literal);
  }
  if (std::optional<Dfa> literals = detail::build_json_literal_set(program, length, std::max(limits.max_dfa_states, 0))) {
    return std::move(*literals);
  }
  const Ast ast = parse_program(program, length);
  if (ast.size() > 0 && ast.op[0] == OP_DIFFERENCE) return build_difference(ast, program, length, limits);
  const std::vector<int32_t> expanded = expand_differences(ast, program, length, limits);
  if (!expanded.empty()) return build_dfa(expanded.data(), expanded.size(), limits);
  const ScratchVector<uint64_t> sizes = nfa_sizes(ast);
  const uint64_t nfa_states = sat_add(sizes[0], 1);  // + the accepting state
  const uint64_t nfa_limit = static_cast<uint64_t>(std::clamp<int64_t>(
      limits.max_nfa_states, 0, std::numeric_limits<int32_t>::max() - 1));
  if (nfa_states > nfa_limit) {
    throw Error(ErrorKind::LimitExceeded,
                "regex NFA needs " +
                    (nfa_states >= kSizeCap ? std::string("more than 2^62")
                                            : std::to_string(nfa_states)) +
                    " states (bounded repetitions are unrolled), over max_nfa_states (" +
                    std::to_string(limits.max_nfa_states) + ")",
                "max_nfa_states");
  }
  if (determinize_items) {
    const std::vector<int32_t> replaced = determinize_repeated_items(ast, program, length, sizes, limits);
    if (!replaced.empty()) return build(replaced.data(), replaced.size(), limits, false);
  }
  ByteClasses cls = compute_classes(ast, program);
  const int32_t num_classes = cls.count;
  RawDfa chain;
  if (build_choice_trie(ast, program, length, cls, std::max(limits.max_dfa_states, 0), chain)) {
    return finish(std::move(chain), std::move(cls.of), num_classes);
  }
  const Nfa nfa = build_nfa(ast, program, cls, sizes, static_cast<size_t>(nfa_states));
  RawDfa raw = SubsetBuilder(nfa, cls, std::max(limits.max_dfa_states, 0)).run();
  return finish(std::move(raw), std::move(cls.of), num_classes);
}

}  // namespace

Dfa build_dfa(const int32_t* program, size_t length, const DfaLimits& limits) {
  return build(program, length, limits, true);
}

Dfa determinize(const RangeNfa& in, int32_t max_states) {
  const int32_t n = in.num_states();
  const auto num_edges = static_cast<int32_t>(in.lo.size());
  auto bad = [](const std::string& what) { throw Error(ErrorKind::InvalidArgument, "range NFA: " + what); };
  if (n < 1 || in.eps_begin.size() != in.edge_begin.size()) bad("needs rows for at least one state");
  if (in.hi.size() != in.lo.size() || in.target.size() != in.lo.size()) bad("lo, hi, target differ in length");
  if (in.edge_begin[0] != 0 || in.edge_begin[n] != num_edges || in.eps_begin[0] != 0 ||
      in.eps_begin[n] != static_cast<int32_t>(in.eps.size())) {
    bad("rows do not cover the edges");
  }
  for (int32_t s = 0; s < n; ++s) {
    if (in.edge_begin[s] > in.edge_begin[s + 1] || in.eps_begin[s] > in.eps_begin[s + 1]) bad("rows out of order");
  }
  for (int32_t e = 0; e < num_edges; ++e) {
    if (in.lo[e] < 0 || in.hi[e] > 255 || in.lo[e] > in.hi[e]) bad("byte range outside 0..255");
    if (in.target[e] < 0 || in.target[e] >= n) bad("edge target out of range");
  }
  for (int32_t t : in.eps) {
    if (t < 0 || t >= n) bad("epsilon target out of range");
  }
  if (in.start < 0 || in.start >= n || in.final < 0 || in.final >= n) bad("start or final out of range");

  // The builder's NFA shape: state 0 accepts, every other state either reads one byte set
  // (then goes to `next`) or has epsilon edges only. A range-NFA state s becomes state 1 + s,
  // with epsilon edges to its epsilon targets, to one byte-reading state per range edge
  // (1 + n + e) and, for the final state, to state 0.
  const ByteClasses cls =
      compute_classes(num_edges, [&](int32_t e, auto&& add) { add(in.lo[e], in.hi[e]); });
  Nfa nfa;
  const int32_t total = 1 + n + num_edges;
  nfa.byte_set.reserve(total);
  nfa.next.reserve(total);
  nfa.eps_begin.reserve(total + 1);
  nfa.add(-1, -1, 0);
  for (int32_t s = 0; s < n; ++s) {
    const int32_t k = in.eps_begin[s + 1] - in.eps_begin[s], m = in.edge_begin[s + 1] - in.edge_begin[s];
    const int32_t state = nfa.add(-1, -1, k + m + (s == in.final ? 1 : 0));
    int32_t* eps = nfa.eps_of(state);
    for (int32_t i = 0; i < k; ++i) *eps++ = 1 + in.eps[in.eps_begin[s] + i];
    for (int32_t e = in.edge_begin[s]; e < in.edge_begin[s + 1]; ++e) *eps++ = 1 + n + e;
    if (s == in.final) *eps++ = 0;
  }
  for (int32_t e = 0; e < num_edges; ++e) nfa.add(cls.node_set[e], 1 + in.target[e], 0);
  nfa.eps_begin.push_back(static_cast<int32_t>(nfa.eps.size()));
  nfa.start = 1 + in.start;
  RawDfa raw = SubsetBuilder(nfa, cls, std::max(max_states, 0)).run();
  std::vector<uint8_t> class_of = cls.of;
  return finish(std::move(raw), std::move(class_of), cls.count);
}

Dfa dfa_from_ranges(const RangeRows& rows) {
  const auto n = static_cast<int32_t>(rows.accepting.size());
  const auto num_edges = static_cast<int32_t>(rows.lo.size());
  auto bad = [](const std::string& what) { throw Error(ErrorKind::InvalidArgument, "range rows: " + what); };
  if (rows.edge_begin.size() != static_cast<size_t>(n) + 1 || rows.edge_begin[0] != 0 ||
      rows.edge_begin[n] != num_edges || rows.hi.size() != rows.lo.size() || rows.target.size() != rows.lo.size()) {
    bad("rows do not cover the edges");
  }
  if (n == 0) return Dfa(Dfa::Unchecked{}, 1, std::vector<uint8_t>(256, 0), {}, {}, Dfa::kDead);
  const ByteClasses cls =
      compute_classes(num_edges, [&](int32_t e, auto&& add) {
        if (rows.lo[e] >= 0 && rows.hi[e] <= 255 && rows.lo[e] <= rows.hi[e]) add(rows.lo[e], rows.hi[e]);
      });
  RawDfa raw;
  raw.num_states = n;
  ScratchVector<int32_t> target_of(cls.count);
  for (int32_t s = 0; s < n; ++s) {
    if (rows.edge_begin[s] > rows.edge_begin[s + 1]) bad("rows out of order");
    std::fill(target_of.begin(), target_of.end(), Dfa::kDead);
    for (int32_t e = rows.edge_begin[s]; e < rows.edge_begin[s + 1]; ++e) {
      if (rows.lo[e] < 0 || rows.hi[e] > 255 || rows.lo[e] > rows.hi[e]) bad("byte range outside 0..255");
      if (rows.target[e] < 0 || rows.target[e] >= n) bad("edge target out of range");
      const int32_t set = cls.node_set[e];
      for (int32_t j = cls.set_begin[set]; j < cls.set_begin[set + 1]; ++j) {
        int32_t& t = target_of[cls.set_classes[j]];
        if (t != Dfa::kDead) bad("overlapping ranges: not deterministic");
        t = rows.target[e];
      }
    }
    for (int32_t c = 0; c < cls.count; ++c) {
      if (target_of[c] == Dfa::kDead) continue;
      raw.edge_class.push_back(c);
      raw.edge_target.push_back(target_of[c]);
    }
    raw.edge_begin.push_back(static_cast<int32_t>(raw.edge_class.size()));
    raw.accepting.push_back(rows.accepting[s] ? 1 : 0);
  }
  std::vector<uint8_t> class_of = cls.of;
  return finish(std::move(raw), std::move(class_of), cls.count);
}

Dfa product_dfa(const Dfa& left, const Dfa& right, ProductOp op, int32_t max_states) {
  Dfa direct;
  if (op == ProductOp::Minus && difference_of_finite(left, right, std::max(max_states, 0), direct)) return direct;
  return finish_product(tokensieve::product(left, right, op, std::max(max_states, 0)), op == ProductOp::Minus);
}

}  // namespace tokensieve
