// trace-lab's views, as URLs give them (docs/tools/trace-lab.md): one board live from
// JetStream, a time range or a run of it stored in ClickHouse (maybe going on live where the
// stored part ends), and the parameters every API shares (board names, globs, times). What a
// browser sends is parsed here and nowhere else; a view is refused whole, naming the
// parameter, before anything reaches an engine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tp::lab {

// A parameter the browser got wrong: 400 with its name and why.
struct BadParameter {
  std::string name;
  std::string why;
  [[nodiscard]] std::string message() const { return name + ": " + why; }
};

enum class ViewMode : std::uint8_t { live, range, run };

struct View {
  std::string board;
  ViewMode mode = ViewMode::live;
  std::optional<std::int64_t> since_us;  // live: where it starts (nullopt: the default, shared)
  std::int64_t from_us = 0;              // range: [from, to)
  std::int64_t to_us = 0;
  std::string run;  // run
  bool then_live = false;
  std::optional<std::int64_t> mark_us;
};

// A live view with no since starts this long before now.
inline constexpr std::int64_t default_live_lookback_us = 10'000'000;
inline constexpr std::size_t max_board_name = 64;

// A fleet board token: 1-64 of A-Z a-z 0-9 _ -.
[[nodiscard]] bool is_board_name(std::string_view text) noexcept;
// A glob of boards: 1-64 of those and * ?.
[[nodiscard]] bool is_board_glob(std::string_view text) noexcept;
// Whether `name` matches a glob (* any characters, ? one), as board_glob_condition's LIKE does.
[[nodiscard]] bool glob_matches(std::string_view glob, std::string_view name) noexcept;
// A run as trace-ship names it: a fleet name (1-64 of A-Z a-z 0-9 _ -).
[[nodiscard]] bool is_run_name(std::string_view text) noexcept;

// A time: an RFC 3339 UTC time or an integer of microseconds since 1970; with ages allowed,
// a duration before now_us too (10m). Parsed by core/wall_clock.
[[nodiscard]] std::variant<std::int64_t, BadParameter> parse_time(std::string_view name, std::string_view text,
                                                                  std::int64_t now_us, bool ages);

// The view a request target asks for (/ws?board=B&live=1, /board/?board=B&from=..&to=..).
[[nodiscard]] std::variant<View, BadParameter> parse_view(std::string_view target, std::int64_t now_us);

// A key shared by the viewers of the same live view (a live view without since); empty for
// a view that is one viewer's.
[[nodiscard]] std::string shared_view_key(const View& view);

// The one value of a parameter; a repeated one is refused.
[[nodiscard]] std::variant<std::optional<std::string>, BadParameter> query_value(std::string_view target,
                                                                                 std::string_view name);

}  // namespace tp::lab
