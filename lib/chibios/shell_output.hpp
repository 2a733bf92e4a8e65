// Parsers for the replies of the ChibiOS threads_utilities shell commands
// (docs/design.md "Peers and their protocols": ChibiOS threads_utilities). Each takes the reply's lines (without the
// echoed command and the final prompt) and either returns the data or throws ShellError saying what the shell answered
// instead (unknown command, feature disabled, usage) or which line is bad.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tp::chibios {

class ShellError : public std::runtime_error {
 public:
  enum class Kind { unknown_command, disabled, usage, malformed };
  ShellError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  [[nodiscard]] Kind kind() const noexcept { return kind_; }

 private:
  Kind kind_;
};

struct ThreadStat {
  std::uint32_t stack_begin = 0;
  std::uint32_t stack_end = 0;
  std::optional<std::uint32_t> size;  // "???" for main
  std::optional<std::uint32_t> used;
  std::optional<std::uint32_t> percent;
  std::uint32_t prio = 0;
  std::string state;
  std::string name;
};

struct ThreadUsage {
  std::string name;
  std::uint32_t hundredths = 0;  // 5.05% -> 505 (the shell prints it "5.5%")
};

struct UsageReport {
  std::vector<ThreadUsage> threads;
  std::uint32_t critical_thread_hundredths = 0;
  std::uint32_t critical_isr_hundredths = 0;
};

// The firmware counts threads in a uint16 (threads_list prints them all); log records keep
// 6 bits of a number (0-63).
inline constexpr int max_thread_number = 65535;

struct ListedThread {
  int number = 0;
  int prio = 0;
  bool logged = false;
  std::string name;
};

struct ThreadList {
  std::vector<ListedThread> alive;    // in creation order
  std::vector<ListedThread> deleted;  // in deletion order, numbered as when they died
  bool timestamps_enabled = true;     // false: no "Deleted threads:" section
};

struct SwitchRecord {
  int out = 0;
  int in = 0;
  std::uint32_t time = 0;  // 20 bits of the system time, wraps
};

struct TimestampLog {
  std::optional<std::uint32_t> trigger;  // full 32-bit system time (printed signed past 2^31: taken modulo 2^32)
  std::vector<SwitchRecord> records;     // oldest first
};

struct TriggerReply {
  std::string name;
  std::uint32_t time = 0;
};

// Raises ShellError for the shell's own answers: "<cmd> ?", the disabled message, "Usage:".
void check_shell_answer(std::string_view command, const std::vector<std::string>& lines);

std::vector<ThreadStat> parse_threads_stat(const std::vector<std::string>& lines);
UsageReport parse_threads_uc(const std::vector<std::string>& lines);
ThreadList parse_threads_list(const std::vector<std::string>& lines);
TimestampLog parse_threads_timestamps(const std::vector<std::string>& lines);
// One line of that reply: a record, or nullopt for a blank line or "Triggered at" (which
// sets `trigger`); anything else is a ShellError.
std::optional<SwitchRecord> parse_timestamps_line(std::string_view line, std::optional<std::uint32_t>& trigger);

// Lines of a text, CR LF or LF, the last one kept even when empty.
std::vector<std::string> split_lines(std::string_view text);
TriggerReply parse_trigger_reply(const std::vector<std::string>& lines);
void parse_run_reply(const std::vector<std::string>& lines);

}  // namespace tp::chibios
