#include "chibios/shell_output.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/number.hpp"

namespace tp::chibios {

namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

[[noreturn]] void malformed(std::string_view command, std::string_view line, std::string_view why) {
  throw ShellError(ShellError::Kind::malformed, fmt::format("{}: unexpected line \"{}\" ({})", command, line, why));
}

template <typename T>
bool parse_number(std::string_view text, T& out, int base = 10) {
  text = trim(text);
  if (base == 16 && (text.starts_with("0x") || text.starts_with("0X"))) text.remove_prefix(2);
  const auto value = parse_whole_number<T>(text, base);
  if (value) out = *value;
  return value.has_value();
}

// A system time as the shell prints it: a uint32 through chprintf's signed %d, so from 2^31
// ticks on it shows negative ("Triggered at -1294967296"). Taken modulo 2^32.
bool parse_system_time(std::string_view text, std::uint32_t& out) {
  text = trim(text);
  const bool negative = text.starts_with('-');
  if (negative) text.remove_prefix(1);
  std::uint64_t magnitude = 0;
  if (!parse_number(text, magnitude)) return false;
  constexpr std::uint64_t span = 1ULL << 32U;
  if (negative ? magnitude > span / 2 : magnitude >= span) return false;
  out = static_cast<std::uint32_t>(negative ? span - magnitude : magnitude);
  return true;
}

// Splits on runs of blanks.
std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    const std::size_t start = i;
    while (i < text.size() && text[i] != ' ') ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

// "A.B%" where B is printed without zero padding: 5.05% is "5.5%".
bool parse_percent(std::string_view text, std::uint32_t& hundredths) {
  text = trim(text);
  if (!text.ends_with('%')) return false;
  text.remove_suffix(1);
  const std::size_t dot = text.find('.');
  if (dot == std::string_view::npos) return false;
  std::uint32_t whole = 0;
  std::uint32_t fraction = 0;
  if (!parse_number(text.substr(0, dot), whole) || !parse_number(text.substr(dot + 1), fraction) || fraction > 99) {
    return false;
  }
  hundredths = whole * 100 + fraction;
  return true;
}

// The text after `prefix` up to `stop`, e.g. field(line, "Prio =", ",").
std::optional<std::string_view> field(std::string_view line, std::string_view prefix, std::string_view stop) {
  const std::size_t at = line.find(prefix);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + prefix.size());
  if (!stop.empty()) {
    const std::size_t end = rest.find(stop);
    if (end == std::string_view::npos) return std::nullopt;
    rest = rest.substr(0, end);
  }
  return rest;
}

}  // namespace

void check_shell_answer(std::string_view command, const std::vector<std::string>& lines) {
  for (const std::string& raw : lines) {
    const std::string_view line = trim(raw);
    if (line == fmt::format("{} ?", command)) {
      throw ShellError(
          ShellError::Kind::unknown_command,
          fmt::format("the shell does not know \"{}\" (is THREADS_UTILITIES_SHELL_CMD in its command table?)",
                      command));
    }
    if (line.starts_with("The thread timestamps functionality is disabled")) {
      throw ShellError(ShellError::Kind::disabled,
                       "the thread timestamps feature is disabled in this firmware (build it with "
                       "USE_THREADS_TIMESTAMPS = true)");
    }
    if (line.starts_with("Usage:")) {
      throw ShellError(ShellError::Kind::usage, fmt::format("the shell answered \"{}\"", line));
    }
  }
}

std::vector<ThreadStat> parse_threads_stat(const std::vector<std::string>& lines) {
  check_shell_answer("threads_stat", lines);
  std::vector<ThreadStat> threads;
  for (const std::string& raw : lines) {
    const std::string_view line = trim(raw);
    if (line.empty() || line.starts_with("begin") || line.find_first_not_of('-') == std::string_view::npos) continue;
    const auto parts = words(line);
    if (parts.size() < 7) malformed("threads_stat", line, "expected begin end size used % prio state name");
    ThreadStat stat;
    if (!parse_number(parts[0], stat.stack_begin, 16) || !parse_number(parts[1], stat.stack_end, 16)) {
      malformed("threads_stat", line, "stack addresses");
    }
    const auto optional_number = [&](std::string_view text, std::optional<std::uint32_t>& out) {
      if (text.ends_with('%')) text.remove_suffix(1);
      if (text == "???") return;
      std::uint32_t value = 0;
      if (!parse_number(text, value)) malformed("threads_stat", line, "stack size, use or %");
      out = value;
    };
    optional_number(parts[2], stat.size);
    optional_number(parts[3], stat.used);
    optional_number(parts[4], stat.percent);
    if (!parse_number(parts[5], stat.prio)) malformed("threads_stat", line, "priority");
    stat.state = std::string(parts[6]);
    // The name is the rest of the line (it may hold blanks).
    const std::size_t state_at = line.find(parts[6], static_cast<std::size_t>(parts[5].data() - line.data()));
    stat.name = std::string(trim(line.substr(state_at + parts[6].size())));
    threads.push_back(std::move(stat));
  }
  return threads;
}

UsageReport parse_threads_uc(const std::vector<std::string>& lines) {
  check_shell_answer("threads_uc", lines);
  UsageReport report;
  for (const std::string& raw : lines) {
    const std::string_view line = trim(raw);
    if (line.empty()) continue;
    if (line.starts_with("critical thd:")) {
      const auto thd = field(line, "critical thd:", "critical isr:");
      const auto isr = field(line, "critical isr:", "");
      if (!thd || !isr || !parse_percent(*thd, report.critical_thread_hundredths) ||
          !parse_percent(*isr, report.critical_isr_hundredths)) {
        malformed("threads_uc", line, "critical thd/isr percentages");
      }
      continue;
    }
    const std::size_t last_blank = line.rfind(' ');
    if (last_blank == std::string_view::npos) malformed("threads_uc", line, "expected a name and a percentage");
    ThreadUsage usage;
    if (!parse_percent(line.substr(last_blank + 1), usage.hundredths)) malformed("threads_uc", line, "percentage");
    usage.name = std::string(trim(line.substr(0, last_blank)));
    report.threads.push_back(std::move(usage));
  }
  return report;
}

namespace {
ListedThread parse_listed_thread(std::string_view line) {
  // "Thread number %2d : Prio = %3d, Log = %3s, Name = %s"
  ListedThread thread;
  const auto number = field(line, "Thread number", ":");
  const auto prio = field(line, "Prio =", ",");
  const auto log = field(line, "Log =", ",");
  const std::size_t name_at = line.find("Name = ");
  if (!number || !prio || !log || name_at == std::string_view::npos || !parse_number(*number, thread.number) ||
      !parse_number(*prio, thread.prio) || thread.number < 0 || thread.number > max_thread_number) {
    malformed("threads_list", line, "expected \"Thread number N : Prio = P, Log = Yes|No, Name = NAME\"");
  }
  const std::string_view logged = trim(*log);
  if (logged != "Yes" && logged != "No") malformed("threads_list", line, "Log is Yes or No");
  thread.logged = logged == "Yes";
  thread.name = std::string(line.substr(name_at + 7));
  while (!thread.name.empty() && (thread.name.back() == '\r' || thread.name.back() == ' ')) thread.name.pop_back();
  return thread;
}
}  // namespace

ThreadList parse_threads_list(const std::vector<std::string>& lines) {
  check_shell_answer("threads_list", lines);
  ThreadList list;
  list.timestamps_enabled = false;
  bool in_deleted = false;
  for (const std::string& raw : lines) {
    const std::string_view line = trim(raw);
    if (line.empty()) continue;
    if (line.starts_with("Deleted threads:")) {
      in_deleted = true;
      list.timestamps_enabled = true;
      continue;
    }
    ListedThread thread = parse_listed_thread(line);
    (in_deleted ? list.deleted : list.alive).push_back(std::move(thread));
  }
  for (std::size_t i = 0; i < list.alive.size(); ++i) {
    if (list.alive[i].number != static_cast<int>(i) + 1) {
      throw ShellError(ShellError::Kind::malformed,
                       fmt::format("threads_list: alive thread {} is numbered {}", i + 1, list.alive[i].number));
    }
  }
  return list;
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t newline = text.find('\n', start);
    std::string_view line = text.substr(start, newline == std::string_view::npos ? text.npos : newline - start);
    while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.emplace_back(line);
    if (newline == std::string_view::npos) break;
    start = newline + 1;
  }
  return lines;
}

std::optional<SwitchRecord> parse_timestamps_line(std::string_view line, std::optional<std::uint32_t>& trigger) {
  line = trim(line);
  if (line.empty()) return std::nullopt;
  if (line.starts_with("Triggered at")) {
    std::uint32_t time = 0;
    if (!parse_system_time(line.substr(12), time)) malformed("threads_timestamps", line, "trigger time");
    trigger = time;
    return std::nullopt;
  }
  // "From %2d to %2d at %7d"
  const auto out = field(line, "From", "to");
  const auto in = field(line, " to ", " at ");
  const auto time = field(line, " at ", "");
  SwitchRecord record;
  if (!line.starts_with("From") || !out || !in || !time || !parse_number(*out, record.out) ||
      !parse_number(*in, record.in) || !parse_number(*time, record.time) || record.out < 0 || record.out > 63 ||
      record.in < 0 || record.in > 63) {
    malformed("threads_timestamps", line, "expected \"From N to M at T\"");
  }
  return record;
}

TimestampLog parse_threads_timestamps(const std::vector<std::string>& lines) {
  check_shell_answer("threads_timestamps", lines);
  TimestampLog log;
  for (const std::string& line : lines) {
    if (const auto record = parse_timestamps_line(line, log.trigger)) log.records.push_back(*record);
  }
  return log;
}

// "Trigger set by NAME at T" (ChibiOS_18.2 branch), or "Trigger set at T" (ChibiOS_3.1
// branch: no name).
TriggerReply parse_trigger_reply(const std::vector<std::string>& lines) {
  check_shell_answer("threads_timestamps_trigger", lines);
  for (const std::string& raw : lines) {
    const std::string_view line = trim(raw);
    TriggerReply reply;
    if (line.starts_with("Trigger set at ")) {
      if (!parse_system_time(line.substr(15), reply.time)) {
        malformed("threads_timestamps_trigger", line, "expected \"Trigger set at T\"");
      }
      return reply;
    }
    if (!line.starts_with("Trigger set by ")) continue;
    const std::size_t at = line.rfind(" at ");
    if (at == std::string_view::npos || at < 15 || !parse_system_time(line.substr(at + 4), reply.time)) {
      malformed("threads_timestamps_trigger", line, "expected \"Trigger set by NAME at T\"");
    }
    reply.name = std::string(line.substr(15, at - 15));
    return reply;
  }
  throw ShellError(ShellError::Kind::malformed, "threads_timestamps_trigger: no \"Trigger set\" line in the reply");
}

void parse_run_reply(const std::vector<std::string>& lines) {
  check_shell_answer("threads_timestamps_run", lines);
  if (std::none_of(lines.begin(), lines.end(), [](const std::string& l) { return trim(l) == "Run mode"; })) {
    throw ShellError(ShellError::Kind::malformed, "threads_timestamps_run: no \"Run mode\" line in the reply");
  }
}

}  // namespace tp::chibios
