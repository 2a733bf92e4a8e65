#include "fleet/fleet_subject.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <ctime>

#include "core/number.hpp"
#include "records/fleet_fields.hpp"

namespace tp {

bool is_subject_prefix(std::string_view prefix) noexcept {
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = prefix.find('.', start);
    const std::string_view token = prefix.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (!is_fleet_name(token)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::string board_subject(std::string_view prefix, std::string_view board) {
  return fmt::format("{}.{}", prefix, board);
}

std::string all_boards_subject(std::string_view prefix) {
  return fmt::format("{}.*", prefix);
}

std::string message_id(std::string_view board, std::string_view run, std::uint64_t first_seq) {
  return fmt::format("{}.{}.{}", board, run, first_seq);
}

std::string new_run_id() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  return fmt::format("{:%Y%m%dT%H%M%SZ}-{}", utc, ::getpid());
}

bool board_matches(std::string_view glob, std::string_view board) noexcept {
  // Iterative matching with one backtrack point for the last '*' (linear enough for names).
  std::size_t g = 0;
  std::size_t b = 0;
  std::size_t star = std::string_view::npos;
  std::size_t star_b = 0;
  while (b < board.size()) {
    if (g < glob.size() && (glob[g] == '?' || glob[g] == board[b])) {
      ++g;
      ++b;
    } else if (g < glob.size() && glob[g] == '*') {
      star = g++;
      star_b = b;
    } else if (star != std::string_view::npos) {
      g = star + 1;
      b = ++star_b;
    } else {
      return false;
    }
  }
  while (g < glob.size() && glob[g] == '*') ++g;
  return g == glob.size();
}

std::optional<SeqRange> seq_range_of(std::string_view first_text, std::string_view last_text) noexcept {
  const auto first = parse_whole_number<std::uint64_t>(first_text);
  const auto last = parse_whole_number<std::uint64_t>(last_text);
  if (!first || !last || *last < *first || *last >= seq_limit) return std::nullopt;
  return SeqRange{*first, *last};
}

}  // namespace tp
