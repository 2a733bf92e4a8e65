// The lines of a message's payload (a chunk of records, a batch of rows): the one place a
// payload is split on newlines. A last line without its newline is a line too.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tp {

// Calls `on_line(line)` for each line of `payload`, without its '\n' (an empty line too).
template <typename OnLine>
void for_each_line(std::string_view payload, OnLine&& on_line) {
  while (!payload.empty()) {
    const std::size_t newline = payload.find('\n');
    on_line(payload.substr(0, newline));
    payload.remove_prefix(newline == std::string_view::npos ? payload.size() : newline + 1);
  }
}

// How many lines `payload` holds.
[[nodiscard]] inline std::size_t line_count(std::string_view payload) noexcept {
  const auto newlines = static_cast<std::size_t>(std::ranges::count(payload, '\n'));
  return newlines + (!payload.empty() && payload.back() != '\n' ? 1 : 0);
}

// `payload` after its first `skip` lines.
[[nodiscard]] inline std::string_view lines_after(std::string_view payload, std::uint64_t skip) noexcept {
  std::size_t at = 0;
  for (std::uint64_t i = 0; i < skip && at < payload.size(); ++i) {
    const std::size_t newline = payload.find('\n', at);
    at = newline == std::string_view::npos ? payload.size() : newline + 1;
  }
  return payload.substr(at);
}

}  // namespace tp
