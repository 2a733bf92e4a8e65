// ekotrace's reporting columns (its collector's CSV), in their order: the one definition.
// eko-collect writes them as its CSV header and as the event-data fields of its EkoEvent and
// EkoClock records, under the same names, so `trace-csv --preset ekotrace` turns those
// records back into the same CSV.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace tp {

inline constexpr std::array<std::string_view, 9> ekotrace_columns = {"session_id",    "segment_id",   "segment_index",
                                                                     "receive_time",  "tracer_id",    "event_id",
                                                                     "event_payload", "lc_tracer_id", "lc_clock"};

// "session_id,segment_id,...,lc_clock\n"
[[nodiscard]] std::string ekotrace_csv_header();
// trace-csv's preset: "session_id=event.data.session_id,..."
[[nodiscard]] std::string ekotrace_preset_columns();

}  // namespace tp
