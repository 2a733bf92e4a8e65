#include "serve/child_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <simdjson.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <utility>

#include "core/error.hpp"
#include "core/signals.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX leaves it undeclared

namespace tp::serve {

std::vector<std::string> substitute_placeholders(const std::vector<std::string>& argv,
                                                 const std::map<std::string, std::string>& values) {
  std::vector<std::string> out;
  out.reserve(argv.size());
  for (const std::string& arg : argv) {
    std::string result;
    std::size_t i = 0;
    while (i < arg.size()) {
      std::size_t open = arg.find('{', i);
      const std::size_t close = open == std::string::npos ? std::string::npos : arg.find('}', open);
      if (close != std::string::npos) open = arg.rfind('{', close);  // the innermost {name}
      if (close == std::string::npos) {
        result.append(arg, i);
        break;
      }
      result.append(arg, i, open - i);
      const auto found = values.find(arg.substr(open + 1, close - open - 1));
      result += found != values.end() ? found->second : arg.substr(open, close - open + 1);
      i = close + 1;
    }
    out.push_back(std::move(result));
  }
  return out;
}

std::optional<std::string> refuse_placeholder_value(std::string_view field, std::string_view value) {
  constexpr std::string_view allowed_punctuation = "._:/@+-";
  if (value.size() > max_placeholder_value) {
    return fmt::format("{} is longer than {} characters", field, max_placeholder_value);
  }
  const auto* const bad = std::find_if(value.begin(), value.end(), [&](char c) {
    const auto u = static_cast<unsigned char>(c);
    return std::isalnum(u) == 0 && allowed_punctuation.find(c) == std::string_view::npos;
  });
  if (bad == value.end()) return std::nullopt;
  return fmt::format("{} may only contain letters, digits and {} (it reaches the capture command); found {:?}", field,
                     allowed_punctuation, std::string(1, *bad));
}

ErrorCode callisto_code_for_exit(int exit_code) noexcept {
  switch (static_cast<ExitCode>(exit_code)) {
    case ExitCode::usage:
    case ExitCode::bad_input:
      return ErrorCode::invalid_parameters;
    case ExitCode::not_found:
      return ErrorCode::probe_not_found;
    case ExitCode::permission_denied:
      return ErrorCode::permission_denied;
    case ExitCode::busy:
      return ErrorCode::probe_in_use;
    case ExitCode::unsupported:
      return ErrorCode::baud_rate_error;
    default:  // a timeout, a lost device, a failure, a signal: the capture stopped answering
      return ErrorCode::target_not_responding;
  }
}

ErrorCode callisto_code_for_child(std::string_view name) noexcept {
  const auto code = parse_error_code(name);
  if (!code) return ErrorCode::target_not_responding;
  if (is_callisto_code(*code)) return *code;
  switch (*code) {
    case ErrorCode::not_found:
    case ErrorCode::target_not_found:
      return ErrorCode::probe_not_found;
    case ErrorCode::busy:
      return ErrorCode::probe_in_use;
    case ErrorCode::bad_input:
      return ErrorCode::invalid_parameters;
    case ErrorCode::unsupported:
      return ErrorCode::baud_rate_error;
    default:
      return ErrorCode::target_not_responding;
  }
}

std::optional<ChildError> parse_child_error_line(std::string_view line) {
  if (line.find("\"level\"") == std::string_view::npos) return std::nullopt;
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (parser.parse(line.data(), line.size()).get_object().get(object) != simdjson::SUCCESS) return std::nullopt;
  std::string_view level;
  std::string_view code;
  std::string_view message;
  if (object["level"].get(level) != simdjson::SUCCESS || level != "error") return std::nullopt;
  if (object["message"].get(message) != simdjson::SUCCESS) return std::nullopt;
  if (object["code"].get(code) != simdjson::SUCCESS) code = {};
  return ChildError{std::string(code), std::string(message)};
}

std::optional<PipelineFacts> parse_child_facts_line(std::string_view line) {
  if (line.find("\"facts\"") == std::string_view::npos) return std::nullopt;
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  simdjson::dom::object facts;
  if (parser.parse(line.data(), line.size()).get_object().get(object) != simdjson::SUCCESS) return std::nullopt;
  if (object["facts"].get_object().get(facts) != simdjson::SUCCESS) return std::nullopt;
  PipelineFacts out;
  const auto text = [&](const char* key, std::optional<std::string>& field) {
    std::string_view value;
    if (facts[key].get(value) == simdjson::SUCCESS && !value.empty()) field = std::string(value);
  };
  const auto number = [&](const char* key, std::optional<std::uint64_t>& field) {
    std::uint64_t value = 0;
    if (facts[key].get(value) == simdjson::SUCCESS) field = value;
  };
  text("probe", out.probe);
  text("serial", out.serial);
  text("target", out.target);
  text("chip", out.chip);
  number("baud", out.baud);
  number("cpu_hz", out.cpu_hz);
  return out;
}

std::string probe_description(const PipelineFacts& facts) {
  std::vector<std::string> details;
  if (facts.serial) details.push_back(fmt::format("serial {}", *facts.serial));
  if (facts.baud) details.push_back(fmt::format("{} bit/s", *facts.baud));
  const std::string probe = facts.probe.value_or("capture command");
  return details.empty() ? probe : fmt::format("{} ({})", probe, fmt::join(details, ", "));
}

namespace {

struct Pipe {
  FileDescriptor read;
  FileDescriptor write;
};

Pipe make_pipe() {
  std::array<int, 2> fds{};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) throw_system_error(errno, "pipe");
  return Pipe{FileDescriptor(fds[0]), FileDescriptor(fds[1])};
}

// The environment with TRACEPIPE_LOG_FORMAT=json (replacing any other value), and with
// stop_with_parent TRACEPIPE_STOP_WITH_PARENT=our pid (else none inherited).
std::vector<std::string> child_environment(bool stop_with_parent) {
  const std::string stop_prefix = fmt::format("{}=", stop_with_parent_variable);
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view variable(*entry);
    if (variable.starts_with("TRACEPIPE_LOG_FORMAT=") || variable.starts_with(stop_prefix)) continue;
    env.emplace_back(*entry);
  }
  env.emplace_back("TRACEPIPE_LOG_FORMAT=json");
  if (stop_with_parent) env.push_back(fmt::format("{}{}", stop_prefix, ::getpid()));
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

class SpawnAttributes {
 public:
  SpawnAttributes() {
    posix_spawnattr_init(&attr_);
    sigset_t defaults;
    sigemptyset(&defaults);
    for (const int signal : {SIGPIPE, SIGINT, SIGTERM, SIGCHLD}) sigaddset(&defaults, signal);
    sigset_t empty;
    sigemptyset(&empty);
    posix_spawnattr_setsigdefault(&attr_, &defaults);
    posix_spawnattr_setsigmask(&attr_, &empty);
    posix_spawnattr_setpgroup(&attr_, 0);
    posix_spawnattr_setflags(&attr_, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
  SpawnAttributes(SpawnAttributes&&) = delete;
  SpawnAttributes& operator=(SpawnAttributes&&) = delete;
  ~SpawnAttributes() { posix_spawnattr_destroy(&attr_); }
  posix_spawnattr_t* get() noexcept { return &attr_; }

 private:
  posix_spawnattr_t attr_{};
};

class FileActions {
 public:
  FileActions() { posix_spawn_file_actions_init(&actions_); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  FileActions(FileActions&&) = delete;
  FileActions& operator=(FileActions&&) = delete;
  ~FileActions() { posix_spawn_file_actions_destroy(&actions_); }
  void dup(int from, int to) { posix_spawn_file_actions_adddup2(&actions_, from, to); }
  void null_stdin() { posix_spawn_file_actions_addopen(&actions_, 0, "/dev/null", O_RDONLY, 0); }
  posix_spawn_file_actions_t* get() noexcept { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_{};
};

}  // namespace

ChildProcess ChildProcess::spawn(const std::vector<std::string>& argv, Options options) {
  if (argv.empty()) throw Error(ExitCode::usage, "no command given after --");
  Pipe out = make_pipe();
  Pipe err = make_pipe();
  FileActions actions;
  actions.null_stdin();
  actions.dup(out.write.get(), 1);
  actions.dup(err.write.get(), 2);
  SpawnAttributes attributes;
  std::vector<std::string> args = argv;
  std::vector<std::string> env = child_environment(options.stop_with_parent);
  std::vector<char*> arg_pointers = pointers(args);
  std::vector<char*> env_pointers = pointers(env);
  pid_t pid = -1;
  const int rc =
      posix_spawnp(&pid, args[0].c_str(), actions.get(), attributes.get(), arg_pointers.data(), env_pointers.data());
  if (rc != 0) {
    const std::string what = fmt::format("cannot run '{}': {}", argv[0], std::strerror(rc));
    throw Error(rc == ENOENT ? ExitCode::not_found : ExitCode::failure, what);
  }
  return ChildProcess(pid, std::move(out.read), std::move(err.read));
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      stdout_(std::move(other.stdout_)),
      stderr_(std::move(other.stderr_)),
      status_(other.status_) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    reap_now();
    pid_ = std::exchange(other.pid_, -1);
    stdout_ = std::move(other.stdout_);
    stderr_ = std::move(other.stderr_);
    status_ = other.status_;
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  reap_now();
}

void ChildProcess::reap_now() noexcept {
  if (pid_ <= 0 || status_) return;
  ::kill(-pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  status_ = status;
}

void ChildProcess::terminate(bool force) const noexcept {
  if (pid_ > 0 && !status_) ::kill(-pid_, force ? SIGKILL : SIGTERM);
}

std::optional<int> ChildProcess::poll() {
  if (pid_ <= 0) return std::nullopt;
  if (!status_) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) status_ = status;
  }
  return status_;
}

std::optional<int> ChildProcess::exit_code() const noexcept {
  if (!status_) return std::nullopt;
  if (WIFEXITED(*status_)) return WEXITSTATUS(*status_);
  if (WIFSIGNALED(*status_)) return 128 + WTERMSIG(*status_);
  return std::nullopt;
}

}  // namespace tp::serve
