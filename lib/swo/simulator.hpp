// The built-in simulated Cortex-M target of `swo-capture --simulate`: a small RTOS
// (tasks, SysTick and peripheral interrupts, idle) whose firmware writes the ITM
// stream a real one would, through the library's encoder:
//   port 0  console text lines (Text)
//   port 1  task switches, ISR enter/exit, idle enter/exit (TaskIsr, 9-byte records)
//   port 2  markers (Marker, u32 id)      port 3  counters (Counter, u32 id + u64 value)
//   DWT     exception trace (enter/exit/resume) and periodic PC samples
//   and local timestamps after every event, with an occasional overflow packet.
// Deterministic: the same seed gives the same bytes, whatever the pacing. Every event is
// whole: a stream cut between two next() calls never ends inside a packet.
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "itm/encoder.hpp"
#include "records/vocabulary.hpp"

namespace tp::swo {

struct SimulatorOptions {
  std::uint32_t seed = 1;
  std::uint32_t cpu_hz = 64'000'000;  // timestamps are in cycles of this clock
};

// The kinds of record the simulated events decode to.
enum class SimulatedKind : std::uint8_t {
  text,
  task_switch,
  isr_enter,
  isr_exit,
  idle_enter,
  idle_exit,
  marker,
  counter,
  exception,
  pc_sample,
  overflow,
};
inline constexpr std::size_t simulated_kind_count = 11;
RecordKind record_kind_of(SimulatedKind kind);
std::string_view simulated_kind_name(SimulatedKind kind);

class SimulatedTarget {
 public:
  explicit SimulatedTarget(SimulatorOptions options);

  // Appends the next event's bytes (and its LTS) to `out`. With `truth`, also appends the
  // records itm-decode will produce from them, one NDJSON line each, shaped like its
  // output: {"timestamp":T,"port":P,"event":{"kind":K[,"data":{...}]}}.
  void next(itm::ByteBuffer& out, std::string* truth);
  // Records generated so far, by kind (indexed by SimulatedKind).
  [[nodiscard]] const std::array<std::uint64_t, simulated_kind_count>& counts() const noexcept { return counts_; }
  // Takes the last next() back out of counts() (its bytes were not used).
  void forget_last() noexcept;

 private:
  struct Emit;
  void console_line(Emit& e);
  void systick(Emit& e);
  void peripheral_irq(Emit& e);
  void switch_task(Emit& e);
  void marker(Emit& e);
  void counter(Emit& e);
  void pc_sample(Emit& e);
  static void overflow(Emit& e);
  void isr(Emit& e, std::uint16_t exception_number, std::uint32_t duration);
  void timestamp(Emit& e);
  std::uint32_t pick(std::uint32_t low, std::uint32_t high);

  SimulatorOptions options_;
  std::mt19937_64 rng_;
  std::uint64_t now_ = 0;      // target cycles; always past the last LTS when records are made
  std::uint64_t stamped_ = 0;  // the time the last LTS gave
  std::uint64_t next_tick_ = 0;
  std::uint32_t current_task_ = 0;  // 0 = idle
  std::uint64_t line_number_ = 0;
  std::uint64_t frames_ = 0;
  std::array<std::uint64_t, 4> counter_values_{};
  std::array<std::uint64_t, simulated_kind_count> counts_{};
  std::vector<SimulatedKind> last_kinds_;
  std::string line_;
  bool started_ = false;
};

}  // namespace tp::swo
