// Lowering: grammar IR -> terminals (byte automata) + Earley productions, natively.
//
// The same algorithm as `src/tokensieve/compiler/lower.py` (read its module docstring for
// the why of each rule), which stays as the reference: both make the same terminals, in the
// same order, and the same productions, nonterminals and unordered rows, symbol for symbol
// (tests/test_native_lowering.py compares them over every MaskBench schema). Python's
// lowering walks thousands of IR objects per large schema, and a Python function call and a
// dictionary probe per node visit made it 40% of such a schema's compile.
//
// The IR arrives flattened (`IrGrammar`): nodes numbered so that a node's sub-expressions
// come before it, each written as int64 words (see `IrKind` for each kind's layout). The
// terminals themselves (automata and their token indexes, counted terminals) come from a
// `TerminalSource`, the compiler's process-wide terminal cache: the lowering decides which
// regular expressions become terminals and hands their regex programs (dfa.hpp) over.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tokensieve {

// Node kinds and their word layouts (counts past int64 are clamped by the encoder; -1 is "none"):
enum class IrKind : int64_t {
  Bytes = 0,       // [0, n, lo_1, hi_1, ..., lo_n, hi_n]
  Seq = 1,         // [1, n, item_1, ..., item_n]
  Alt = 2,         // [2, n, item_1, ..., item_n]
  Repeat = 3,      // [3, item, min, max or -1]
  Ref = 4,         // [4, rule]
  Special = 5,     // [5, token id]
  Automaton = 6,   // [6, h, header words (program.automaton_header) x h, n, label_1, ..., label_n]
  Difference = 7,  // [7, left, right]
  Unordered = 8,   // [8, n, item_1..item_n, separator, repeatable or -1, min, max or -1, r, required_1..r]
  Seam = 9,        // [9]
  Counted = 10,    // [10, u, per unit: (accepting, e, (label, target) x e), min, max or -1]
};

// A grammar's IR, flattened (see IrKind).
struct IrGrammar {
  std::vector<int64_t> words;       // the nodes' words, node after node
  std::vector<int32_t> rule_body;   // each rule's body node, rules in definition order
  std::vector<std::string> rule_names;  // UTF-8 (their order bounds the depth check's walk)
  int32_t start = 0;                // the start rule
};

struct LoweringLimits {
  int64_t max_terminal_states = 2000;
  int64_t max_dfa_states = 200000;
  int64_t max_productions = 1000000;
  int64_t max_total_dfa_states = 1000000;
  int64_t max_grammar_depth = 2000;
  int64_t min_counted_repeat = 8;
  double deadline = 0;                  // steady-clock seconds (Python's time.monotonic())
  std::string max_compile_seconds;      // as Python prints it, for the error message
};

// A regex program (dfa.hpp: int32 words) that the lowering has not necessarily written out.
// The programs it tries as terminals are large (a whole object's body inlines every value
// inside it: kilobytes) and are mostly tried before, in this grammar or in an earlier one; so a
// program is known by the length and hash of its words, which the lowering composes from its
// parts' without reading a word, and is compared with a program written out earlier piece by
// piece. Its words are written out only when a terminal must be built from them.
class ProgramText {
 public:
  virtual ~ProgramText() = default;
  // The polynomial hash of the words w_1..w_n: sum of w_i * kProgramHashBase^(n - i) mod 2^64,
  // each word read as an unsigned 32-bit number (so that hashes compose over concatenation).
  virtual uint64_t hash() const = 0;
  virtual int64_t num_words() const = 0;
  // Whether `program` (words written out, as text() writes them) is this program.
  virtual bool equals(const std::string& program) const = 0;
  // The words, written out (4 bytes each, native byte order); valid while the lowering runs.
  virtual const std::string& text() const = 0;
};

constexpr uint64_t kProgramHashBase = 0x9E3779B97F4A7C15ull;

// Where terminals come from. Each method returns a handle number (>= 0, the source's own
// numbering) and sets `states` to the automaton's state count, or returns -1 for "none".
class TerminalSource {
 public:
  virtual ~TerminalSource() = default;
  // The DFA terminal of a regex program whose minimized automaton has at most `max_states`
  // states and whose subset construction passes through at most `subset_cap`.
  virtual int32_t dfa(const ProgramText& program, int64_t max_states, int64_t subset_cap, int64_t& states) = 0;
  // A counted terminal `before item{min,max} after` (programs; null: the empty string), or -1.
  virtual int32_t counted(const std::string* before, const std::string& item, int64_t min, int64_t max,
                          const std::string* after, int64_t& states) = 0;
  // A counted terminal over a unit automaton: accepting flags, edges (from, to, label program).
  struct UnitEdge {
    int64_t from;
    int64_t to;
    std::string label;
  };
  virtual int32_t units(const std::string* before, const std::vector<bool>& accepting,
                        const std::vector<UnitEdge>& edges, int64_t min, int64_t max, const std::string* after,
                        int64_t& states) = 0;
  virtual bool has_counted() const = 0;  // whether counted() may make terminals at all
  virtual bool has_units() const = 0;    // whether units() may
};

// A terminal of the lowered grammar: a source handle, or a special token.
struct LoweredTerminal {
  bool special = false;
  int32_t value = 0;  // the handle number, or the token id
};

// The names of nonterminals that stand for no rule (the rest are rule numbers, >= 0).
enum class HelperName : int32_t { Alt = -1, Star = -2, Repeat = -3, Upto = -4, Unordered = -5, Item = -6,
                                  Separator = -7, Repeatable = -8 };

struct NativeLoweredGrammar {
  std::vector<LoweredTerminal> terminals;
  std::vector<int32_t> production_words;   // [n, lhs, rhs...] per production: n = 1 + |rhs|
  int32_t num_productions = 0;
  int32_t num_nonterminals = 0;
  int32_t start = 0;
  std::vector<int32_t> nonterminal_names;  // a rule number or a HelperName
  std::vector<std::vector<int32_t>> unordered;  // rows as in lower.py's LoweredGrammar.unordered
};

// Lowers `grammar`. Throws Error(LimitExceeded) past a limit (the same limit, message and
// order of checks as lower.py), Error(GrammarSyntax) for a Difference of non-regular parts,
// and lets the source's exceptions through.
NativeLoweredGrammar lower_grammar(const IrGrammar& grammar, TerminalSource& source, const LoweringLimits& limits);

}  // namespace tokensieve
