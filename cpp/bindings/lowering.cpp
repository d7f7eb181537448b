// _core.lower_grammar: the native lowering (tokensieve/lowering.hpp) over Python's terminal
// builders (the compiler's TerminalCache). Called by tokensieve/compiler/native_lower.py.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "bind.hpp"
#include "tokensieve/error.hpp"
#include "tokensieve/grammar.hpp"
#include "tokensieve/hash_mix.hpp"
#include "tokensieve/lowering.hpp"

namespace nb = nanobind;

namespace tokensieve::bindings {

namespace {

// Node objects -> their numbers: open addressing in one array (a grammar has thousands of
// nodes; a node-based map cost an allocation per node and as much again to free them).
class NodeIndex {
 public:
  NodeIndex() : slots_(1024) {}

  int64_t find(PyObject* key) const {
    for (size_t at = slot(key);; at = (at + 1) & (slots_.size() - 1)) {
      if (slots_[at].key == key) return slots_[at].value;
      if (slots_[at].key == nullptr) return -1;
    }
  }

  void add(PyObject* key, int64_t value) {  // (key is new)
    if (2 * (size_ + 1) > slots_.size()) grow();
    size_t at = slot(key);
    while (slots_[at].key != nullptr) at = (at + 1) & (slots_.size() - 1);
    slots_[at] = {key, value};
    ++size_;
  }

 private:
  struct Slot {
    PyObject* key = nullptr;
    int64_t value = -1;
  };

  size_t slot(PyObject* key) const {
    return static_cast<size_t>(detail::mix(reinterpret_cast<uintptr_t>(key))) & (slots_.size() - 1);
  }

  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    size_ = 0;
    for (const Slot& s : old) {
      if (s.key != nullptr) add(s.key, s.value);
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

// Reads the IR objects of tokensieve.ir into IrGrammar words (see lowering.hpp). The node
// classes arrive from Python in IrKind order; a node of any other class (a subclass, too), a
// reference to an undefined rule, a count that is not an int, a name that is not UTF-8, or
// nesting deeper than `max_depth` make the whole grammar "unsuitable": the caller lowers it
// with the reference instead. Done here, not in Python: there, boxing every word and probing
// a dict by id() per node cost more than the whole native lowering.
class IrReader {
 public:
  IrReader(const nb::tuple& classes, const nb::dict& rules, int64_t max_depth) : rules_(rules), max_depth_(max_depth) {
    if (nb::len(classes) != 11) throw Error(ErrorKind::InvalidArgument, "expected the 11 IR node classes");
    for (size_t k = 0; k < 11; ++k) classes_[k] = classes[k].ptr();
    for (size_t f = 0; f < kFields; ++f) {
      PyObject* name = PyUnicode_InternFromString(kFieldNames[f]);
      if (name == nullptr) throw nb::python_error();
      field_names_[f] = nb::steal(name);
    }
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    int32_t n = 0;
    while (PyDict_Next(rules.ptr(), &pos, &key, &value)) position_[nb::handle(key)] = nb::int_(n++);
    words_.reserve(static_cast<size_t>(64 * n));  // (about 10 words per node, several nodes per rule)
  }

  // False when the grammar is unsuitable.
  bool read(IrGrammar& out, PyObject* start_name) {
    const int32_t start = rule_of(start_name);
    if (start < 0) return false;
    out.start = start;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(rules_.ptr(), &pos, &key, &value)) {
      Py_ssize_t size = 0;
      const char* utf8 = PyUnicode_Check(key) ? PyUnicode_AsUTF8AndSize(key, &size) : nullptr;
      if (utf8 == nullptr) {
        PyErr_Clear();
        return false;
      }
      out.rule_names.emplace_back(utf8, static_cast<size_t>(size));
      const int64_t body = node(value, 1);
      if (body < 0) return false;
      out.rule_body.push_back(static_cast<int32_t>(body));
    }
    out.words = std::move(words_);
    return true;
  }

 private:
  enum : size_t { kBytes, kSeq, kAlt, kRepeat, kRef, kSpecial, kAutomaton, kDifference, kUnordered, kSeam, kCounted };

  // The node fields read, their names made (interned) once per reader, not per read.
  enum Field : size_t {
    k_accepting, k_edge_begin, k_item, k_items, k_labels, k_left, k_max, k_max_count, k_min, k_min_count,
    k_name, k_ranges, k_repeatable, k_required, k_right, k_separator, k_targets, k_token_id, k_units, kFields
  };
  static constexpr const char* kFieldNames[kFields] = {
      "accepting", "edge_begin", "item", "items", "labels", "left", "max", "max_count", "min", "min_count",
      "name", "ranges", "repeatable", "required", "right", "separator", "targets", "token_id", "units"};

  PyObject* field(PyObject* obj, Field f) const {
    PyObject* v = PyObject_GetAttr(obj, field_names_[f].ptr());
    if (v == nullptr) throw nb::python_error();
    return v;  // a new reference: callers keep it in a Ref
  }
  struct Ref {  // owns one reference
    PyObject* p;
    explicit Ref(PyObject* q) : p(q) {}
    Ref(const Ref&) = delete;
    Ref& operator=(const Ref&) = delete;
    ~Ref() { Py_XDECREF(p); }
  };

  // An int field as int64 (clamped past 2^62, as the encoder's counts are), or -2 when it is
  // not an int; -1 for None when `none_ok`.
  static int64_t count(PyObject* v, bool none_ok) {
    if (v == Py_None) return none_ok ? -1 : -2;
    if (!PyLong_Check(v)) return -2;
    int overflow = 0;
    const long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow > 0 || x > (int64_t{1} << 62)) return int64_t{1} << 62;
    if (overflow < 0 || x < 0) return -2;
    return x;
  }

  // The rule a name refers to, or -1 when no rule has that name.
  int32_t rule_of(PyObject* name) {
    PyObject* at = PyDict_GetItemWithError(position_.ptr(), name);  // borrowed
    if (at == nullptr) {
      if (PyErr_Occurred()) throw nb::python_error();
      return -1;
    }
    return static_cast<int32_t>(PyLong_AsLong(at));
  }

  void put(int64_t w) { words_.push_back(w); }

  // The node's number, its sub-expressions and itself written first if new; -1: unsuitable.
  int64_t node(PyObject* e, int64_t depth) {
    const int64_t known = index_.find(e);
    if (known >= 0) return known;
    if (depth > max_depth_) return -1;
    PyTypeObject* type = Py_TYPE(e);
    size_t k = 0;
    while (k < 11 && reinterpret_cast<PyObject*>(type) != classes_[k]) ++k;
    const int64_t below = depth + 1;
    switch (k) {
      case kSeq:
      case kAlt: {
        Ref items(field(e, k_items));
        if (!PyTuple_Check(items.p)) return -1;
        const Py_ssize_t n = PyTuple_GET_SIZE(items.p);
        const size_t base = kids_.size();  // the children's numbers, on a stack shared by the walk
        for (Py_ssize_t i = 0; i < n; ++i) {
          const int64_t kid = node(PyTuple_GET_ITEM(items.p, i), below);
          if (kid < 0) return -1;
          kids_.push_back(kid);
        }
        put(k == kSeq ? 1 : 2);
        put(n);
        words_.insert(words_.end(), kids_.begin() + static_cast<std::ptrdiff_t>(base), kids_.end());
        kids_.resize(base);
        break;
      }
      case kBytes: {
        Ref ranges(field(e, k_ranges));
        if (!PyTuple_Check(ranges.p)) return -1;
        const Py_ssize_t n = PyTuple_GET_SIZE(ranges.p);
        put(0);
        put(n);
        for (Py_ssize_t i = 0; i < n; ++i) {
          PyObject* r = PyTuple_GET_ITEM(ranges.p, i);
          if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2) return -1;
          const int64_t lo = count(PyTuple_GET_ITEM(r, 0), false), hi = count(PyTuple_GET_ITEM(r, 1), false);
          if (lo < 0 || hi < 0 || hi > 255) return -1;
          put(lo);
          put(hi);
        }
        break;
      }
      case kRef: {
        Ref name(field(e, k_name));
        const int32_t rule = rule_of(name.p);
        if (rule < 0) return -1;
        put(4);
        put(rule);
        break;
      }
      case kRepeat: {
        Ref item(field(e, k_item)), lo(field(e, k_min)), hi(field(e, k_max));
        const int64_t kid = node(item.p, below);
        const int64_t min = count(lo.p, false), max = count(hi.p, true);
        if (kid < 0 || min < 0 || max < -1) return -1;
        put(3);
        put(kid);
        put(min);
        put(max);
        break;
      }
      case kSeam: put(9); break;
      case kSpecial: {
        Ref token(field(e, k_token_id));
        const int64_t id = count(token.p, false);
        if (id < 0 || id > INT32_MAX) return -1;
        put(5);
        put(id);
        break;
      }
      case kDifference: {
        Ref left(field(e, k_left)), right(field(e, k_right));
        const int64_t l = node(left.p, below);
        if (l < 0) return -1;
        const int64_t r = node(right.p, below);
        if (r < 0) return -1;
        put(7);
        put(l);
        put(r);
        break;
      }
      case kAutomaton:
        if (!automaton(e, below)) return -1;
        break;
      case kUnordered:
        if (!unordered(e, below)) return -1;
        break;
      case kCounted:
        if (!counted(e, below)) return -1;
        break;
      default: return -1;  // a class the native lowering does not know
    }
    const int64_t number = count_++;
    index_.add(e, number);
    return number;
  }

  // [6, h, header (program.automaton_header) x h, n, labels]
  bool automaton(PyObject* e, int64_t below) {
    Ref accepting(field(e, k_accepting)), begin(field(e, k_edge_begin)), labels(field(e, k_labels)),
        targets(field(e, k_targets));
    if (!PyTuple_Check(accepting.p) || !PyTuple_Check(begin.p) || !PyTuple_Check(labels.p) ||
        !PyTuple_Check(targets.p)) {
      return false;
    }
    const Py_ssize_t states = PyTuple_GET_SIZE(accepting.p), n = PyTuple_GET_SIZE(labels.p);
    if (PyTuple_GET_SIZE(begin.p) != states + 1 || PyTuple_GET_SIZE(targets.p) != n) return false;
    std::vector<int64_t> kids;
    for (Py_ssize_t i = 0; i < n; ++i) {
      const int64_t kid = node(PyTuple_GET_ITEM(labels.p, i), below);
      if (kid < 0) return false;
      kids.push_back(kid);
    }
    std::vector<int64_t> header{4, states};  // OP_AUTOMATON, then per state: accepts, edges, targets
    for (Py_ssize_t s = 0; s < states; ++s) {
      const int truth = PyObject_IsTrue(PyTuple_GET_ITEM(accepting.p, s));
      if (truth < 0) throw nb::python_error();
      const int64_t from = count(PyTuple_GET_ITEM(begin.p, s), false);
      const int64_t to = count(PyTuple_GET_ITEM(begin.p, s + 1), false);
      if (from < 0 || to < from || to > n) return false;
      header.push_back(truth);
      header.push_back(to - from);
      for (int64_t t = from; t < to; ++t) {
        const int64_t target = count(PyTuple_GET_ITEM(targets.p, t), false);
        if (target < 0) return false;
        header.push_back(target);
      }
    }
    put(6);
    put(static_cast<int64_t>(header.size()));
    words_.insert(words_.end(), header.begin(), header.end());
    put(n);
    words_.insert(words_.end(), kids.begin(), kids.end());
    return true;
  }

  // [8, n, items, separator, repeatable or -1, min, max or -1, r, required]
  bool unordered(PyObject* e, int64_t below) {
    Ref items(field(e, k_items)), separator(field(e, k_separator)), repeatable(field(e, k_repeatable)),
        required(field(e, k_required)), lo(field(e, k_min_count)), hi(field(e, k_max_count));
    if (!PyTuple_Check(items.p) || !PyAnySet_Check(required.p)) return false;
    std::vector<int64_t> kids;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(items.p); ++i) {
      const int64_t kid = node(PyTuple_GET_ITEM(items.p, i), below);
      if (kid < 0) return false;
      kids.push_back(kid);
    }
    const int64_t sep = node(separator.p, below);
    if (sep < 0) return false;
    int64_t rest = -1;
    if (repeatable.p != Py_None) {
      rest = node(repeatable.p, below);
      if (rest < 0) return false;
    }
    const int64_t min = count(lo.p, false), max = count(hi.p, true);
    if (min < 0 || max < -1) return false;
    std::vector<int64_t> req;
    Ref iter(PyObject_GetIter(required.p));
    if (iter.p == nullptr) throw nb::python_error();
    while (PyObject* item = PyIter_Next(iter.p)) {
      Ref held(item);
      const int64_t r = count(item, false);
      if (r < 0 || r >= static_cast<int64_t>(kids.size())) return false;
      req.push_back(r);
    }
    if (PyErr_Occurred()) throw nb::python_error();
    put(8);
    put(static_cast<int64_t>(kids.size()));
    words_.insert(words_.end(), kids.begin(), kids.end());
    put(sep);
    put(rest);
    put(min);
    put(max);
    put(static_cast<int64_t>(req.size()));
    words_.insert(words_.end(), req.begin(), req.end());
    return true;
  }

  // [10, u, per unit: (accepting, e, (label, target) x e), min, max or -1]
  bool counted(PyObject* e, int64_t below) {
    Ref units(field(e, k_units)), lo(field(e, k_min)), hi(field(e, k_max));
    if (!PyTuple_Check(units.p)) return false;
    std::vector<int64_t> body;
    const Py_ssize_t n = PyTuple_GET_SIZE(units.p);
    for (Py_ssize_t u = 0; u < n; ++u) {
      PyObject* unit = PyTuple_GET_ITEM(units.p, u);
      if (!PyTuple_Check(unit) || PyTuple_GET_SIZE(unit) != 2 || !PyTuple_Check(PyTuple_GET_ITEM(unit, 1))) {
        return false;
      }
      const int truth = PyObject_IsTrue(PyTuple_GET_ITEM(unit, 0));
      if (truth < 0) throw nb::python_error();
      PyObject* edges = PyTuple_GET_ITEM(unit, 1);
      body.push_back(truth);
      body.push_back(PyTuple_GET_SIZE(edges));
      for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(edges); ++i) {
        PyObject* edge = PyTuple_GET_ITEM(edges, i);
        if (!PyTuple_Check(edge) || PyTuple_GET_SIZE(edge) != 2) return false;
        const int64_t label = node(PyTuple_GET_ITEM(edge, 0), below);
        const int64_t target = count(PyTuple_GET_ITEM(edge, 1), false);
        if (label < 0 || target < 0) return false;
        body.push_back(label);
        body.push_back(target);
      }
    }
    const int64_t min = count(lo.p, false), max = count(hi.p, true);
    if (min < 0 || max < -1) return false;
    put(10);
    put(n);
    words_.insert(words_.end(), body.begin(), body.end());
    put(min);
    put(max);
    return true;
  }

  const nb::dict& rules_;
  int64_t max_depth_;
  nb::object field_names_[kFields];
  PyObject* classes_[11] = {};
  nb::dict position_;                                // rule name -> rule number
  NodeIndex index_;                                  // nodes read (alive: the grammar holds them)
  std::vector<int64_t> words_;
  std::vector<int64_t> kids_;
  int64_t count_ = 0;
};

// The DFA terminals a terminal builder made, by (program, budget, subset cap): kept by the
// compiler's TerminalCache for its grammars, so that a terminal every schema has (a JSON
// string, whitespace, a number) is found without a call into Python, a bytes object made of
// its program and that object hashed anew. At most `max_entries`; past that it starts over
// (the TerminalCache keeps the automata themselves, least recently used first out).
class TerminalMemo {
 public:
  explicit TerminalMemo(size_t max_entries) : max_entries_(max_entries) {}

  struct Entry {
    nb::object handle;  // None: too large for the budget
    int64_t states;
  };

  // Found by the program's hash and compared with the stored words piece by piece: the
  // program is not written out to be looked up.
  bool find(const ProgramText& program, int64_t max_states, int64_t subset_cap, Entry& out) {
    std::lock_guard<std::mutex> hold(lock_);
    const auto [begin, end] = entries_.equal_range(slot(program.hash(), max_states, subset_cap));
    for (auto it = begin; it != end; ++it) {
      const Stored& stored = it->second;
      if (stored.max_states == max_states && stored.subset_cap == subset_cap && program.equals(stored.program)) {
        out = stored.entry;
        return true;
      }
    }
    return false;
  }

  void add(const ProgramText& program, int64_t max_states, int64_t subset_cap, Entry entry) {
    std::lock_guard<std::mutex> hold(lock_);
    if (entries_.size() >= max_entries_) entries_.clear();
    entries_.emplace(slot(program.hash(), max_states, subset_cap),
                     Stored{program.text(), max_states, subset_cap, std::move(entry)});
  }

  size_t size() {
    std::lock_guard<std::mutex> hold(lock_);
    return entries_.size();
  }

 private:
  struct Stored {
    std::string program;
    int64_t max_states;
    int64_t subset_cap;
    Entry entry;
  };

  // Mixed: the polynomial hash's low bits see only the words' low bits.
  static uint64_t slot(uint64_t hash, int64_t max_states, int64_t subset_cap) {
    return detail::mix(hash ^ detail::mix(static_cast<uint64_t>(max_states) ^
                                          detail::mix(static_cast<uint64_t>(subset_cap))));
  }

  size_t max_entries_;
  std::mutex lock_;  // (lowerings hold the GIL; the lock keeps the map safe without one)
  std::unordered_multimap<uint64_t, Stored> entries_;
};

// The terminal builders of lower.py's signature, their handles kept in `handles`.
class PythonTerminals final : public TerminalSource {
 public:
  PythonTerminals(nb::object build, nb::object build_counted, nb::object build_units, TerminalMemo* memo)
      : build_(std::move(build)),
        build_counted_(std::move(build_counted)),
        build_units_(std::move(build_units)),
        memo_(memo) {}

  int32_t dfa(const ProgramText& program, int64_t max_states, int64_t subset_cap, int64_t& states) override {
    if (memo_ == nullptr) return keep(build_(bytes(program.text()), max_states, subset_cap), states);
    TerminalMemo::Entry entry;
    if (!memo_->find(program, max_states, subset_cap, entry)) {
      entry.handle = build_(bytes(program.text()), max_states, subset_cap);
      entry.states = entry.handle.is_none() ? 0 : states_of(entry.handle);
      memo_->add(program, max_states, subset_cap, entry);
    }
    return keep(entry.handle, entry.states, states);
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

  static int64_t states_of(const nb::object& handle) {
    if (nb::isinstance<DfaTokenIndex>(handle)) return nb::cast<const DfaTokenIndex&>(handle).dfa_ptr()->num_states();
    if (nb::isinstance<CountedTerminal>(handle)) {
      return nb::cast<const CountedTerminal&>(handle).loop_ptr()->num_states();
    }
    // A stand-in of a test: read as lower.py reads it.
    nb::object automaton = nb::hasattr(handle, "dfa") ? handle.attr("dfa") : handle.attr("loop");
    return nb::cast<int64_t>(automaton.attr("num_states"));
  }

  // The handle's number in `handles` (states set to its automaton's), or -1 for None.
  int32_t keep(const nb::object& handle, int64_t& states) {
    return handle.is_none() ? -1 : keep(handle, states_of(handle), states);
  }
  int32_t keep(const nb::object& handle, int64_t known_states, int64_t& states) {
    if (handle.is_none()) return -1;
    states = known_states;
    handles.append(handle);
    return static_cast<int32_t>(nb::len(handles) - 1);
  }

  nb::object build_, build_counted_, build_units_;
  TerminalMemo* memo_;
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
  nb::class_<TerminalMemo>(m, "TerminalMemo",
                           "DFA terminals by (program, budget, subset cap), for lower_grammar (see there).")
      .def(nb::init<size_t>(), nb::arg("max_entries"))
      .def("__len__", &TerminalMemo::size);

  m.def(
      "lower_grammar",
      [](const nb::dict& rules, const nb::object& start, const nb::tuple& classes, const nb::tuple& limits,
         int64_t max_depth, nb::object build, nb::object build_counted, nb::object build_units,
         TerminalMemo* memo) -> nb::object {
        if (nb::len(limits) != 8) throw Error(ErrorKind::InvalidArgument, "expected 8 limits");
        IrGrammar grammar;
        if (!IrReader(classes, rules, max_depth).read(grammar, start.ptr())) return nb::none();
        nb::list rule_names;
        for (auto [name, body] : rules) rule_names.append(name);
        LoweringLimits lim;
        lim.max_terminal_states = nb::cast<int64_t>(limits[0]);
        lim.max_dfa_states = nb::cast<int64_t>(limits[1]);
        lim.max_productions = nb::cast<int64_t>(limits[2]);
        lim.max_total_dfa_states = nb::cast<int64_t>(limits[3]);
        lim.max_grammar_depth = nb::cast<int64_t>(limits[4]);
        lim.min_counted_repeat = nb::cast<int64_t>(limits[5]);
        lim.deadline = nb::cast<double>(limits[6]);
        lim.max_compile_seconds = nb::cast<std::string>(limits[7]);
        PythonTerminals source(std::move(build), std::move(build_counted), std::move(build_units), memo);
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
      nb::arg("rules"), nb::arg("start"), nb::arg("classes"), nb::arg("limits"), nb::arg("max_depth"),
      nb::arg("build"), nb::arg("build_counted").none(), nb::arg("build_units").none(),
      nb::arg("memo").none() = nb::none(),
      "Lower a grammar's rules (name -> IR node; classes: the 11 node classes in IrKind order):\n"
      "(terminals, productions, num_nonterminals, start, nonterminal_names, unordered), as lower.py's\n"
      "LoweredGrammar holds them, or None when the grammar needs the reference lowering. With `memo`,\n"
      "DFA terminals are looked up there first: it must only ever be used with this `build`.");
}

}  // namespace tokensieve::bindings
