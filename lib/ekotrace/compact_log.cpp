#include "ekotrace/compact_log.hpp"

namespace tp::ekotrace {

std::string_view reserved_event_name(std::uint32_t event_id) noexcept {
  switch (event_id) {
    case produced_report_event:
      return "produced report";
    case log_overflowed_event:
      return "log overflowed";
    case clock_overflowed_event:
      return "logical clock overflowed";
    case clocks_full_event:
      return "clocks full";
    default:
      return event_id > max_user_event_id ? "reserved" : "";
  }
}

DecodedLog decode_compact_log(std::span<const std::uint32_t> items) {
  DecodedLog log;
  log.entries.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::uint32_t item = items[i];
    LogEntry entry;
    if ((item & clock_flag) != 0 || (item & payload_flag) != 0) {
      if (i + 1 >= items.size()) {
        log.truncated = true;
        break;
      }
      entry.is_clock = (item & clock_flag) != 0;
      entry.has_payload = !entry.is_clock;
      entry.id = item & (entry.is_clock ? ~clock_flag : ~payload_flag);
      entry.value = items[++i];
    } else {
      entry.id = item;
    }
    if (!entry.is_clock && entry.id == 0) {
      ++log.zero_events;
      continue;
    }
    log.entries.push_back(entry);
  }
  return log;
}

void Segmenter::add(std::uint32_t tracer_id, std::size_t tracer_index, std::span<const LogEntry> entries,
                    std::vector<Row>& out) {
  if (entries.empty()) return;
  std::uint64_t segment = next_segment_++;
  std::uint32_t index = 0;
  bool first = true;
  for (const auto& entry : entries) {
    if (entry.is_clock && entry.id == tracer_id && !first) {
      segment = next_segment_++;
      index = 0;
    }
    first = false;
    out.push_back({segment, index++, tracer_id, entry, tracer_index});
  }
}

}  // namespace tp::ekotrace
