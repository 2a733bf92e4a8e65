// trace-serve's work: the server's lifetime, what it says when it starts, and its final
// counts; so tools/trace-serve is wiring only.
#pragma once

#include "core/error.hpp"
#include "core/log.hpp"
#include "serve/server.hpp"

namespace tp::serve {

// Serves until the input ends (with exit_on_eof) or a stop is asked for; with
// `print_stats`, the final counts go to stderr. Throws tp::Error if it cannot listen.
ExitCode serve(ServeOptions options, bool print_stats, const Logger& log);

}  // namespace tp::serve
