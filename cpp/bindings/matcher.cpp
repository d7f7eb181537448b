#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <thread>

#include "bind.hpp"
#include "tokensieve/error.hpp"
#include "tokensieve/matcher.hpp"

namespace nb = nanobind;

namespace tokensieve::bindings {

namespace {

using Bitmask = nb::ndarray<int32_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

uint32_t* row_pointer(Bitmask& bitmask, int64_t row) {
  if (row < 0 || static_cast<size_t>(row) >= bitmask.shape(0)) {
    throw Error(ErrorKind::InvalidArgument, "bitmask row " + std::to_string(row) + " out of range");
  }
  return reinterpret_cast<uint32_t*>(bitmask.data()) + static_cast<size_t>(row) * bitmask.shape(1);
}

}  // namespace

void bind_matcher(nb::module_& m) {
  nb::class_<Matcher>(m, "Matcher")
      .def(nb::init<std::shared_ptr<const CompiledGrammar>>(), nb::arg("grammar"))
      .def(
          "fill_mask",
          [](Matcher& self, Bitmask bitmask, int64_t row) {
            uint32_t* words = row_pointer(bitmask, row);
            size_t n = bitmask.shape(1);
            nb::gil_scoped_release release;
            self.fill_mask(words, n);
          },
          nb::arg("bitmask"), nb::arg("row"))
      .def("accept_token", &Matcher::accept_token, nb::arg("token_id"))
      .def(
          "accept_bytes", [](Matcher& self, const nb::bytes& b) { return self.accept_bytes(std::string(b.c_str(), b.size())); },
          nb::arg("data"))
      .def("jump_forward", [](Matcher& self) {
        std::string s = self.jump_forward();
        return nb::bytes(s.data(), s.size());
      })
      .def("rollback", &Matcher::rollback, nb::arg("num_entries"))
      .def("reset", &Matcher::reset)
      .def("fork", [](const Matcher& self) { return Matcher(self); })
      .def("is_accepting", &Matcher::is_accepting)
      .def("is_terminated", &Matcher::is_terminated)
      .def("can_continue", &Matcher::can_continue)
      .def_prop_ro("num_history", &Matcher::num_history)
      .def_prop_ro("num_bytes", &Matcher::num_bytes)
      .def_prop_ro("top_items", &Matcher::top_items)
      .def_prop_ro("top_scans", &Matcher::top_scans)
      .def("describe_scans", &Matcher::describe_scans,
           "Diagnostics: [terminal, state, dotted, origin, inside tokens, suffix nodes, boundary nodes] per scan.");

  m.def(
      "fill_masks_parallel",
      [](const std::vector<Matcher*>& matchers, Bitmask bitmask, const std::vector<int64_t>& rows, int num_threads) {
        for (int64_t r : rows) row_pointer(bitmask, r);  // validate rows with the GIL held
        uint32_t* words = reinterpret_cast<uint32_t*>(bitmask.data());
        size_t stride = bitmask.shape(1);
        nb::gil_scoped_release release;
        fill_masks_parallel(matchers, words, stride, rows, num_threads);
      },
      nb::arg("matchers"), nb::arg("bitmask"), nb::arg("rows"), nb::arg("num_threads"));
  m.def("hardware_threads", []() { return std::thread::hardware_concurrency(); });
}

}  // namespace tokensieve::bindings
