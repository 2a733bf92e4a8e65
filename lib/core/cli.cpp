#include "core/cli.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <new>

#include "core/signals.hpp"

namespace tp {

void add_common_options(CLI::App& app, CommonOptions& options, CommonFlags flags) {
  if (flags.output)
    app.add_option("-o,--output", options.output, "Write output to FILE ('-' = stdout)")->type_name("FILE");
  if (flags.output && flags.append)
    app.add_flag("--append", options.append, "Append to the output file instead of truncating it");
  app.add_flag("-q,--quiet", options.quiet, "Print only errors on stderr");
  app.add_flag("-v,--verbose", options.verbose, "More detail on stderr (repeatable)");
  app.add_option("--log-format", options.log_format, "Diagnostics on stderr as text or JSON lines")
      ->envname("TRACEPIPE_LOG_FORMAT")
      ->check(CLI::IsMember({"text", "json"}))
      ->default_val("text");
  app.set_version_flag("--version", std::string(app.get_name()) + " (tracepipe) " TRACEPIPE_VERSION);
  app.footer(exit_code_help());
}

std::string exit_code_help() {
  return "Exit codes:\n"
         "  0  success (malformed input is skipped, counted and reported)\n"
         "  1  other failure             2  usage error\n"
         "  3  not found                 4  permission denied\n"
         "  5  device busy               6  bad input\n"
         "  7  I/O error                 8  peer or target not responding\n"
         "  9  unsupported by the peer  70  internal error\n"
         "  130/143  stopped by SIGINT/SIGTERM after writing what was decoded";
}

namespace {
Logger make_logger(const CLI::App& app, const CommonOptions& options) {
  const Verbosity verbosity = options.quiet         ? Verbosity::quiet
                              : options.verbose > 0 ? Verbosity::verbose
                                                    : Verbosity::normal;
  return Logger(app.get_name(), verbosity, options.log_format == "json" ? LogFormat::json : LogFormat::text);
}
}  // namespace

int guard_main(std::string_view tool, const std::function<int()>& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%.*s: internal error: %s\n", static_cast<int>(tool.size()), tool.data(), e.what());
  } catch (...) {
    std::fprintf(stderr, "%.*s: internal error\n", static_cast<int>(tool.size()), tool.data());
  }
  return static_cast<int>(ExitCode::internal);
}

int run_tool(CLI::App& app, CommonOptions& options, int argc, char** argv,
             const std::function<ExitCode(const Logger&)>& body) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const Logger logger = make_logger(app, options);
    logger.error("INVALID_PARAMETERS", fmt::format("{} (see --help)", e.what()));
    return static_cast<int>(ExitCode::usage);
  }
  const Logger logger = make_logger(app, options);
  install_stop_signal_handlers();
  try {
    const ExitCode code = body(logger);
    if (const int signo = stop_requested(); signo != 0 && code == ExitCode::ok) return 128 + signo;
    return static_cast<int>(code);
  } catch (const BrokenPipe&) {
    return static_cast<int>(ExitCode::ok);  // the reader went away: end quietly, like `head`
  } catch (const Error& e) {
    logger.error(e.protocol_code(), e.what());
    return static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {
    logger.error("INTERNAL_ERROR", "out of memory");
    return static_cast<int>(ExitCode::internal);
  } catch (const std::exception& e) {
    logger.error("INTERNAL_ERROR", fmt::format("internal error: {} (please report this)", e.what()));
    return static_cast<int>(ExitCode::internal);
  }
}

}  // namespace tp
