// What the analysis tools read from a record: the few fields each statistic needs, taken
// from one parsed line (trace-top and later analysis filters share it).
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string_view>

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
  other,
};

enum class ExceptionAction : std::uint8_t { enter, exit, resume, other };

struct Observation {
  std::uint64_t timestamp = 0;
  std::string_view clock;  // the record's, empty when absent
  ObservationKind kind = ObservationKind::other;
  std::uint32_t number = 0;  // exception number, isr_id, or the task switched to
  std::uint32_t from_task = 0;
  ExceptionAction action = ExceptionAction::other;
  std::uint64_t pc = 0;
  bool sleep = false;
  std::string_view name;  // function (PcSample, --elf), handler or name (Exception, IsrEnter), task name
  std::string_view file;  // PcSample with DWARF (--elf): the source file and line of pc
  std::uint32_t line = 0;
};

// Nothing for a line that is not a record (a frames line) or lacks a needed field.
std::optional<Observation> observe(simdjson::dom::object record);

}  // namespace tp::analysis
