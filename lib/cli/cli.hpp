// The command-line conventions every tool shares (docs/design.md "Conventions"): common
// flags, one place that maps errors to documented exit codes, signal handling.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/log.hpp"

namespace tp {

struct CommonOptions {
  std::string output = "-";
  bool append = false;
  bool quiet = false;
  int verbose = 0;
  std::string log_format = "text";
};

struct CommonFlags {
  bool output = true;  // -o/--output
  bool append = true;  // --append
};

// Adds -o/--output, --append, -q/--quiet, -v/--verbose, --log-format and --version.
void add_common_options(CLI::App& app, CommonOptions& options, CommonFlags flags = {});

// Adds --threads N for the record tools: threads reading a file input (0, the default: one
// per core, up to 8; 1: line by line, as from a pipe).
void add_threads_option(CLI::App& app, unsigned& threads);

// --cpu-hz HZ, the target's clock; `use` says what the tool does with it.
void add_cpu_hz_option(CLI::App& app, std::uint64_t& hz, std::string_view use);

// The exit-code table printed at the end of every --help.
[[nodiscard]] std::string exit_code_help();

// Parses argv, then runs body with a logger. Maps CLI11 errors to ExitCode::usage,
// tp::Error to its code (one clear line on stderr), a broken pipe to a quiet 0, and a
// SIGINT/SIGTERM stop to 128+signal after body has flushed what it had.
int run_tool(CLI::App& app, CommonOptions& options, int argc, char** argv,
             const std::function<ExitCode(const Logger&)>& body);

// For main(): runs `body` (which builds the CLI and calls run_tool) so that nothing can
// escape main, not even an exception from building the option parser.
int guard_main(std::string_view tool, const std::function<int()>& body) noexcept;

}  // namespace tp
