// The fleet fields of a record (docs/design.md "The fleet"), stamped once per record by their
// one owner, trace-ship, and written here only:
//
//   {...the record...,"board":"B","run":"R","seq":N,"host_us":U}
//
// board names the board (one NATS subject token), run a capture start, seq the record's number
// within (board, run) from 0 (consecutive: a gap is a loss, which a Loss record explains), and
// host_us the shipping host's receive time in microseconds since 1970 UTC (nanoseconds would
// exceed 2^53, which JavaScript and jq cannot hold exactly).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tp {

// A board or run name: 1-64 of A-Z a-z 0-9 _ -, so it is one NATS subject token (no '.', '*',
// '>' or blank), a ClickHouse string without escapes and a file name.
inline constexpr std::size_t fleet_name_max = 64;
[[nodiscard]] bool is_fleet_name(std::string_view name) noexcept;
// Whether c may be in a fleet name (one table lookup: the validator checks every stamped line).
[[nodiscard]] bool is_fleet_name_char(char c) noexcept;

struct FleetStamp {
  std::string_view board;
  std::string_view run;
  std::uint64_t seq = 0;
  std::uint64_t host_us = 0;
};

// Appends `record` (a record line without its newline, ending with '}') to `out` with the fleet
// fields added as its last members, and a newline.
void append_stamped(std::string& out, std::string_view record, const FleetStamp& stamp);

}  // namespace tp
