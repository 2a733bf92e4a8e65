// The trace as a timeline in the Chrome Trace Event format (the JSON that ui.perfetto.dev,
// chrome://tracing and speedscope open), written as the records stream by, in memory bounded
// by what the trace names (tasks, handlers, ports), never by its length.
//
// Tracks (one "thread" each of process 1, "target"):
//   - one per task: a slice from each switch to it until the next switch or idle, so the
//     slices of a task add up to the CPU time trace-top gives it (interrupts count for the
//     task they interrupted, idle stretches for nobody);
//   - "idle": IdleEnter to IdleExit;
//   - one per exception (DWT exception trace) and per ISR (TaskIsr), and one "exceptions" and
//     one "interrupts" track where the handlers that preempt each other nest as slices;
//   - "PC samples" when the samples carry functions (itm-decode --elf): a slice per run of
//     samples in one function;
//   - "markers" and "console port N": instant events with the marker's name or the line's text;
// counters as counter tracks ("C" events); Overflow and Malformed records as global instant
// events, and a slice that spanned either loss says so ("uncertain": true on its end).
// Timestamps are microseconds: cycles / --cpu-hz, ns / 1000, us as they are; without a rate,
// cycles and ticks are written as they are (one unit drawn as one microsecond).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/observation.hpp"
#include "core/out_buffer.hpp"

namespace tp::analysis {

struct TimelineOptions {
  std::uint64_t cpu_hz = 0;
  std::optional<std::uint64_t> since;  // the window, in the records' timestamps
  std::optional<std::uint64_t> until;  // (exclusive)
};

class TimelineWriter {
 public:
  explicit TimelineWriter(TimelineOptions options) : options_(options) {}

  // The opening of the JSON object.
  void begin(OutBuffer& out);
  // The events one record makes, appended to `out`.
  void add(const Observation& o, OutBuffer& out);
  // End of input (or of the window): open slices end at the last time; the JSON is closed.
  void finish(OutBuffer& out);

  // The window's end was reached: later records change nothing.
  [[nodiscard]] bool done() const noexcept { return done_; }
  [[nodiscard]] std::uint64_t events() const noexcept { return events_; }
  // Cycle or tick timestamps written without --cpu-hz (one unit drawn as one microsecond).
  [[nodiscard]] bool unscaled() const noexcept { return unscaled_; }

 private:
  enum class TrackKind : std::uint8_t { task, idle, exception, exceptions, isr, interrupts, samples, markers, console };
  struct Slice {
    std::string name;
    bool uncertain = false;
  };
  // The open slices of a track, innermost last (handlers preempting each other nest). Slots
  // are reused, names keep their capacity: no allocation per slice on the hot path.
  class SliceStack {
   public:
    [[nodiscard]] bool empty() const noexcept { return depth_ == 0; }
    Slice& top() noexcept { return slots_[depth_ - 1]; }
    void push(std::string_view name);
    // The popped slice stays readable until the next push.
    Slice& pop() noexcept { return slots_[--depth_]; }
    [[nodiscard]] std::span<Slice> open() noexcept { return {slots_.data(), depth_}; }

   private:
    std::vector<Slice> slots_;
    std::size_t depth_ = 0;
  };
  struct Track {
    int tid = 0;
    std::string name;
    int sort_index = 0;
    bool announced = false;
    SliceStack open;
  };
  // Handlers that preempt each other: each on its own track and on the nesting track.
  struct HandlerStack {
    TrackKind own;
    TrackKind nesting;
    std::vector<std::uint32_t> active;
  };

  Track& track(TrackKind kind, std::uint32_t id, std::string_view label);
  // The same, the label made only when the track is new (not per record).
  template <typename MakeLabel>
  Track& track_made(TrackKind kind, std::uint32_t id, const MakeLabel& make_label);
  void write_begin(const Track& track, std::string_view name, std::uint64_t at, OutBuffer& out);
  void open_slice(Track& track, std::string_view name, std::uint64_t at, OutBuffer& out);
  void close_slice(Track& track, std::uint64_t at, OutBuffer& out);
  void close_all(std::uint64_t at, OutBuffer& out);
  void enter_window(std::uint64_t at, OutBuffer& out);

  void on_task_switch(const Observation& o, OutBuffer& out);
  void on_idle(bool enter, std::uint64_t at, OutBuffer& out);
  void on_handler_enter(HandlerStack& stack, const Observation& o, OutBuffer& out);
  void on_handler_exit(HandlerStack& stack, const Observation& o, OutBuffer& out);
  void on_sample(const Observation& o, OutBuffer& out);
  void on_instant(const Observation& o, OutBuffer& out);
  void on_overflow(std::uint64_t at, OutBuffer& out);
  void mark_open_uncertain();
  static std::string handler_label(const HandlerStack& stack, std::uint32_t number, std::string_view name);

  void event_start(OutBuffer& out, char phase, std::uint64_t at);
  void announce(Track& track, OutBuffer& out);
  void append_time(OutBuffer& out, std::uint64_t at);

  TimelineOptions options_;
  std::string clock_;
  std::map<std::pair<TrackKind, std::uint32_t>, Track> tracks_;
  static constexpr int tids_per_kind = 100'000;
  std::array<int, 9> tracks_of_kind_{};
  std::optional<std::uint32_t> running_task_;
  bool idle_ = false;
  HandlerStack exceptions_{TrackKind::exception, TrackKind::exceptions, {}};
  HandlerStack isrs_{TrackKind::isr, TrackKind::interrupts, {}};
  std::uint64_t last_time_ = 0;
  bool seen_ = false;
  bool in_window_ = false;
  bool done_ = false;
  bool unscaled_ = false;
  bool symbols_seen_ = false;
  std::uint64_t events_ = 0;
};

}  // namespace tp::analysis
