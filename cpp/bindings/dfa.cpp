#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

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
          "Whether the byte string is a prefix of some string in the language.");

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
