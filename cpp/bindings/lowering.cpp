// _core.lower_grammar: the native lowering (tokensieve/lowering.hpp) over Python's terminal
// builders (the compiler's TerminalCache). Called by tokensieve/compiler/native_lower.py.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstring>

#include "bind.hpp"
#include "tokensieve/error.hpp"
#include "tokensieve/grammar.hpp"
#include "tokensieve/lowering.hpp"

namespace nb = nanobind;

namespace tokensieve::bindings {

namespace {

template <class T>
std::vector<T> words_of(const nb::bytes& data, const char* what) {
  if (data.size() % sizeof(T) != 0) throw Error(ErrorKind::InvalidArgument, std::string("malformed ") + what);
  std::vector<T> out(data.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), data.c_str(), data.size());
  return out;
}

// The encoder's words, read straight from its list: an int64 array made from the list first
// cost more than the encoder's own work (each item parsed as an argument).
std::vector<int64_t> words_of_list(const nb::handle& words) {
  if (!PyList_Check(words.ptr())) throw Error(ErrorKind::InvalidArgument, "malformed IR words: not a list");
  const Py_ssize_t n = PyList_GET_SIZE(words.ptr());
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (Py_ssize_t k = 0; k < n; ++k) {
    PyObject* item = PyList_GET_ITEM(words.ptr(), k);
    const long long v = PyLong_Check(item) ? PyLong_AsLongLong(item) : -1;
    if (!PyLong_Check(item) || (v == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      throw Error(ErrorKind::InvalidArgument, "malformed IR words: not an int64");
    }
    out[static_cast<size_t>(k)] = v;
  }
  return out;
}

// The terminal builders of lower.py's signature, their handles kept in `handles`.
class PythonTerminals final : public TerminalSource {
 public:
  PythonTerminals(nb::object build, nb::object build_counted, nb::object build_units)
      : build_(std::move(build)), build_counted_(std::move(build_counted)), build_units_(std::move(build_units)) {}

  int32_t dfa(const std::string& program, int64_t max_states, int64_t subset_cap, int64_t& states) override {
    return keep(build_(bytes(program), max_states, subset_cap), states);
  }

  int32_t counted(const std::string* before, const std::string& item, int64_t min, int64_t max,
                  const std::string* after, int64_t& states) override {
    return keep(build_counted_(optional_bytes(before), bytes(item), min, count_or_none(max), optional_bytes(after)),
                states);
  }

  int32_t units(const std::string* before, const std::vector<bool>& accepting, const std::vector<UnitEdge>& edges,
                int64_t min, int64_t max, const std::string* after, int64_t& states) override {
    nb::list flags, rows;
    for (bool a : accepting) flags.append(nb::bool_(a));
    for (const auto& edge : edges) rows.append(nb::make_tuple(edge.from, edge.to, bytes(edge.label)));
    nb::tuple unit_automaton = nb::make_tuple(nb::tuple(flags), nb::tuple(rows));
    return keep(build_units_(optional_bytes(before), unit_automaton, min, count_or_none(max), optional_bytes(after)),
                states);
  }

  bool has_counted() const override { return !build_counted_.is_none(); }
  bool has_units() const override { return !build_units_.is_none(); }

  nb::list handles;

 private:
  static nb::bytes bytes(const std::string& s) { return nb::bytes(s.data(), s.size()); }
  static nb::object optional_bytes(const std::string* s) { return s == nullptr ? nb::none() : nb::object(bytes(*s)); }
  static nb::object count_or_none(int64_t max) { return max < 0 ? nb::none() : nb::object(nb::int_(max)); }

  int32_t keep(const nb::object& handle, int64_t& states) {
    if (handle.is_none()) return -1;
    if (nb::isinstance<DfaTokenIndex>(handle)) {
      states = nb::cast<const DfaTokenIndex&>(handle).dfa_ptr()->num_states();
    } else if (nb::isinstance<CountedTerminal>(handle)) {
      states = nb::cast<const CountedTerminal&>(handle).loop_ptr()->num_states();
    } else {  // a stand-in of a test: read as lower.py reads it
      nb::object automaton = nb::hasattr(handle, "dfa") ? handle.attr("dfa") : handle.attr("loop");
      states = nb::cast<int64_t>(automaton.attr("num_states"));
    }
    handles.append(handle);
    return static_cast<int32_t>(nb::len(handles) - 1);
  }

  nb::object build_, build_counted_, build_units_;
};

const char* helper_name(int32_t code) {
  switch (static_cast<HelperName>(code)) {
    case HelperName::Alt: return "alt";
    case HelperName::Star: return "star";
    case HelperName::Repeat: return "repeat";
    case HelperName::Upto: return "upto";
    case HelperName::Unordered: return "unordered";
    case HelperName::Item: return "item";
    case HelperName::Separator: return "separator";
    case HelperName::Repeatable: return "repeatable";
  }
  return "?";
}

}  // namespace

void bind_lowering(nb::module_& m) {
  m.def(
      "lower_grammar",
      [](const nb::list& words, const nb::bytes& rule_body, const nb::bytes& rule_rank, int32_t start,
         const nb::list& rule_names, const nb::tuple& limits, nb::object build, nb::object build_counted,
         nb::object build_units) {
        IrGrammar grammar;
        grammar.words = words_of_list(words);
        grammar.rule_body = words_of<int32_t>(rule_body, "rule bodies");
        grammar.rule_rank = words_of<int32_t>(rule_rank, "rule ranks");
        grammar.start = start;
        if (nb::len(rule_names) != grammar.rule_body.size() || nb::len(limits) != 8) {
          throw Error(ErrorKind::InvalidArgument, "malformed IR grammar: names or limits");
        }
        LoweringLimits lim;
        lim.max_terminal_states = nb::cast<int64_t>(limits[0]);
        lim.max_dfa_states = nb::cast<int64_t>(limits[1]);
        lim.max_productions = nb::cast<int64_t>(limits[2]);
        lim.max_total_dfa_states = nb::cast<int64_t>(limits[3]);
        lim.max_grammar_depth = nb::cast<int64_t>(limits[4]);
        lim.min_counted_repeat = nb::cast<int64_t>(limits[5]);
        lim.deadline = nb::cast<double>(limits[6]);
        lim.max_compile_seconds = nb::cast<std::string>(limits[7]);
        PythonTerminals source(std::move(build), std::move(build_counted), std::move(build_units));
        const NativeLoweredGrammar lowered = lower_grammar(grammar, source, lim);

        nb::list terminals;
        for (const LoweredTerminal& t : lowered.terminals) {
          if (t.special) {
            terminals.append(nb::int_(t.value));
          } else {
            terminals.append(source.handles[static_cast<size_t>(t.value)]);
          }
        }
        nb::list productions;
        const auto& pw = lowered.production_words;
        for (size_t at = 0; at < pw.size();) {
          const auto n = static_cast<size_t>(pw[at]);
          PyObject* row = PyList_New(static_cast<Py_ssize_t>(n));
          if (row == nullptr) throw nb::python_error();
          for (size_t k = 0; k < n; ++k) PyList_SET_ITEM(row, static_cast<Py_ssize_t>(k), PyLong_FromLong(pw[at + 1 + k]));
          productions.append(nb::steal(row));
          at += 1 + n;
        }
        nb::list names;
        nb::object helpers[8];
        for (int32_t code : lowered.nonterminal_names) {
          if (code >= 0) {
            names.append(rule_names[static_cast<size_t>(code)]);
          } else {
            nb::object& name = helpers[-code - 1];
            if (!name.is_valid()) name = nb::str(helper_name(code));
            names.append(name);
          }
        }
        nb::list unordered;
        for (const auto& row : lowered.unordered) {
          nb::list r;
          for (int32_t v : row) r.append(nb::int_(v));
          unordered.append(r);
        }
        return nb::make_tuple(terminals, productions, lowered.num_nonterminals, lowered.start, names, unordered);
      },
      nb::arg("words"), nb::arg("rule_body"), nb::arg("rule_rank"), nb::arg("start"), nb::arg("rule_names"),
      nb::arg("limits"), nb::arg("build"), nb::arg("build_counted").none(), nb::arg("build_units").none(),
      "Lower a flattened grammar IR (see tokensieve/compiler/native_lower.py): (terminals, productions,\n"
      "num_nonterminals, start, nonterminal_names, unordered), as lower.py's LoweredGrammar holds them.");
}

}  // namespace tokensieve::bindings
