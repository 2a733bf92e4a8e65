#include "cli/cli.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "cli/option_docs.hpp"
#include "cli/version.hpp"
#include "core/batched_writer.hpp"
#include "core/byte_source.hpp"
#include "core/number.hpp"
#include "core/signals.hpp"

namespace tp {
namespace {
// --log-format and its variable: declared once, read by the parser and, before it, by
// log_format_before_parse.
constexpr std::string_view log_format_option = "--log-format";
constexpr const char* log_format_variable = "TRACEPIPE_LOG_FORMAT";
}  // namespace

void add_threads_option(CLI::App& app, unsigned& threads) {
  app.add_option("--threads", threads, "Threads parsing the input (default: one per core, up to 8; 1: line by line)")
      ->type_name("N")
      ->check(CLI::Range(0U, 64U));
}

void add_cpu_hz_option(CLI::App& app, std::uint64_t& hz, std::string_view use) {
  app.add_option("--cpu-hz", hz, fmt::format("Target clock in Hz: {}", use))->type_name("HZ");
}

void add_common_options(CLI::App& app, CommonOptions& options, CommonFlags flags) {
  if (flags.output)
    app.add_option("-o,--output", options.output, "Write output to FILE ('-' = stdout)")->type_name("FILE");
  if (flags.output && flags.append)
    app.add_flag("--append", options.append, "Append to the output file instead of truncating it");
  app.add_flag("-q,--quiet", options.quiet, "Print only errors on stderr");
  app.add_flag("-v,--verbose", options.verbose, "More detail on stderr (repeatable)");
  app.add_option(std::string(log_format_option), options.log_format, "Diagnostics on stderr as text or JSON lines")
      ->envname(log_format_variable)
      ->check(CLI::IsMember({"text", "json"}))
      ->default_val(options.log_format);
  app.set_version_flag("--version",
                       fmt::format("{} (tracepipe) {}\nLicense: MIT", app.get_name(), tracepipe_version()));
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

bool is_digit(char c) noexcept {
  return c >= '0' && c <= '9';
}

bool is_decimal_number(std::string_view text) noexcept {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && ec == std::errc{} && end == text.data() + text.size();
}

bool is_hex_number(std::string_view text) noexcept {
  return text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') &&
         std::all_of(text.begin() + 2, text.end(),
                     [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

// CLI11 2.1 reads "-5" into an unsigned 64-bit option as 2^64-5 and a number past 2^64 as
// 2^64-1. No tracepipe option takes a negative number or one that large, so every value
// that looks like one is refused before CLI11 converts it.
std::string refuse_out_of_range_number(const std::string& value) {
  const std::string_view text(value);
  // Only a value that is all a number: "-5", "-0.5", "-1e3", "-0x10", not a token that
  // starts with "-1".
  if (text.size() >= 2 && text[0] == '-' && (is_decimal_number(text.substr(1)) || is_hex_number(text.substr(1)))) {
    return "a negative number is not allowed here";
  }
  if (is_hex_number(text) && !parse_whole_number<std::uint64_t>(text.substr(2), 16)) {
    return "the number is out of range (at most 18446744073709551615)";
  }
  if (!text.empty() && std::all_of(text.begin(), text.end(), is_digit) && !parse_whole_number<std::uint64_t>(text)) {
    return "the number is out of range (at most 18446744073709551615)";
  }
  return {};
}

void refuse_out_of_range_numbers(CLI::App& app) {
  const CLI::Validator validator(refuse_out_of_range_number, "", "non-negative 64-bit number");
  for (CLI::Option* option : app.get_options()) {
    if (option->get_type_size() != 0) option->check(validator);
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) refuse_out_of_range_numbers(*sub);
}
// An option that takes several values takes one per occurrence (--allow-origin A
// --allow-origin B), so that it never swallows the positional FILE after it.
void one_value_per_occurrence(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (!option->get_positional() && option->get_items_expected_max() > 1) option->allow_extra_args(false);
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) one_value_per_occurrence(*sub);
}

// TOOL --generate-completions SHELL and TOOL --generate-man-options (cli/option_docs): the
// option documentation from the definitions, on stdout. Nothing when argv asks for neither.
int print_text(std::string_view text) {
  return std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0
             ? static_cast<int>(ExitCode::ok)
             : static_cast<int>(ExitCode::io_error);
}

std::optional<int> print_option_docs(const CLI::App& app, int argc, char** argv) {
  if (argc == 2 && argv[1] == generate_man_options_flag) return print_text(man_options(app));
  if (argc != 3 || argv[1] != generate_completions_flag) return std::nullopt;
  const std::optional<std::string> script = completion_script(app, argv[2]);
  if (!script) {
    std::fputs("--generate-completions: the shells are bash, zsh and fish\n", stderr);
    return static_cast<int>(ExitCode::usage);
  }
  return print_text(*script);
}

// Opens /dev/null on each of 0, 1 and 2 that is closed (`tool <&-`), so that no descriptor
// the tool opens later (a file, an eventfd) becomes its stdin, stdout or stderr by chance.
void open_standard_descriptors() noexcept {
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    const int opened = ::open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);
    if (opened >= 0 && opened != fd) ::close(opened);             // a lower one was closed too: taken in turn
    if (fd == STDIN_FILENO) ByteSource::stdin_was_closed();       // reading "-" is still an error
    if (fd == STDOUT_FILENO) BatchedWriter::stdout_was_closed();  // and so is writing it
  }
}

// --log-format as the command line or TRACEPIPE_LOG_FORMAT sets it, read before the parse,
// so that a usage error (which stops the parse before --log-format is read) is said in it.
std::string log_format_before_parse(int argc, char** argv, const std::string& parsed) {
  std::string format = parsed;
  if (const char* env = std::getenv(log_format_variable); env != nullptr) format = env;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (arg == "--") break;
    if (arg == log_format_option && i + 1 < argc) format = argv[++i];
    if (arg.starts_with(log_format_option) && arg.substr(log_format_option.size()).starts_with('=')) {
      format = arg.substr(log_format_option.size() + 1);
    }
  }
  return format == "json" ? format : "text";
}

}  // namespace

int guard_main(std::string_view tool, const std::function<int()>& body) noexcept {
  open_standard_descriptors();
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
  refuse_out_of_range_numbers(app);
  one_value_per_occurrence(app);
  if (const std::optional<int> status = print_option_docs(app, argc, argv)) return *status;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    options.log_format = log_format_before_parse(argc, argv, options.log_format);
    const Logger logger = make_logger(app, options);
    logger.error(ErrorCode::invalid_parameters, fmt::format("{} (see --help)", e.what()));
    return static_cast<int>(ExitCode::usage);
  }
  const Logger logger = make_logger(app, options);
  install_stop_signal_handlers();
  stop_with_parent_from_environment();
  try {
    const ExitCode code = body(logger);
    if (const int signo = stop_requested(); signo != 0 && code == ExitCode::ok) return 128 + signo;
    return static_cast<int>(code);
  } catch (const BrokenPipe&) {
    return static_cast<int>(ExitCode::ok);  // the reader went away: end quietly, like `head`
  } catch (const OutputStalled& e) {
    logger.error(e.error_code(), e.what());  // output lost: said even with --quiet
    return 128 + stop_requested();
  } catch (const Error& e) {
    // Stopped by SIGINT/SIGTERM: what failed then (an interrupted wait) is the stop itself.
    if (const int signo = stop_requested(); signo != 0) return 128 + signo;
    logger.error(e.error_code(), e.what());
    return static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {
    logger.error(ErrorCode::internal_error, "out of memory");
    return static_cast<int>(ExitCode::internal);
  } catch (const std::exception& e) {
    logger.error(ErrorCode::internal_error, fmt::format("internal error: {} (please report this)", e.what()));
    return static_cast<int>(ExitCode::internal);
  }
}

}  // namespace tp
