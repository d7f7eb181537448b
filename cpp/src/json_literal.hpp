// The automaton of one JSON-quoted string literal, built directly (json_literal.cpp): private
// to the library, called by build_dfa() before it parses a program.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>

#include "tokensieve/dfa.hpp"

namespace tokensieve::detail {

// When `program` is exactly the regex program the front-ends write for every JSON spelling of
// one string (a property name, an enum or const string: the quotes, then per character its raw
// UTF-8 bytes where JSON allows them, its short escape, its \u escape with hex letters in
// either case, a surrogate pair above U+FFFF), its minimal DFA, numbered as build_dfa()
// numbers it. Nothing for any other program, and past `max_states` states (build_dfa() then
// decides). Returns through an optional, not an out-parameter: a Dfa default-constructs its
// byte-class table, and build_dfa() asks here first for every program it builds.
std::optional<Dfa> build_json_literal(const int32_t* program, size_t length, int32_t max_states);

}  // namespace tokensieve::detail
