// The automaton of one JSON-quoted string literal, built directly (json_literal.cpp): private
// to the library, called by build_dfa() before it parses a program.
#pragma once
#include <cstddef>
#include <cstdint>

#include "tokensieve/dfa.hpp"

namespace tokensieve::detail {

// When `program` is exactly the regex program the front-ends write for every JSON spelling of
// one string (a property name, an enum or const string: the quotes, then per character its raw
// UTF-8 bytes where JSON allows them, its short escape, its \u escape with hex letters in
// either case, a surrogate pair above U+FFFF), sets `out` to its minimal DFA, numbered as
// build_dfa() numbers it, and returns true. Returns false, `out` untouched, for any other
// program, and past `max_states` states (build_dfa() then decides).
bool build_json_literal(const int32_t* program, size_t length, int32_t max_states, Dfa& out);

}  // namespace tokensieve::detail
