#include "lab/lab_view.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/number.hpp"
#include "core/wall_clock.hpp"
#include "records/fleet_fields.hpp"
#include "serve/handshake.hpp"

namespace tp::lab {
namespace {

// The most digits of a microsecond count up to 9999-12-31 (as core/wall_clock's range).
constexpr std::size_t max_us_digits = 18;

bool all_digits(std::string_view text) noexcept {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

using Parsed = std::variant<View, BadParameter>;

// The live view's own parameters: since (a time or an age).
std::optional<BadParameter> take_live(std::string_view target, std::int64_t now_us, View& view) {
  const auto since = query_value(target, "since");
  if (const auto* bad = std::get_if<BadParameter>(&since)) return *bad;
  if (const auto& text = std::get<std::optional<std::string>>(since)) {
    const auto time = parse_time("since", *text, now_us, true);
    if (const auto* bad = std::get_if<BadParameter>(&time)) return *bad;
    view.since_us = std::get<std::int64_t>(time);
  }
  return std::nullopt;
}

std::optional<BadParameter> take_time(std::string_view target, std::string_view name, std::int64_t now_us,
                                      std::int64_t& out) {
  const auto value = query_value(target, name);
  if (const auto* bad = std::get_if<BadParameter>(&value)) return *bad;
  const auto& text = std::get<std::optional<std::string>>(value);
  if (!text) return BadParameter{std::string(name), "missing"};
  const auto time = parse_time(name, *text, now_us, false);
  if (const auto* bad = std::get_if<BadParameter>(&time)) return *bad;
  out = std::get<std::int64_t>(time);
  return std::nullopt;
}

// The stored view's: from and to, or run; then, mark.
std::optional<BadParameter> take_stored(std::string_view target, std::int64_t now_us, View& view) {
  const auto run = query_value(target, "run");
  if (const auto* bad = std::get_if<BadParameter>(&run)) return *bad;
  if (const auto& name = std::get<std::optional<std::string>>(run)) {
    if (!is_run_name(*name)) return BadParameter{"run", "not a run name (1-64 of A-Z a-z 0-9 _ -)"};
    view.mode = ViewMode::run;
    view.run = *name;
  } else {
    view.mode = ViewMode::range;
    if (auto bad = take_time(target, "from", now_us, view.from_us)) return bad;
    if (auto bad = take_time(target, "to", now_us, view.to_us)) return bad;
    if (view.to_us <= view.from_us) return BadParameter{"to", "not after from"};
  }
  const auto then = query_value(target, "then");
  if (const auto* bad = std::get_if<BadParameter>(&then)) return *bad;
  if (const auto& text = std::get<std::optional<std::string>>(then)) {
    if (*text != "live") return BadParameter{"then", "only 'live'"};
    view.then_live = true;
  }
  const auto mark = query_value(target, "mark");
  if (const auto* bad = std::get_if<BadParameter>(&mark)) return *bad;
  if (const auto& text = std::get<std::optional<std::string>>(mark)) {
    const auto time = parse_time("mark", *text, now_us, false);
    if (const auto* bad = std::get_if<BadParameter>(&time)) return *bad;
    view.mark_us = std::get<std::int64_t>(time);
  }
  return std::nullopt;
}

}  // namespace

bool is_board_name(std::string_view text) noexcept {
  return text.size() <= max_board_name && is_fleet_name(text);
}

bool is_board_glob(std::string_view text) noexcept {
  return !text.empty() && text.size() <= max_board_name &&
         std::all_of(text.begin(), text.end(), [](char c) { return is_fleet_name_char(c) || c == '*' || c == '?'; });
}

bool glob_matches(std::string_view glob, std::string_view name) noexcept {
  // Iterative, with one back-tracking point (the last *): linear enough for 64 characters.
  std::size_t g = 0;
  std::size_t n = 0;
  std::size_t star = std::string_view::npos;
  std::size_t resume = 0;
  while (n < name.size()) {
    if (g < glob.size() && (glob[g] == '?' || glob[g] == name[n])) {
      ++g;
      ++n;
    } else if (g < glob.size() && glob[g] == '*') {
      star = g++;
      resume = n;
    } else if (star != std::string_view::npos) {
      g = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (g < glob.size() && glob[g] == '*') ++g;
  return g == glob.size();
}

bool is_run_name(std::string_view text) noexcept {
  return is_board_name(text);
}

std::variant<std::int64_t, BadParameter> parse_time(std::string_view name, std::string_view text, std::int64_t now_us,
                                                    bool ages) {
  if (all_digits(text)) {
    const auto us = parse_whole_number<std::int64_t>(text);
    if (text.size() > max_us_digits || !us) return BadParameter{std::string(name), "too large a time"};
    return *us;
  }
  try {
    return ages ? parse_time_or_age(name, text, now_us) : parse_rfc3339_utc(text);
  } catch (const Error& e) {
    return BadParameter{std::string(name), ages ? "not an RFC 3339 UTC time, microseconds since 1970 or an age"
                                                : "not an RFC 3339 UTC time or microseconds since 1970"};
  }
}

std::variant<std::optional<std::string>, BadParameter> query_value(std::string_view target, std::string_view name) {
  std::vector<std::string> values = serve::query_parameters(target, name);
  if (values.empty()) return std::optional<std::string>();
  if (values.size() > 1) return BadParameter{std::string(name), "given more than once"};
  return std::optional<std::string>(std::move(values.front()));
}

std::variant<View, BadParameter> parse_view(std::string_view target, std::int64_t now_us) {
  View view;
  const auto board = query_value(target, "board");
  if (const auto* bad = std::get_if<BadParameter>(&board)) return *bad;
  const auto& name = std::get<std::optional<std::string>>(board);
  if (!name) return BadParameter{"board", "missing"};
  if (!is_board_name(*name)) return BadParameter{"board", "not a board name (1-64 of A-Z a-z 0-9 _ -)"};
  view.board = *name;
  const auto live = query_value(target, "live");
  if (const auto* bad = std::get_if<BadParameter>(&live)) return *bad;
  const auto& live_text = std::get<std::optional<std::string>>(live);
  if (live_text && *live_text != "1") return BadParameter{"live", "only 1"};
  const bool stored = !serve::query_parameters(target, "from").empty() ||
                      !serve::query_parameters(target, "to").empty() || !serve::query_parameters(target, "run").empty();
  if (live_text && stored) return BadParameter{"live", "a view is live or stored (from/to, run), not both"};
  if (!live_text && !stored) return BadParameter{"live", "give live=1, from and to, or run"};
  std::optional<BadParameter> bad = live_text ? take_live(target, now_us, view) : take_stored(target, now_us, view);
  if (bad) return *bad;
  return view;
}

std::string shared_view_key(const View& view) {
  if (view.mode != ViewMode::live || view.since_us) return {};
  return "live:" + view.board;
}

}  // namespace tp::lab
