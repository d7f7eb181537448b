// The automaton of one JSON-quoted string literal, or of a set of them, built directly
// (json_literal.cpp): private to the library, called by build_dfa() before it parses a program.
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

// The same for an alternation of such literals (an enum of strings, or the names of an object's
// properties that "any other key" must not be): the literals' trie, each character spelled
// every way from its node to the child node, minimized (literals that end alike share their last
// states) and numbered as build_dfa() numbers it. Nothing for any other program, and past
// `max_states` trie states.
std::optional<Dfa> build_json_literal_set(const int32_t* program, size_t length, int32_t max_states);

}  // namespace tokensieve::detail
