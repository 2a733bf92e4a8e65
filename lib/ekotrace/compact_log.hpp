// ekotrace's compact log (ekotrace `compact_log`, mid-2020): a sequence of u32 items.
//   bit 31 set            -> logical clock: (0x80000000 | tracer_id), next item = count
//   bit 30 set (31 clear) -> event with payload: (0x40000000 | event_id), next item = payload
//   otherwise             -> an event id without payload
// Event ids above 0x3FFFFEFF are reserved for the tracer's own events (MAX-1 produced
// report, MAX-2 log overflowed, MAX-3 clock overflowed, MAX-4 clocks full).
//
// Segments follow ekotrace's own readers (util alloc_log_report.rs, the chunked path in
// compact_log.rs): EVERY clock entry whose id is the tracer's own id starts a new segment,
// also right after another (a tracer that sends or merges snapshots twice with no event
// between). `[7:0] e100 e101 [7:1] [7:2] [7:3 9:4] e102` of tracer 7 is four segments. Rows
// come in log order.
//
// Event id 0 is not an event (ekotrace's readers reject it): such entries are dropped and
// counted as malformed.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace tp::ekotrace {

inline constexpr std::uint32_t clock_flag = 0x80000000U;
inline constexpr std::uint32_t payload_flag = 0x40000000U;
inline constexpr std::uint32_t max_user_event_id = 0x3FFFFEFFU;
inline constexpr std::uint32_t max_event_id = 0x3FFFFFFFU;
inline constexpr std::uint32_t produced_report_event = max_event_id - 1;
inline constexpr std::uint32_t log_overflowed_event = max_event_id - 2;
inline constexpr std::uint32_t clock_overflowed_event = max_event_id - 3;
inline constexpr std::uint32_t clocks_full_event = max_event_id - 4;

// The reserved events that say the tracer lost something (not "produced report").
[[nodiscard]] constexpr bool is_overflow_event(std::uint32_t event_id) noexcept {
  return event_id >= clocks_full_event && event_id <= log_overflowed_event;
}

// "log overflowed" etc. for the reserved ids; empty for user events.
std::string_view reserved_event_name(std::uint32_t event_id) noexcept;

struct LogEntry {
  bool is_clock = false;
  std::uint32_t id = 0;     // clock's tracer id, or event id
  std::uint32_t value = 0;  // clock count, or payload
  bool has_payload = false;
};

struct DecodedLog {
  std::vector<LogEntry> entries;
  bool truncated = false;         // the last item needed a second word that was not there
  std::uint64_t zero_events = 0;  // events with id 0, dropped
};

DecodedLog decode_compact_log(std::span<const std::uint32_t> items);

// One CSV row / record, before the session and receive time are attached.
struct Row {
  std::uint64_t segment_id = 0;
  std::uint32_t segment_index = 0;
  std::uint32_t tracer_id = 0;
  LogEntry entry;
  std::size_t tracer_index = 0;  // which tracer argument it came from
};

// Numbers segments across the whole session (segment_id counts from 0).
class Segmenter {
 public:
  // Appends the rows of one tracer's new log entries.
  void add(std::uint32_t tracer_id, std::size_t tracer_index, std::span<const LogEntry> entries, std::vector<Row>& out);
  [[nodiscard]] std::uint64_t segments() const noexcept { return next_segment_; }

 private:
  std::uint64_t next_segment_ = 0;
};

}  // namespace tp::ekotrace
