// The text of JSON values as written, where re-serialising simdjson's DOM would alter it:
// simdjson 3.0.1 reads -0 as the integer 0 (written back 0), 1e2 as the double 100 (written
// 100.0), 1.50 as 1.5. Over text simdjson has already parsed as valid JSON (nothing here
// checks it again).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tp {

// The values of a JSON object's members, in the order written (that of simdjson's DOM
// object over the same text, so the two are walked side by side).
class RawMembers {
 public:
  explicit RawMembers(std::string_view object) noexcept;
  // The next member's value as written; nothing after the last.
  std::optional<std::string_view> next_value() noexcept;

 private:
  std::string_view text_;
  std::size_t at_ = 0;
};

// `value` (valid JSON) appended to `out` without the whitespace between its tokens; strings
// and numbers as written.
void append_minified(std::string& out, std::string_view value);

}  // namespace tp
