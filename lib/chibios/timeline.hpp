// Rebuilds who ran when from threads_list and threads_timestamps (docs/design.md "Peers and their protocols";
// "The reference Python tool's algorithm"), as the reference tool does and correct where it
// is not: creation order from the alive and deleted lists; records replayed with exits
// (out == in) shifting the numbers of later threads; number 0 (a thread no longer listed);
// n switches in one tick spread over it (t + k/n); time wrap-around (20 bits of a 32-bit
// system time, or a 16-bit system time); runs of logged threads from IN/OUT pairs (a thread
// running when the log starts or is read gets a run to that edge, flagged, instead of being
// dropped; a zero-length edge run is not written, the thread's flag keeps the fact);
// isolated IN/OUT marks for threads not logged.
//
// Times are absolute system ticks since boot, unwrapped across the log. The log cannot say
// how many times the time wrapped before its first record: that record's wrap period is
// taken as the first (the original script's x axis, for logs that did not wrap).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "chibios/shell_output.hpp"

namespace tp::chibios {

// The width of the logged time: 20 bits of a 32-bit system time (ChibiOS's default
// CH_CFG_ST_RESOLUTION 32), or all of a 16-bit one (CH_CFG_ST_RESOLUTION 16), which wraps
// at 65536.
inline constexpr unsigned default_time_bits = 20;
inline constexpr int max_record_number = 63;  // a record's thread numbers have 6 bits
// The firmware's deleted list: HANDLED_THREADS_LEN, 63 in threads_utilities.c (not 64).
inline constexpr std::size_t max_deleted_entries = 63;
[[nodiscard]] constexpr bool valid_time_bits(unsigned bits) noexcept {
  return bits == 16 || bits == 20;
}

struct Run {
  double start = 0;  // absolute system ticks
  double end = 0;
  bool from_log_start = false;  // running when the log began: start is the log's first tick
  bool to_read_time = false;    // still running when the log was read: end is the last tick
};

struct TimelineThread {
  int id = 0;  // 1-based creation order: stable, unlike the shell's numbers
  std::string name;
  int prio = 0;
  bool logged = false;
  bool alive = true;  // still listed (false: in the deleted list)
  std::optional<double> exit_time;
  bool running_at_log_start = false;  // its first mark is an OUT
  bool running_when_read = false;     // its last mark is an IN
  std::vector<Run> runs;              // logged threads
  std::vector<double> ins;            // every IN mark (for threads not logged, all there is)
  std::vector<double> outs;           // every OUT mark
};

struct Switch {
  double time = 0;
  std::uint64_t tick = 0;  // unwrapped system tick
  int from = 0;            // thread id, 0 when unknown
  int to = 0;
  bool exit = false;  // the thread `from` exited
};

struct Timeline {
  std::vector<TimelineThread> threads;  // creation order (index = id - 1)
  std::vector<Switch> switches;
  std::optional<double> trigger;
  std::optional<std::string> trigger_name;
  std::uint64_t first_tick = 0;  // the first record's time (absolute ticks, its wrap period taken as the first)
  double start = 0;
  double end = 0;
  unsigned time_bits = default_time_bits;
  std::vector<std::string> warnings;  // records that do not fit the lists
};

// The replay itself, streaming: records go in one by one and switches and runs come out as
// soon as they are known (a tick's records wait until the tick is complete, to spread them),
// so a log of any length is rebuilt in constant memory. reconstruct() collects its output.
class TimelineReplay {
 public:
  struct Sink {
    std::function<void(const Switch&)> on_switch;
    std::function<void(const TimelineThread&, const Run&)> on_run;  // logged threads
    std::function<void(const TimelineThread&, double time, bool in)> on_mark;
    std::function<void(const std::string&)> on_warning;
  };

  TimelineReplay(const ThreadList& list, Sink sink, unsigned time_bits = default_time_bits);
  void feed(const SwitchRecord& record);
  // Closes the last tick and the runs still open (threads running when the log was read).
  void finish();
  [[nodiscard]] const std::vector<TimelineThread>& threads() const noexcept { return threads_; }
  [[nodiscard]] std::uint64_t first_tick() const noexcept { return first_tick_; }
  [[nodiscard]] double end() const noexcept { return end_; }
  [[nodiscard]] std::uint64_t last_tick() const noexcept { return tick_; }
  [[nodiscard]] std::uint64_t time_wrap() const noexcept { return wrap_; }

 private:
  void flush_tick();
  void warn(const std::string& warning) const;
  void check_deleted_list();
  void replay(const SwitchRecord& record, double time, std::uint64_t tick);
  void mark(int id, double time, bool in);

  Sink sink_;
  std::vector<TimelineThread> threads_;
  std::vector<int> current_;  // shell number - 1 -> thread id, as the records see it
  std::vector<std::optional<double>> open_;
  std::vector<bool> marked_;
  std::vector<SwitchRecord> pending_;  // the records of the current tick
  std::uint64_t wrap_;
  std::uint64_t first_tick_ = 0;
  std::uint64_t epoch_ = 0;
  std::uint64_t tick_ = 0;
  std::uint32_t previous_raw_ = 0;
  std::size_t count_ = 0;
  double end_ = 0;
  // Consistency of the firmware's lists with the log (the firmware's expiry bugs).
  std::size_t listed_deleted_ = 0;
  std::size_t exit_records_ = 0;
  std::vector<std::string> exited_names_;
  // A 20-bit reading of a log that wraps at 65536 (a 16-bit system time).
  bool wrapped_near_16_bits_ = false;
  std::uint32_t largest_raw_ = 0;
  bool warned_width_ = false;
};

// The creation order: the alive list, then each deleted thread (last deleted first)
// inserted at the index its number had (the reference tool's rule).
std::vector<ListedThread> creation_order(const ThreadList& list);

Timeline reconstruct(const ThreadList& list, const TimestampLog& log, unsigned time_bits = default_time_bits);

// Threads sorted for display: by priority (highest first), then creation order.
std::vector<const TimelineThread*> display_order(const Timeline& timeline);

}  // namespace tp::chibios
