// A compiled PCRE2 regular expression (Perl syntax, UTF-8, JIT when available).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace tp {

class Regex {
 public:
  // Throws tp::Error(usage) with PCRE2's message and the offset of the problem.
  explicit Regex(std::string_view pattern);
  // Whether the pattern matches anywhere in text (an unanchored search); nothing when PCRE2
  // gave up on this text (its match or depth limit: catastrophic backtracking), with PCRE2's
  // reason in `why`. Never "no match" for a search that did not finish.
  [[nodiscard]] std::optional<bool> search(std::string_view text, std::string& why) const;
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
