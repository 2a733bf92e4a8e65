#include "chibios/shell_session.hpp"

#include "chibios/shell_output.hpp"

#include <fmt/format.h>

#include <array>

#include "core/error.hpp"
#include "core/signals.hpp"

namespace tp::chibios {

namespace {
// A reply longer than this is not a shell reply: a line that never ends, or noise.
constexpr std::size_t max_reply_bytes = std::size_t{4} << 20U;

// SIGINT/SIGTERM end a wait at once (run_tool turns the error into 130/143).
void stop_if_asked(std::string_view path) {
  if (stop_requested() != 0)
    throw Error(ExitCode::failure, fmt::format("{}: stopped while waiting for the shell", path));
}

void bound(const std::string& text, std::string_view path) {
  if (text.size() > max_reply_bytes) {
    throw Error(ExitCode::bad_input,
                fmt::format("{}: {} bytes without a prompt: not a ChibiOS shell reply", path, text.size()));
  }
}
}  // namespace

std::optional<std::vector<std::string>> split_reply(std::string_view command, std::string_view text) {
  if (!text.ends_with(prompt)) return std::nullopt;
  std::vector<std::string> lines = split_lines(text.substr(0, text.size() - prompt.size()));
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
    stop_if_asked(port_.path());
    const std::size_t n = port_.read(buffer, std::chrono::milliseconds(50));
    text.append(buffer.data(), n);
    // Only the end matters here (a prompt): keep memory flat however much noise comes.
    if (text.size() > 2 * buffer.size()) text.erase(0, text.size() - buffer.size());
    if (std::string_view(text).ends_with(prompt)) {
      port_.drain(std::chrono::milliseconds(20));
      return;
    }
  }
  throw Error(ExitCode::timeout,
              fmt::format("{}: no ChibiOS shell prompt (\"ch> \") within {} ms; is the shell running on this port?",
                          port_.path(), timeout_.count()),
              ErrorCode::target_not_responding);
}

std::vector<std::string> ShellSession::run(std::string_view command) {
  port_.write(fmt::format("{}\r", command));
  raw_.clear();
  std::array<char, 4096> buffer{};
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (std::chrono::steady_clock::now() < deadline) {
    stop_if_asked(port_.path());
    const std::size_t n = port_.read(buffer, std::chrono::milliseconds(50));
    if (n == 0) continue;
    raw_.append(buffer.data(), n);
    bound(raw_, port_.path());
    if (auto lines = split_reply(command, raw_)) return *std::move(lines);
  }
  throw Error(ExitCode::timeout,
              fmt::format("{}: no prompt after \"{}\" within {} ms ({} bytes received)", port_.path(), command,
                          timeout_.count(), raw_.size()),
              ErrorCode::target_not_responding);
}

}  // namespace tp::chibios
