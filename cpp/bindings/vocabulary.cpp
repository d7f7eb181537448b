#include <nanobind/nanobind.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bind.hpp"
#include "tokensieve/token_trie.hpp"

namespace nb = nanobind;

namespace tokensieve::bindings {

void bind_vocabulary(nb::module_& m) {
  nb::class_<Vocabulary>(m, "Vocabulary")
      .def(
          "__init__",
          [](Vocabulary* self, const nb::list& tokens, const std::vector<uint8_t>& is_special,
             const std::vector<uint32_t>& eos_ids) {
            std::vector<std::string> bytes;
            bytes.reserve(nb::len(tokens));
            for (nb::handle h : tokens) {
              nb::bytes b = nb::cast<nb::bytes>(h);
              bytes.emplace_back(b.c_str(), b.size());  // explicit length: NUL is a valid token byte
            }
            new (self) Vocabulary(std::move(bytes), is_special, eos_ids);
          },
          nb::arg("tokens"), nb::arg("is_special"), nb::arg("eos_ids"))
      .def_prop_ro("size", &Vocabulary::size)
      .def_prop_ro("trie_nodes", [](const Vocabulary& v) { return v.trie().num_nodes(); })
      .def("memory_bytes", &Vocabulary::memory_bytes);
}

}  // namespace tokensieve::bindings
