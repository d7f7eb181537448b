// tokensieve._core: the private native module. Python classes in tokensieve/ wrap these handles.
#include "bind.hpp"

NB_MODULE(_core, m) {
  m.doc() = "tokensieve native core (private; use the tokensieve package)";
  // The compile path's process-wide caches (terminal automata, the JSON Schema front-end's
  // automata) live in module globals, some of them in mypyc-compiled modules whose globals
  // outlive this module's teardown at interpreter exit. nanobind would then report every
  // cached automaton as "leaked" on stderr, after any program that compiled a few hundred
  // schemas: the memory is the exiting process's, so there is nothing to report.
  nanobind::set_leak_warnings(false);
  tokensieve::bindings::bind_errors(m);
  tokensieve::bindings::bind_vocabulary(m);
  tokensieve::bindings::bind_dfa(m);
  tokensieve::bindings::bind_grammar(m);
  tokensieve::bindings::bind_matcher(m);
  tokensieve::bindings::bind_lowering(m);
}
