#include <nanobind/nanobind.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/vector.h>

#include "bind.hpp"
#include "tokensieve/error.hpp"
#include "tokensieve/grammar.hpp"

namespace nb = nanobind;

namespace tokensieve::bindings {

void bind_grammar(nb::module_& m) {
  nb::class_<MatcherLimits>(m, "MatcherLimits")
      .def(nb::init<>())
      .def_rw("max_mask_work", &MatcherLimits::max_mask_work)
      .def_rw("max_accept_work", &MatcherLimits::max_accept_work)
      .def_rw("max_jump_forward_bytes", &MatcherLimits::max_jump_forward_bytes);

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
             std::shared_ptr<TokenSlice> slice) {
            new (self) DfaTokenIndex(std::move(dfa), std::move(vocab), std::move(slice));
          },
          nb::arg("dfa"), nb::arg("vocab"), nb::arg("slice").none() = nb::none())
      .def_prop_ro("dfa", [](const DfaTokenIndex& i) { return std::const_pointer_cast<Dfa>(i.dfa_ptr()); })
      .def("memory_bytes", &DfaTokenIndex::memory_bytes);

  nb::class_<CompiledGrammar>(m, "CompiledGrammar")
      .def(
          "__init__",
          [](CompiledGrammar* self, std::shared_ptr<Vocabulary> vocab, const nb::list& terminals,
             int32_t num_nonterminals, const std::vector<std::vector<int32_t>>& productions, int32_t start,
             const MatcherLimits& limits) {
            std::vector<Terminal> terms;
            terms.reserve(nb::len(terminals));
            for (nb::handle h : terminals) {
              Terminal t;
              if (nb::isinstance<int>(h)) {
                t.special_token = nb::cast<int32_t>(h);
              } else {
                t.index = nb::cast<std::shared_ptr<DfaTokenIndex>>(h);
                t.dfa = t.index->dfa_ptr();
              }
              terms.push_back(std::move(t));
            }
            new (self) CompiledGrammar(std::move(vocab), std::move(terms), num_nonterminals, productions, start, limits);
          },
          nb::arg("vocab"), nb::arg("terminals"), nb::arg("num_nonterminals"), nb::arg("productions"),
          nb::arg("start"), nb::arg("limits"))
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
