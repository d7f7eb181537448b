#include <nanobind/nanobind.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bind.hpp"
#include "tokensieve/error.hpp"
#include "tokensieve/grammar.hpp"

namespace nb = nanobind;

namespace tokensieve::bindings {

namespace {

// One row per Unordered nonterminal, as written by compiler/lower.py:
// [nonterminal, separator, repeatable or -1, min_count, max_count or -1, n, items..., required...]
UnorderedRule unordered_from_row(const std::vector<int32_t>& row) {
  if (row.size() < 6 || row[5] < 0 || row.size() < 6 + static_cast<size_t>(row[5])) {
    throw Error(ErrorKind::InvalidArgument, "malformed unordered rule row");
  }
  UnorderedRule r;
  r.nonterminal = row[0];
  r.separator = row[1];
  r.repeatable = row[2];
  r.min_count = row[3];
  r.max_count = row[4];
  const size_t n = static_cast<size_t>(row[5]);
  r.items.assign(row.begin() + 6, row.begin() + 6 + static_cast<std::ptrdiff_t>(n));
  r.required.assign(r.words(), 0);
  for (size_t k = 6 + n; k < row.size(); ++k) {
    if (row[k] < 0 || static_cast<size_t>(row[k]) >= n) throw Error(ErrorKind::InvalidArgument, "bad required item");
    r.required[static_cast<size_t>(row[k]) >> 6] |= uint64_t{1} << (row[k] & 63);
  }
  return r;
}

}  // namespace

void bind_grammar(nb::module_& m) {
  nb::class_<MatcherLimits>(m, "MatcherLimits")
      .def(nb::init<>())
      .def_rw("max_mask_work", &MatcherLimits::max_mask_work)
      .def_rw("max_accept_work", &MatcherLimits::max_accept_work)
      .def_rw("max_jump_forward_bytes", &MatcherLimits::max_jump_forward_bytes)
      .def_rw("mask_cache_bytes", &MatcherLimits::mask_cache_bytes)
      .def_rw("head_index_bytes", &MatcherLimits::head_index_bytes)
      .def_rw("min_head_index_nodes", &MatcherLimits::min_head_index_nodes);

  nb::class_<TokenSlice>(m, "TokenSlice")
      .def(
          "__init__",
          [](TokenSlice* self, std::shared_ptr<Vocabulary> vocab, std::shared_ptr<Dfa> plain) {
            new (self) TokenSlice(std::move(vocab), std::move(plain));
          },
          nb::arg("vocab"), nb::arg("plain"))
      .def_prop_ro("size", &TokenSlice::size)
      .def_prop_ro("rest_nodes", [](const TokenSlice& s) { return s.rest().num_nodes(); });

  nb::class_<DfaTokenIndex>(m, "DfaTokenIndex")
      .def(
          "__init__",
          [](DfaTokenIndex* self, std::shared_ptr<Dfa> dfa, std::shared_ptr<Vocabulary> vocab,
             std::shared_ptr<TokenSlice> slice, size_t max_boundary_nodes) {
            new (self) DfaTokenIndex(std::move(dfa), std::move(vocab), std::move(slice), max_boundary_nodes);
          },
          nb::arg("dfa"), nb::arg("vocab"), nb::arg("slice").none() = nb::none(),
          nb::arg("max_boundary_nodes") = DfaTokenIndex::kMaxBoundaryNodes)
      .def_prop_ro("dfa", [](const DfaTokenIndex& i) { return std::const_pointer_cast<Dfa>(i.dfa_ptr()); })
      .def("memory_bytes", &DfaTokenIndex::memory_bytes);

  nb::class_<CountedTerminal>(m, "CountedTerminal")
      .def(
          "__init__",
          [](CountedTerminal* self, const Dfa* prefix, const Dfa& item, int32_t min, int32_t max, const Dfa* suffix,
             std::shared_ptr<Vocabulary> vocab, std::shared_ptr<TokenSlice> slice, size_t max_boundary_nodes) {
            new (self) CountedTerminal(prefix, item, min, max, suffix, std::move(vocab), std::move(slice),
                                       max_boundary_nodes);
          },
          nb::arg("prefix").none(), nb::arg("item"), nb::arg("min"), nb::arg("max"), nb::arg("suffix").none(),
          nb::arg("vocab"), nb::arg("slice").none() = nb::none(),
          nb::arg("max_boundary_nodes") = DfaTokenIndex::kMaxBoundaryNodes,
          "prefix item{min,max} suffix (max -1: unbounded; prefix/suffix None: empty), run with a counter.")
      .def_static(
          "from_units",
          [](const Dfa* prefix, const std::vector<bool>& unit_accepting,
             const std::vector<std::tuple<int32_t, int32_t, const Dfa*>>& edges, int32_t min, int32_t max,
             const Dfa* suffix, std::shared_ptr<Vocabulary> vocab, std::shared_ptr<TokenSlice> slice,
             size_t max_boundary_nodes) {
            std::vector<uint8_t> accepting(unit_accepting.begin(), unit_accepting.end());
            std::vector<CountedTerminal::UnitEdge> unit_edges;
            for (const auto& [from, to, label] : edges) unit_edges.push_back({from, to, label});
            return new CountedTerminal(prefix, static_cast<int32_t>(accepting.size()), accepting, unit_edges, min,
                                       max, suffix, std::move(vocab), std::move(slice), max_boundary_nodes);
          },
          nb::arg("prefix").none(), nb::arg("unit_accepting"), nb::arg("edges"), nb::arg("min"), nb::arg("max"),
          nb::arg("suffix").none(), nb::arg("vocab"), nb::arg("slice").none() = nb::none(),
          nb::arg("max_boundary_nodes") = DfaTokenIndex::kMaxBoundaryNodes, nb::rv_policy::take_ownership,
          "prefix, then a path of min..max edges through a unit automaton (state 0 starts; edges\n"
          "(from, to, label DFA), one unit each), then suffix: a counted automaton (see counted.hpp).")
      .def_prop_ro("loop", [](const CountedTerminal& c) { return std::const_pointer_cast<Dfa>(c.loop_ptr()); })
      .def_prop_ro("min", &CountedTerminal::min)
      .def_prop_ro("max", &CountedTerminal::max)
      .def("memory_bytes", &CountedTerminal::memory_bytes);

  nb::class_<MemoryMeter>(m, "MemoryMeter",
                          "Bytes held by the mask caches and head indexes of the grammars made with it.")
      .def(nb::init<>())
      .def_prop_ro("bytes", &MemoryMeter::bytes);

  nb::class_<CompiledGrammar>(m, "CompiledGrammar")
      .def(
          "__init__",
          [](CompiledGrammar* self, std::shared_ptr<Vocabulary> vocab, const nb::list& terminals,
             int32_t num_nonterminals, const std::vector<std::vector<int32_t>>& productions, int32_t start,
             const MatcherLimits& limits, const std::vector<std::vector<int32_t>>& unordered,
             std::shared_ptr<MemoryMeter> meter) {
            std::vector<Terminal> terms;
            terms.reserve(nb::len(terminals));
            for (nb::handle h : terminals) {
              Terminal t;
              if (nb::isinstance<int>(h)) {
                t.special_token = nb::cast<int32_t>(h);
              } else if (nb::isinstance<CountedTerminal>(h)) {
                t.counted = nb::cast<std::shared_ptr<CountedTerminal>>(h);
                t.dfa = t.counted->loop_ptr();
              } else {
                t.index = nb::cast<std::shared_ptr<DfaTokenIndex>>(h);
                t.dfa = t.index->dfa_ptr();
              }
              terms.push_back(std::move(t));
            }
            std::vector<UnorderedRule> rules;
            for (const auto& row : unordered) rules.push_back(unordered_from_row(row));
            new (self) CompiledGrammar(std::move(vocab), std::move(terms), num_nonterminals, productions, start, limits,
                                       std::move(rules), std::move(meter));
          },
          nb::arg("vocab"), nb::arg("terminals"), nb::arg("num_nonterminals"), nb::arg("productions"),
          nb::arg("start"), nb::arg("limits"), nb::arg("unordered") = std::vector<std::vector<int32_t>>{},
          nb::arg("meter").none() = nb::none())
      .def_prop_ro("num_terminals", &CompiledGrammar::num_terminals)
      .def_prop_ro("num_productions", &CompiledGrammar::num_productions)
      .def_prop_ro("num_dfa_states",
                   [](const CompiledGrammar& g) {
                     int64_t n = 0;
                     for (int32_t t = 0; t < g.num_terminals(); ++t) {
                       if (g.terminal(t).dfa) n += g.terminal(t).dfa->num_states();
                     }
                     return n;
                   })
      .def("memory_bytes", &CompiledGrammar::memory_bytes);
}

}  // namespace tokensieve::bindings
