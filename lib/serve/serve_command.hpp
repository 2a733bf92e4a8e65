// trace-serve's work: the server's lifetime, what it says when it starts, and its final
// counts; so tools/trace-serve is wiring only.
#pragma once

#include <fmt/format.h>

#include <string>

#include "core/error.hpp"
#include "core/log.hpp"
#include "serve/serve_options.hpp"

namespace tp::serve {

// What the command line gives in another form than the server takes.
struct ServeArguments {
  std::string listen = fmt::format("127.0.0.1:{}", default_port);
  std::string port_map;
  std::uint64_t cpu_hz = 0;  // 0: not given
  std::string dwt = "auto";
  std::string target;
  std::string chip;
  std::string probe;
  std::string token;
  std::string elf;
  bool stats = false;
};

// Checks and completes `options` with the arguments (the listen address, the port map's
// JSON, the ELF's symbols), then serves.
ExitCode serve(const ServeArguments& arguments, ServeOptions options, const Logger& log);

// Serves until the input ends (with exit_on_eof) or a stop is asked for; with
// `print_stats`, the final counts go to stderr. Throws tp::Error if it cannot listen.
ExitCode serve(ServeOptions options, bool print_stats, const Logger& log);

}  // namespace tp::serve
