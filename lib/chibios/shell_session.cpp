#include "chibios/shell_session.hpp"

#include <fmt/format.h>

#include <array>

#include "core/error.hpp"

namespace tp::chibios {

namespace {

std::vector<std::string> lines_of(std::string_view text) {
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

}  // namespace

std::optional<std::vector<std::string>> split_reply(std::string_view command, std::string_view text) {
  if (!text.ends_with(prompt)) return std::nullopt;
  std::vector<std::string> lines = lines_of(text.substr(0, text.size() - prompt.size()));
  // The echo: the last line that is the command (after any prompt echoed before it).
  std::size_t echo = lines.size();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    while (line.starts_with(prompt)) line.remove_prefix(prompt.size());
    if (line == command) {
      echo = i;
      break;
    }
  }
  if (echo == lines.size()) return std::nullopt;  // the prompt seen is an earlier one
  lines.erase(lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(echo) + 1);
  if (!lines.empty() && lines.back().empty()) lines.pop_back();  // the prompt's own line start
  return lines;
}

void ShellSession::synchronise() {
  port_.drain(std::chrono::milliseconds(100));
  port_.write("\r");
  std::string text;
  std::array<char, 4096> buffer{};
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (std::chrono::steady_clock::now() < deadline) {
    const std::size_t n = port_.read(buffer, std::chrono::milliseconds(50));
    text.append(buffer.data(), n);
    if (std::string_view(text).ends_with(prompt)) {
      port_.drain(std::chrono::milliseconds(20));
      return;
    }
  }
  throw Error(ExitCode::timeout,
              fmt::format("{}: no ChibiOS shell prompt (\"ch> \") within {} ms; is the shell running on this port?",
                          port_.path(), timeout_.count()),
              "TARGET_NOT_RESPONDING");
}

std::vector<std::string> ShellSession::run(std::string_view command) {
  port_.write(fmt::format("{}\r", command));
  raw_.clear();
  std::array<char, 4096> buffer{};
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (std::chrono::steady_clock::now() < deadline) {
    const std::size_t n = port_.read(buffer, std::chrono::milliseconds(50));
    if (n == 0) continue;
    raw_.append(buffer.data(), n);
    if (auto lines = split_reply(command, raw_)) {
      // Keep the save format's shape: the echo line first, the prompt last.
      const std::size_t echo = raw_.find(command);
      raw_.erase(0, echo == std::string::npos ? 0 : echo);
      return *std::move(lines);
    }
  }
  throw Error(ExitCode::timeout,
              fmt::format("{}: no prompt after \"{}\" within {} ms ({} bytes received)", port_.path(), command,
                          timeout_.count(), raw_.size()),
              "TARGET_NOT_RESPONDING");
}

}  // namespace tp::chibios
