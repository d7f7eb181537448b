// tokensieve._core: the private native module. Python classes in tokensieve/ wrap these handles.
#include "bind.hpp"

NB_MODULE(_core, m) {
  m.doc() = "tokensieve native core (private; use the tokensieve package)";
  tokensieve::bindings::bind_errors(m);
  tokensieve::bindings::bind_vocabulary(m);
  tokensieve::bindings::bind_dfa(m);
  tokensieve::bindings::bind_grammar(m);
  tokensieve::bindings::bind_matcher(m);
}
