// What the analysis tools read from a record: the few fields each statistic needs, taken
// from one parsed line (trace-top and trace-timeline share it).
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "json/ndjson_reader.hpp"
#include "records/vocabulary.hpp"

namespace tp::analysis {

enum class ObservationKind : std::uint8_t {
  pc_sample,
  exception,  // DWT exception trace
  isr_enter,  // TaskIsr (software)
  isr_exit,
  task_switch,
  idle_enter,
  idle_exit,
  overflow,  // the target dropped packets: what spans it is uncertain
  marker,
  text,  // a console line
  counter,
  malformed,  // the decoder resynchronised: bytes were skipped
  other,
};

struct Observation {
  std::uint64_t timestamp = 0;
  std::string_view clock;  // the record's, empty when absent
  ObservationKind kind = ObservationKind::other;
  std::uint32_t number = 0;  // exception number, isr_id, the task switched to, marker or counter id
  std::uint32_t port = 0;
  std::uint32_t from_task = 0;
  ExceptionAction action = ExceptionAction::reserved;  // Exception: data.action
  std::uint64_t pc = 0;
  bool sleep = false;
  std::string_view name;  // function (PcSample, --elf), handler or name (Exception, IsrEnter), task name
  std::string_view file;  // PcSample with DWARF (--elf): the source file and line of pc
  std::uint32_t line = 0;
  std::uint64_t value = 0;  // Counter
  std::string_view text;    // Text's message, Malformed's reason
};

// Nothing for a line that is not a record (a frames line) or lacks a needed field.
std::optional<Observation> observe(simdjson::dom::object record);

// An analysis tool's line handler: hands a record's observation to `use`; skips a frames line;
// any other line is bad (INCORRECT_TYPE, with why in line.problem).
template <typename Use>
simdjson::error_code observe_line(NdjsonLine& line, Use&& use) {
  if (const std::optional<Observation> observation = observe(line.root)) {
    use(*observation);
    return simdjson::SUCCESS;
  }
  if (line.root["frames"].error() == simdjson::SUCCESS) return simdjson::SUCCESS;
  line.problem =
      "not a record: no unsigned \"timestamp\", no \"event\" with a \"kind\", or a PcSample or Counter "
      "without its data";
  return simdjson::INCORRECT_TYPE;
}

}  // namespace tp::analysis
