// One exception type for the whole C++ core; `kind` says which Python error it becomes.
#pragma once
#include <stdexcept>
#include <string>

namespace tokensieve {

enum class ErrorKind {
  InvalidArgument,     // misuse of the API (bad ids, bad program encoding) -> ValueError
  LimitExceeded,       // a resource limit was hit -> LimitExceeded (limit names the field)
  EmptyLanguage,       // grammar/regex matches nothing -> EmptyLanguageError
  NoTokenAllowed,      // matcher state with no allowed token -> NoTokenAllowed
  VocabularyMismatch,  // sizes disagree -> VocabularyMismatch
  MatcherState,        // e.g. accept after termination -> MatcherStateError
  GrammarSyntax,       // a grammar the compiler cannot lower as written -> GrammarSyntaxError
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message, std::string limit = {})
      : std::runtime_error(message), kind_(kind), limit_(std::move(limit)) {}
  ErrorKind kind() const { return kind_; }
  const std::string& limit() const { return limit_; }

 private:
  ErrorKind kind_;
  std::string limit_;
};

}  // namespace tokensieve
