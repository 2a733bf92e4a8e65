// A compiled PCRE2 regular expression (Perl syntax, UTF-8, JIT when available).
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace tp {

class Regex {
 public:
  // Throws tp::Error(usage) with PCRE2's message and the offset of the problem.
  explicit Regex(std::string_view pattern);
  // True if the pattern matches anywhere in text (an unanchored search).
  [[nodiscard]] bool search(std::string_view text) const;
  [[nodiscard]] const std::string& pattern() const noexcept { return pattern_; }

 private:
  struct CodeDeleter {
    void operator()(void* code) const noexcept;
  };
  struct MatchDataDeleter {
    void operator()(void* data) const noexcept;
  };
  std::string pattern_;
  std::unique_ptr<void, CodeDeleter> code_;
  std::unique_ptr<void, MatchDataDeleter> match_data_;
};

}  // namespace tp
