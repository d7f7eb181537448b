// One translator maps tokensieve::Error kinds to the Python classes of tokensieve.errors.
#include <nanobind/nanobind.h>

#include "bind.hpp"
#include "tokensieve/error.hpp"

namespace nb = nanobind;

namespace tokensieve::bindings {

namespace {

const char* python_class(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::LimitExceeded: return "LimitExceeded";
    case ErrorKind::EmptyLanguage: return "EmptyLanguageError";
    case ErrorKind::NoTokenAllowed: return "NoTokenAllowed";
    case ErrorKind::VocabularyMismatch: return "VocabularyMismatch";
    case ErrorKind::MatcherState: return "MatcherStateError";
    case ErrorKind::GrammarSyntax: return "GrammarSyntaxError";
    case ErrorKind::InvalidArgument: return nullptr;
  }
  return nullptr;
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const Error& e) {
    const char* name = python_class(e.kind());
    if (name == nullptr) {
      PyErr_SetString(PyExc_ValueError, e.what());
      return;
    }
    nb::object errors = nb::module_::import_("tokensieve.errors");
    nb::object cls = errors.attr(name);
    nb::object instance = e.kind() == ErrorKind::LimitExceeded
                              ? cls(nb::str(e.what()), nb::arg("limit") = nb::str(e.limit().c_str()))
                              : cls(nb::str(e.what()));
    PyErr_SetObject(cls.ptr(), instance.ptr());
  }
}

}  // namespace

void bind_errors(nb::module_&) { nb::register_exception_translator(translate); }

}  // namespace tokensieve::bindings
