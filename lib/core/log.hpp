// Diagnostics on stderr in text (coloured on a terminal) or JSON lines.
#pragma once

#include <string>
#include <string_view>

#include "core/error.hpp"

namespace tp {

enum class LogFormat { text, json };

// Text safe for a terminal: control characters (but tab), DEL and UTF-8 C1 controls become
// \xNN / \uNNNN escapes. Text diagnostics pass through it (peers' bytes end up in them).
[[nodiscard]] std::string printable(std::string_view text);
enum class Verbosity { quiet = 0, normal = 1, verbose = 2 };

class Logger {
 public:
  Logger() = default;
  Logger(std::string_view tool, Verbosity verbosity, LogFormat format);

  void error(ErrorCode code, std::string_view message) const;
  void warn(std::string_view message) const;
  void info(std::string_view message) const;     // shown unless --quiet
  void verbose(std::string_view message) const;  // shown with -v
  void report(std::string_view message) const;   // asked for explicitly (--stats): shown even with -q
  // A statement for the program reading this tool's stderr (trace-serve reads its capture
  // command's): with --log-format json a line {"level":"info",...,"facts":FACTS_JSON} unless
  // -q; in text the message, with -v only.
  void facts(std::string_view message, std::string_view facts_json) const;
  [[nodiscard]] Verbosity verbosity() const noexcept { return verbosity_; }
  [[nodiscard]] LogFormat format() const noexcept { return format_; }
  [[nodiscard]] std::string_view tool() const noexcept { return tool_; }

 private:
  void emit(std::string_view level, std::string_view code, std::string_view message,
            std::string_view facts_json = {}) const;
  std::string_view tool_ = "tracepipe";
  Verbosity verbosity_ = Verbosity::normal;
  LogFormat format_ = LogFormat::text;
  bool colour_ = false;
};

}  // namespace tp
