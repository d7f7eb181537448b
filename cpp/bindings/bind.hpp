// Shared declarations of the binding files: one file per C++ concept.
#pragma once
#include <nanobind/nanobind.h>

namespace tokensieve::bindings {
void bind_errors(nanobind::module_& m);
void bind_vocabulary(nanobind::module_& m);
void bind_dfa(nanobind::module_& m);
void bind_grammar(nanobind::module_& m);
void bind_matcher(nanobind::module_& m);
void bind_lowering(nanobind::module_& m);
}  // namespace tokensieve::bindings
