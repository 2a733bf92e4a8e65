#include "core/log.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/json_writer.hpp"

namespace tp {

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    // C1 controls in UTF-8 (U+0080..U+009F: C2 80..C2 9F) act as escapes on some terminals.
    const bool c1 = c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9F &&
                    static_cast<unsigned char>(text[i + 1]) >= 0x80;
    if ((c < 0x20 && c != '\t') || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
    } else if (c1) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[++i]));
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// Colour only on a terminal, and never when NO_COLOR is set (no-color.org).
Logger::Logger(std::string_view tool, Verbosity verbosity, LogFormat format)
    : tool_(tool),
      verbosity_(verbosity),
      format_(format),
      colour_(format == LogFormat::text && ::isatty(STDERR_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr) {}

void Logger::emit(std::string_view level, std::string_view code, std::string_view message,
                  std::string_view facts_json) const {
  std::string line;
  if (format_ == LogFormat::json) {
    JsonWriter json(line);
    json.begin_object();
    json.key("level").string(level);
    if (!code.empty()) json.key("code").string(code);
    json.key("tool").string(tool_);
    json.key("message").string(message);
    if (!facts_json.empty()) json.key("facts").raw(facts_json);
    json.end_object();
    line += '\n';
  } else {
    const bool is_error = level == "error";
    const char* on = !colour_ ? "" : is_error ? "\x1b[1;31m" : level == "warning" ? "\x1b[1;33m" : "\x1b[2m";
    const char* off = colour_ ? "\x1b[0m" : "";
    // Messages quote what peers sent (a GDB server's reply, a shell's line): never let their
    // bytes drive the terminal.
    const std::string safe = printable(message);
    line = level == "info" ? fmt::format("{}: {}\n", tool_, safe)
                           : fmt::format("{}: {}{}{}: {}\n", tool_, on, level, off, safe);
  }
  // One write(2) per diagnostic so lines from concurrent tools do not interleave.
  std::string_view rest = line;
  while (!rest.empty()) {
    const ssize_t n = ::write(STDERR_FILENO, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
}

void Logger::error(ErrorCode code, std::string_view message) const {
  emit("error", error_code_name(code), message);
}
void Logger::warn(std::string_view message) const {
  if (verbosity_ >= Verbosity::normal) emit("warning", {}, message);
}
void Logger::info(std::string_view message) const {
  if (verbosity_ >= Verbosity::normal) emit("info", {}, message);
}
void Logger::report(std::string_view message) const {
  emit("info", {}, message);
}
void Logger::facts(std::string_view message, std::string_view facts_json) const {
  if (format_ == LogFormat::json) {
    if (verbosity_ >= Verbosity::normal) emit("info", {}, message, facts_json);
  } else if (verbosity_ >= Verbosity::verbose) {
    emit("info", {}, fmt::format("{}: {}", message, facts_json));
  }
}
void Logger::verbose(std::string_view message) const {
  if (verbosity_ >= Verbosity::verbose) emit("info", {}, message);
}

}  // namespace tp
