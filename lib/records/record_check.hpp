// The one validator of the record stream (docs/design.md "The record"), applied by every tool
// that reads records (trace-filter, trace-csv, trace-serve), so a line is good or bad the
// same way everywhere:
//   - timestamp: an unsigned 64-bit integer;
//   - a record: port 0-255, event.kind a string, and for every kind of record.schema.json
//     (Callisto's core kinds with its TraceEvent fields, the project's own kinds) the data
//     fields and types the schema requires. A kind the schema does not know passes with
//     its data unchecked (records from other producers); "Itm" is reserved for frames lines;
//   - a frames line (itm-decode --frames, frames.schema.json): frames of port 0-255, 1-4 data
//     bytes and a timestamp;
//   - source, when present, a string; clock, when present, one of the schema's units.
// Fields a consumer does not know are ignored.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tp {

// Equality for the short names in records (kinds, keys, enum values): a byte loop kept
// inline, where std::string_view's == calls memcmp (5% of trace-filter's time in perf).
[[nodiscard]] inline bool same_text(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && (a.empty() || (a[0] == b[0] && std::memcmp(a.data(), b.data(), a.size()) == 0));
}

// What a good line is, for the consumers' routing.
struct CheckedLine {
  bool frames = false;  // a frames line (no port or event)
  std::uint64_t timestamp = 0;
  std::uint32_t port = 0;  // a record's port
  // These point into the parsed line: valid until the next line is parsed.
  std::string_view kind;   // a record's event.kind
  std::string_view clock;  // empty when absent
  std::optional<std::string_view> source;
  // A frames line's ports: bits for 0-31, and whether one is above 31.
  std::uint32_t frame_port_bits = 0;
  bool frame_high_port = false;
  bool has_fleet_fields = false;  // board, run, seq or host_us (records/fleet_fields.hpp)
};

// Checks one parsed line (its root object). Returns what it is, or nothing with the reason
// in `problem`.
std::optional<CheckedLine> check_record_line(simdjson::dom::object root, std::string& problem);

// The rules, for the test that keeps them equal to record.schema.json.
// number: at least 0 (shares, percentages); real: any number (a sampled value); bytes: an
// array of integers 0-255; u64_array: an array of unsigned integers (a chart's series).
enum class FieldType : std::uint8_t { u64, string, boolean, number, real, bytes, u64_array, string_enum, integer_enum };

struct FieldRule {
  std::string_view name;
  FieldType type = FieldType::u64;
  bool required = false;
  bool nullable = false;
  std::uint64_t max = ~std::uint64_t{0};        // u64, u64_array's items: the largest value allowed
  std::span<const std::string_view> strings{};  // string_enum: the values allowed
  std::span<const std::uint64_t> integers{};    // integer_enum: the values allowed
  std::size_t max_items = ~std::size_t{0};      // u64_array: the most items allowed
};

struct KindRule {
  std::string_view kind;
  bool has_data = true;  // "data" is required (every kind but IdleEnter and IdleExit)
  std::span<const FieldRule> fields;
};

std::span<const KindRule> record_kind_rules() noexcept;

}  // namespace tp
