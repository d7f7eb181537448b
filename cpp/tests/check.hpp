// A tiny check harness for the native tests: CHECK counts, reports failures, never aborts.
#pragma once
#include <cstdio>
#include <string>

#include "tokensieve/error.hpp"

namespace check {

inline int passed = 0;
inline int failed = 0;

inline void record(bool ok, const char* file, int line, const std::string& what) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    std::fprintf(stderr, "%s:%d: FAILED: %s\n", file, line, what.c_str());
  }
}

// Runs `f`, expecting a tokensieve::Error of `kind` (and, when non-empty, naming `limit`).
template <class F>
void throws(F&& f, tokensieve::ErrorKind kind, const std::string& limit, const char* file, int line,
            const char* what) {
  try {
    f();
  } catch (const tokensieve::Error& e) {
    const bool ok = e.kind() == kind && (limit.empty() || e.limit() == limit);
    record(ok, file, line, std::string(what) + " threw the wrong error: " + e.what());
    return;
  }
  record(false, file, line, std::string(what) + " did not throw");
}

}  // namespace check

#define CHECK(cond) ::check::record(static_cast<bool>(cond), __FILE__, __LINE__, #cond)
#define CHECK_THROWS(expr, kind, limit) \
  ::check::throws([&] { (void)(expr); }, kind, limit, __FILE__, __LINE__, #expr)
