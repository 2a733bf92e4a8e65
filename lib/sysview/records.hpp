// SystemView packets as tracepipe records (docs/design.md "SystemView"): the meaning the
// SystemView host gives the stream, kept in one place.
//
//   TaskStartExec      -> TaskSwitch {from_task, to_task, from_name, to_name} (IdleExit first
//                         when the CPU was idle); TaskStopExec: no record, the next start says
//   Idle               -> IdleEnter
//   IsrEnter / IsrExit -> IsrEnter {isr_id, name} / IsrExit {isr_id} (the innermost entered;
//                         IsrToScheduler: IsrExit {isr_id, to_scheduler: true})
//   TaskCreate, TaskStartReady, TaskStopReady, TaskTerminate -> TaskState {task, state, ...}
//   TaskInfo -> TaskInfo, StackInfo -> StackInfo, TimerEnter/Exit -> TimerEnter/TimerExit,
//   MarkStart/MarkStop/Mark -> Marker {id, name, phase}, PrintFormatted -> Text {message,
//   level} (formatted here), Overflow -> Overflow {dropped, target_count}, DataSample -> DataSample,
//   heap events -> HeapEvent, IDs >= 32 and EndCall -> UserEvent {event_id, data},
//   TraceStart/Stop, Init, Systime, SysDesc, ModuleDesc, NumModules, NameResource,
//   NameMarker, RegisterData -> SystemInfo {item, ...}.
//
// Time: the sum of the deltas, in the target's timestamp ticks, placed on the target's own
// clock by the first SystimeCycles (its value is the timestamp at that packet; the records
// before it wait and are placed with it); later ones are checked against it. The records are in nanoseconds (clock
// ns) when the timestamp frequency is known once the first records are placed (Init's, or --cpu-hz), else in
// ticks (clock cycles).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/out_buffer.hpp"
#include "records/vocabulary.hpp"
#include "sysview/packet.hpp"

namespace tp::sysview {

struct RecordSettings {
  std::uint64_t timestamp_hz = 0;  // 0: as the target announces it (Init)
  bool ticks = false;              // keep timestamp ticks (clock cycles) even when the rate is known
  std::uint32_t port = 0;          // the records' port (the RTT channel, for the reader)
};

struct RecordCounters {
  std::uint64_t records = 0;
  std::uint64_t dropped = 0;  // packets the target reported lost (Overflow)
  std::uint64_t overflows = 0;
  std::uint64_t time_mismatches = 0;  // SystimeCycles that disagreed with the sum of deltas
  std::uint64_t unmatched_exits = 0;  // IsrExit without an IsrEnter
};

class RecordWriter {
 public:
  explicit RecordWriter(RecordSettings settings) : settings_(settings) {}

  // Writes the packet's record (if it has one) to `out`.
  void packet(const Packet& packet, OutBuffer& out);
  // End of input: what waits for a next packet is written.
  void finish(OutBuffer& out);
  // Bytes that were not packets: a Malformed record.
  void skipped(std::string_view reason, std::uint64_t bytes, OutBuffer& out);

  [[nodiscard]] const RecordCounters& counters() const noexcept { return counters_; }
  [[nodiscard]] std::string_view clock() const noexcept { return clock_.value_or(""); }
  [[nodiscard]] std::uint64_t timestamp_hz() const noexcept { return hz_; }

 private:
  struct Head {
    std::uint64_t timestamp;
    std::string_view clock;
  };
  Head head();
  void choose_clock();
  [[nodiscard]] std::uint64_t in_clock(std::uint64_t ticks) const;
  void release_held(std::int64_t offset, OutBuffer& out);
  void dispatch(const Packet& packet, OutBuffer& out);
  void describe(std::string_view description);
  void event_packet(const Packet& packet, OutBuffer& out);
  void task_packet(const Packet& packet, OutBuffer& out);
  void isr_packet(const Packet& packet, OutBuffer& out);
  void info_packet(const Packet& packet, OutBuffer& out);
  void extended_packet(const Packet& packet, OutBuffer& out);
  [[nodiscard]] std::optional<std::string_view> task_name(std::uint32_t task) const;

  RecordSettings settings_;
  RecordCounters counters_;
  std::uint64_t time_ = 0;
  bool time_placed_ = false;
  std::uint64_t hz_ = 0;
  std::optional<std::string_view> clock_;
  std::optional<std::uint32_t> running_;  // the task executing, if one is
  std::uint32_t last_task_ = 0;           // the task that ran last (from_task of the next switch)
  bool idle_ = false;
  std::uint32_t last_drop_count_ = 0;  // the target's DropCount in the last Overflow
  // Until the first system time places the target's clock, records wait in hold_ (SEGGER's
  // start sends a few before it: TraceStart, Init, the descriptions), at most max_held; the
  // clock is chosen when they are released, so that Init's rate, which comes after TraceStart,
  // chooses it.
  static constexpr std::size_t max_held = 1024;
  static constexpr std::string_view unchosen_clock = clock_name(RecordClock::cycles);  // a held record's, until then
  struct Held {
    std::uint64_t time;  // in ticks, relative to the stream's start
    std::size_t start;   // where its record begins in hold_
    bool clocked;        // written after the clock was chosen
  };
  bool placing_ = true;
  OutBuffer hold_;
  std::vector<Held> held_;
  std::vector<std::uint32_t> isr_stack_;
  std::unordered_map<std::uint32_t, std::string> task_names_;
  std::unordered_map<std::uint32_t, std::string> isr_names_;
  std::unordered_map<std::uint32_t, std::string> marker_names_;
  std::unordered_map<std::uint32_t, std::string> resource_names_;
  std::string text_;
};

}  // namespace tp::sysview
