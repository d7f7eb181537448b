#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/vector.h>

#include "bind.hpp"
#include "tokensieve/dfa.hpp"

namespace nb = nanobind;

namespace tokensieve::bindings {

namespace {

// The state after reading `data` from the start, or kDead.
int32_t run(const Dfa& d, const nb::bytes& data) {
  int32_t q = d.start();
  for (size_t i = 0; i < data.size() && q != Dfa::kDead; ++i) q = d.next(q, data.c_str()[i]);
  return q;
}

}  // namespace

void bind_dfa(nb::module_& m) {
  nb::class_<Dfa>(m, "Dfa")
      .def_prop_ro("num_states", &Dfa::num_states)
      .def_prop_ro("num_classes", &Dfa::num_classes)
      .def_prop_ro("nullable", &Dfa::nullable)
      .def_prop_ro("is_empty", [](const Dfa& d) { return d.start() == Dfa::kDead; })
      .def("memory_bytes", &Dfa::memory_bytes)
      .def(
          "matches",
          [](const Dfa& d, const nb::bytes& data) {
            const int32_t q = run(d, data);
            return q != Dfa::kDead && d.accepting(q);
          },
          "Whether the whole byte string is in the language.")
      .def(
          "is_prefix",
          [](const Dfa& d, const nb::bytes& data) { return run(d, data) != Dfa::kDead; },
          "Whether the byte string is a prefix of some string in the language.")
      .def(
          "to_ranges",
          [](const Dfa& d) {
            RangeRows rows = to_ranges(d);
            std::vector<int32_t> accepting(rows.accepting.begin(), rows.accepting.end());
            return std::make_tuple(std::move(rows.edge_begin), std::move(rows.lo), std::move(rows.hi),
                                   std::move(rows.target), std::move(accepting));
          },
          "The transitions as rows of maximal byte ranges: (edge_begin, lo, hi, target, accepting);\n"
          "state s has edges edge_begin[s] .. edge_begin[s + 1], state 0 starts; no states for the\n"
          "empty language.")
      .def(
          "label_groups",
          [](const Dfa& d) {
            const RangeRows rows = to_ranges(d);
            LabelGroups groups = label_groups(rows);
            std::vector<std::vector<std::pair<int32_t, int32_t>>> sets(groups.set_begin.size() - 1);
            for (size_t i = 0; i + 1 < groups.set_begin.size(); ++i) {
              for (int32_t r = groups.set_begin[i]; r < groups.set_begin[i + 1]; ++r) {
                sets[i].emplace_back(groups.set_lo[r], groups.set_hi[r]);
              }
            }
            // The rows' words, as bytes: equal for equal DFAs, so a key of the automaton's content.
            std::string key;
            const auto put = [&key](const std::vector<int32_t>& words) {
              const int32_t n = static_cast<int32_t>(words.size());
              key.append(reinterpret_cast<const char*>(&n), sizeof n);
              key.append(reinterpret_cast<const char*>(words.data()), words.size() * sizeof(int32_t));
            };
            put(rows.edge_begin);
            put(rows.lo);
            put(rows.hi);
            put(rows.target);
            key.append(rows.accepting.begin(), rows.accepting.end());
            std::vector<bool> accepting(groups.accepting.begin(), groups.accepting.end());
            return std::make_tuple(std::move(accepting), std::move(groups.group_begin), std::move(groups.group_target),
                                   std::move(groups.group_set), std::move(sets), nb::bytes(key.data(), key.size()),
                                   groups.walk_numbered);
          },
          "The edges grouped by target, for an IR automaton: (accepting, group_begin, group_target,\n"
          "group_set, sets, key, walk_numbered). State s has groups group_begin[s] .. group_begin[s + 1],\n"
          "one per target in the order of its lowest byte; group g's bytes are the ranges\n"
          "sets[group_set[g]] (distinct lists of (lo, hi), numbered as first met). An empty language\n"
          "has one state without groups. `key`: the transitions as bytes, equal for equal automata.\n"
          "`walk_numbered`: whether a breadth-first walk over the groups meets the states in order.");

  m.def(
      "determinize_ranges",
      [](std::vector<int32_t> edge_begin, std::vector<int32_t> lo, std::vector<int32_t> hi,
         std::vector<int32_t> target, std::vector<int32_t> eps_begin, std::vector<int32_t> eps, int32_t start,
         int32_t final, int32_t max_states) {
        RangeNfa nfa;
        nfa.edge_begin = std::move(edge_begin);
        nfa.lo = std::move(lo);
        nfa.hi = std::move(hi);
        nfa.target = std::move(target);
        nfa.eps_begin = std::move(eps_begin);
        nfa.eps = std::move(eps);
        nfa.start = start;
        nfa.final = final;
        nb::gil_scoped_release release;
        return std::make_shared<Dfa>(determinize(nfa, max_states));
      },
      nb::arg("edge_begin"), nb::arg("lo"), nb::arg("hi"), nb::arg("target"), nb::arg("eps_begin"),
      nb::arg("eps"), nb::arg("start"), nb::arg("final"), nb::arg("max_states"),
      "The minimal DFA of an NFA given as rows of byte-range and epsilon edges (see dfa.hpp).");
  m.def(
      "dfa_from_ranges",
      [](std::vector<int32_t> edge_begin, std::vector<int32_t> lo, std::vector<int32_t> hi,
         std::vector<int32_t> target, const std::vector<int32_t>& accepting) {
        RangeRows rows;
        rows.edge_begin = std::move(edge_begin);
        rows.lo = std::move(lo);
        rows.hi = std::move(hi);
        rows.target = std::move(target);
        rows.accepting.assign(accepting.begin(), accepting.end());
        nb::gil_scoped_release release;
        return std::make_shared<Dfa>(dfa_from_ranges(rows));
      },
      nb::arg("edge_begin"), nb::arg("lo"), nb::arg("hi"), nb::arg("target"), nb::arg("accepting"),
      "The minimal DFA of a deterministic automaton given as rows of byte ranges (state 0 starts).");
  m.def(
      "dfa_product",
      [](const Dfa& left, const Dfa& right, const std::string& op, int32_t max_states) {
        ProductOp product_op;
        if (op == "and") {
          product_op = ProductOp::And;
        } else if (op == "or") {
          product_op = ProductOp::Or;
        } else if (op == "minus") {
          product_op = ProductOp::Minus;
        } else {
          throw nb::value_error("op must be 'and', 'or' or 'minus'");
        }
        nb::gil_scoped_release release;
        return std::make_shared<Dfa>(product_dfa(left, right, product_op, max_states));
      },
      nb::arg("left"), nb::arg("right"), nb::arg("op"), nb::arg("max_states"),
      "L(left) op L(right) as a minimal DFA: op is 'and', 'or' or 'minus'.");

  m.def(
      "multiples_dfa",
      [](int32_t modulus, int32_t scale, bool fraction_digits, int64_t max_nfa_states, int32_t max_states) {
        nb::gil_scoped_release release;
        return std::make_shared<Dfa>(multiples_dfa(modulus, scale, fraction_digits, max_nfa_states, max_states));
      },
      nb::arg("modulus"), nb::arg("scale"), nb::arg("fraction_digits"), nb::arg("max_nfa_states"),
      nb::arg("max_states"),
      "The minimal DFA of the numerals -?I(.F)? whose value is a multiple of modulus / 10^scale\n"
      "(fraction_digits: whether digits other than zeros may follow the point); see dfa.hpp.");
  m.def(
      "program_node_end",
      [](nb::ndarray<const int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> program, size_t start) {
        return program_node_end(program.data(), program.shape(0), start);
      },
      nb::arg("program"), nb::arg("start"),
      "One past the last word of the expression that starts at word `start` of a regex program.");

  m.def(
      "build_dfa",
      [](nb::ndarray<const int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> program, int64_t max_nfa_states,
         int32_t max_dfa_states) {
        DfaLimits limits;
        limits.max_nfa_states = max_nfa_states;
        limits.max_dfa_states = max_dfa_states;
        const int32_t* data = program.data();
        size_t n = program.shape(0);
        nb::gil_scoped_release release;
        return std::make_shared<Dfa>(build_dfa(data, n, limits));
      },
      nb::arg("program"), nb::arg("max_nfa_states"), nb::arg("max_dfa_states"),
      "Builds a trimmed, minimized byte DFA from a regex program (see dfa.hpp).");
}

}  // namespace tokensieve::bindings
