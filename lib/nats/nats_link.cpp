#include "nats/nats_link.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <nats/nats.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/file_descriptor.hpp"
#include "nats/cnats_glue.hpp"

namespace tp {

// What cnats's connection callbacks reach: the tool's handler, which NatsLink::close() takes
// away (waiting for a call under way to end).
struct NatsEventSink {
  std::mutex mutex;
  NatsEventHandler handler;
  void operator()(NatsEvent event, std::string_view text);
};

namespace {

// cnats 3.4.1 calls a connection's callbacks from threads natsConnection_Close does not join:
// the library's async-callback thread (one for every connection), its timer thread (an ordered
// consumer's missed heartbeats) and the detached thread that re-creates an ordered consumer
// after a gap, which posts "failed recreating ordered consumer" once the connection is closed.
// So a callback can come after close() returned, the link and its sink gone (trace-lab's boards
// monitor, NATS killed: malloc(): unaligned fastbin chunk detected). The callbacks' closure is
// therefore a number, never dereferenced: the sinks are looked up here by it, and a closed
// link's is no longer found.
class EventSinks {
 public:
  std::uintptr_t add(std::shared_ptr<NatsEventSink> sink) {
    const std::lock_guard lock(mutex_);
    sinks_.emplace(++last_key_, std::move(sink));
    return last_key_;
  }
  void remove(std::uintptr_t key) {
    const std::lock_guard lock(mutex_);
    sinks_.erase(key);
  }
  std::shared_ptr<NatsEventSink> find(void* closure) {
    const auto key = reinterpret_cast<std::uintptr_t>(closure);  // NOLINT: a key, see above
    const std::lock_guard lock(mutex_);
    const auto found = sinks_.find(key);
    return found == sinks_.end() ? nullptr : found->second;
  }

 private:
  std::mutex mutex_;
  std::map<std::uintptr_t, std::shared_ptr<NatsEventSink>> sinks_;
  std::uintptr_t last_key_ = 0;
};

// Never destroyed: cnats's threads may still call back while the process exits.
EventSinks& event_sinks() {
  static auto* const sinks = new EventSinks();
  return *sinks;
}

void* closure_of(std::uintptr_t key) {
  return reinterpret_cast<void*>(key);  // NOLINT: a key cnats hands back, never dereferenced
}

// Reaches the sink `closure` names, if its link is still open.
void tell(void* closure, NatsEvent event, std::string_view text) {
  if (const std::shared_ptr<NatsEventSink> sink = event_sinks().find(closure)) (*sink)(event, text);
}

// Which exit code a cnats status stands for (README "Exit codes").
ExitCode exit_code_for(natsStatus status) {
  switch (status) {
    case NATS_NO_SERVER:
    case NATS_NOT_FOUND:
      return ExitCode::not_found;
    case NATS_NOT_PERMITTED:
    case NATS_CONNECTION_AUTH_FAILED:
      return ExitCode::permission_denied;
    case NATS_TIMEOUT:
      return ExitCode::timeout;
    case NATS_SSL_ERROR:
    case NATS_SECURE_CONNECTION_REQUIRED:
    case NATS_SECURE_CONNECTION_WANTED:
      return ExitCode::unsupported;
    default:
      return ExitCode::io_error;
  }
}

// A file named by an option (--creds, --tls-ca, ...), opened for reading: a missing one is
// not found (3), one we may not read is 4, a directory or a device is a usage error (2).
FileDescriptor open_option_file(const std::string& path, std::string_view option) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) throw_system_error(errno, fmt::format("{} {}", option, path));
  FileDescriptor opened(fd);
  struct stat status {};
  if (::fstat(opened.get(), &status) != 0) throw_system_error(errno, fmt::format("{} {}", option, path));
  if (!S_ISREG(status.st_mode)) {
    throw Error(ExitCode::usage, fmt::format("{} {}: {}, not a file", option, path,
                                             S_ISDIR(status.st_mode) ? "a directory" : "a device, FIFO or socket"));
  }
  return opened;
}

// The credentials file's text: a .creds file is a few KiB; an empty one is refused, one that
// others than its owner may read is told (ssh refuses such keys; a service's group may need
// to read it, so it is a warning here).
std::string read_credentials(const std::string& path, const std::function<void(std::string_view)>& warn) {
  constexpr std::size_t most = std::size_t{64} * 1024;
  const FileDescriptor fd = open_option_file(path, "--creds");
  struct stat status {};
  if (::fstat(fd.get(), &status) == 0 && (status.st_mode & 077U) != 0) {
    warn(fmt::format("--creds {}: readable by others than its owner (mode {:04o}): chmod 600 it", path,
                     status.st_mode & 07777U));
  }
  std::string text(most + 1, '\0');
  std::size_t size = 0;
  while (size < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + size, text.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_system_error(errno, "reading --creds " + path);
    if (n == 0) break;
    size += static_cast<std::size_t>(n);
  }
  text.resize(size);
  if (size > most) {
    throw Error(ExitCode::bad_input,
                fmt::format("--creds {}: larger than a credentials file ({} bytes at most)", path, most));
  }
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw Error(ExitCode::bad_input, fmt::format("--creds {}: empty (a .creds file, or user:password or a token "
                                                 "on its first line)",
                                                 path));
  }
  return text;
}

// cnats (conn.c, _connectProto, 3.4.1 and since) writes user, password and token into the
// CONNECT JSON as given, escaping only a JWT: a '"' or '\\' in a password broke the JSON (the
// server refused CONNECT). Given to it JSON-escaped, they reach the server as written.
std::string json_escaped(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out;
}

void set_credentials(natsOptions* options, const std::string& path, const std::function<void(std::string_view)>& warn) {
  const std::string text = read_credentials(path, warn);
  if (text.find("BEGIN NATS USER JWT") != std::string::npos) {
    check_nats(natsOptions_SetUserCredentialsFromFiles(options, path.c_str(), nullptr),
               "loading the credentials " + path);
    return;
  }
  std::string first = text.substr(0, text.find('\n'));
  while (!first.empty() && (first.back() == '\r' || first.back() == ' ')) first.pop_back();
  const std::size_t colon = first.find(':');
  if (colon == std::string::npos) {
    check_nats(natsOptions_SetToken(options, json_escaped(first).c_str()), "the token of " + path);
  } else {
    check_nats(natsOptions_SetUserInfo(options, json_escaped(first.substr(0, colon)).c_str(),
                                       json_escaped(first.substr(colon + 1)).c_str()),
               "the user and password of " + path);
  }
}

void on_disconnected(natsConnection* connection, void* closure) {
  if (natsConnection_IsClosed(connection)) return;  // our own close()
  tell(closure, NatsEvent::disconnected, "disconnected from the NATS server; reconnecting");
}
void on_reconnected(natsConnection*, void* closure) {
  tell(closure, NatsEvent::reconnected, "reconnected to the NATS server");
}
void on_async_error(natsConnection*, natsSubscription*, natsStatus status, void* closure) {
  tell(closure, NatsEvent::error, fmt::format("NATS: {}", nats_error_text(status)));
}

void set_connection_options(natsOptions* options, const NatsSettings& settings, void* events) {
  std::vector<std::string> urls;
  for (std::size_t start = 0; start <= settings.servers.size();) {
    const std::size_t comma = std::min(settings.servers.find(',', start), settings.servers.size());
    if (comma > start) urls.push_back(settings.servers.substr(start, comma - start));
    start = comma + 1;
  }
  std::vector<const char*> url_pointers;
  url_pointers.reserve(urls.size());
  for (const std::string& url : urls) url_pointers.push_back(url.c_str());
  check_nats(natsOptions_SetServers(options, url_pointers.data(), static_cast<int>(url_pointers.size())),
             "the server list " + settings.servers);
  if (!settings.name.empty()) natsOptions_SetName(options, settings.name.c_str());
  natsOptions_SetTimeout(options, settings.connect_timeout_ms);
  natsOptions_SetMaxReconnect(options, -1);  // forever: a link outage must not end a capture
  natsOptions_SetReconnectWait(options, 250);
  natsOptions_SetReconnectJitter(options, 100, 1000);
  natsOptions_SetReconnectBufSize(options, 8 * 1024 * 1024);
  natsOptions_SetPingInterval(options, 2000);  // a dead link is noticed within seconds
  natsOptions_SetMaxPingsOut(options, 3);
  natsOptions_SetIgnoreDiscoveredServers(options, settings.only_given_servers);
  natsOptions_SetDisconnectedCB(options, on_disconnected, events);
  natsOptions_SetReconnectedCB(options, on_reconnected, events);
  natsOptions_SetErrorHandler(options, on_async_error, events);
}

// Credentials and TLS, from the files the settings name.
void set_security_options(natsOptions* options, const NatsSettings& settings, NatsEventSink& events) {
  if (!settings.creds.empty()) {
    set_credentials(options, settings.creds, [&events](std::string_view text) { events(NatsEvent::warning, text); });
  }
  // A TLS file that is missing is not found (3), not a TLS failure (9).
  const auto check_file = [](const std::string& path, std::string_view option) {
    if (!path.empty()) static_cast<void>(open_option_file(path, option));
  };
  check_file(settings.tls_ca, "--tls-ca");
  check_file(settings.tls_cert, "--tls-cert");
  check_file(settings.tls_key, "--tls-key");
  if (!settings.tls_ca.empty()) {
    check_nats(natsOptions_SetSecure(options, true), "turning TLS on");
    check_nats(natsOptions_LoadCATrustedCertificates(options, settings.tls_ca.c_str()),
               "loading the CA certificates " + settings.tls_ca);
  }
  if (!settings.tls_cert.empty()) {
    check_nats(natsOptions_LoadCertificatesChain(options, settings.tls_cert.c_str(), settings.tls_key.c_str()),
               "loading the client certificate " + settings.tls_cert);
  }
}

}  // namespace

std::string nats_error_text(natsStatus status) {
  natsStatus last = NATS_OK;
  const char* detail = nats_GetLastError(&last);
  std::string text = natsStatus_GetText(status);
  if (detail != nullptr && *detail != '\0' && text != detail) text += fmt::format(" ({})", detail);
  return text;
}

void check_nats(natsStatus status, std::string_view what) {
  if (status == NATS_OK) return;
  std::string message = fmt::format("{}: {}", what, nats_error_text(status));
  switch (status) {
    case NATS_NO_SERVER:
      message += "; is nats-server running there? (--server)";
      break;
    case NATS_CONNECTION_AUTH_FAILED:
    case NATS_NOT_PERMITTED:
      message += "; check the credentials file (--creds)";
      break;
    case NATS_SECURE_CONNECTION_REQUIRED:
      message += "; the server wants TLS: give its CA with --tls-ca";
      break;
    case NATS_SECURE_CONNECTION_WANTED:
      message += "; the server does not speak TLS: leave out --tls-ca";
      break;
    case NATS_SSL_ERROR:
      message += "; does --tls-ca hold the CA that signed the server's certificate?";
      break;
    default:
      break;
  }
  throw Error(exit_code_for(status), message);
}

NatsEventHandler report_nats_events(const Logger& log) {
  return [&log](NatsEvent event, std::string_view text) {
    if (event == NatsEvent::warning) {
      log.warn(text);
    } else {
      log.verbose(text);
    }
  };
}

void NatsEventSink::operator()(NatsEvent event, std::string_view text) {
  const std::lock_guard lock(mutex);
  if (handler) handler(event, text);
}

NatsHandles::NatsHandles() = default;
// A constructor that threw (a credentials file refused) leaves its options here: not leaked.
NatsHandles::~NatsHandles() {
  if (options != nullptr) natsOptions_Destroy(options);
  if (events_key != 0) event_sinks().remove(events_key);
}

NatsLink::NatsLink(NatsSettings settings, NatsEventHandler on_event)
    : settings_(std::move(settings)), cnats_(std::make_unique<NatsHandles>()) {
  cnats_->events = std::make_shared<NatsEventSink>();
  cnats_->events->handler = std::move(on_event);
  cnats_->events_key = event_sinks().add(cnats_->events);
  check_nats(natsOptions_Create(&cnats_->options), "creating NATS options");
  set_connection_options(cnats_->options, settings_, closure_of(cnats_->events_key));
  set_security_options(cnats_->options, settings_, *cnats_->events);
  const natsStatus status = natsConnection_Connect(&cnats_->connection, cnats_->options);
  if (status != NATS_OK) {
    natsOptions_Destroy(cnats_->options);
    cnats_->options = nullptr;
    check_nats(status, "connecting to " + settings_.servers);
  }
}

NatsLink::~NatsLink() {
  close();
}

jsCtx* jetstream_of(NatsLink& link, jsPubAckHandler ack_handler, void* closure, std::int64_t max_pending) {
  jsCtx*& jetstream = link.cnats().jetstream;
  if (jetstream != nullptr) return jetstream;
  jsOptions options;
  jsOptions_Init(&options);
  options.Wait = link.settings().api_timeout_ms;
  if (!link.settings().domain.empty()) options.Domain = link.settings().domain.c_str();
  options.PublishAsync.AckHandler = ack_handler;
  options.PublishAsync.AckHandlerClosure = closure;
  if (max_pending > 0) options.PublishAsync.MaxPending = max_pending;
  check_nats(natsConnection_JetStream(&jetstream, link.cnats().connection, &options), "opening JetStream");
  return jetstream;
}

std::int64_t NatsLink::max_payload() const noexcept {
  return natsConnection_GetMaxPayload(cnats_->connection);
}

namespace {

// cnats 3.4.1 can lose the wakeup of a flusher thread that a reconnection started (one was
// found waiting with its stop flag set: the close's signal went to another waiter), and
// natsConnection_Close then joins it forever (fleet_faults under ASan, all three servers
// restarted). So the close runs on a thread of its own and is given up after a deadline.
bool closed_in_time(natsConnection* connection) {
  auto closed = std::make_shared<std::promise<void>>();
  std::future<void> done = closed->get_future();
  try {
    std::thread([connection, closed] {
      natsConnection_Close(connection);
      natsConnection_Destroy(connection);
      closed->set_value();
    }).detach();
  } catch (const std::system_error&) {  // no thread to be had: close here, as before
    natsConnection_Close(connection);
    natsConnection_Destroy(connection);
    return true;
  }
  return done.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
}

// Callbacks cnats makes from now on find no sink; one under way ends before the handler,
// the caller's, goes.
void forget_events(NatsHandles& c) noexcept {
  if (c.events == nullptr) return;
  event_sinks().remove(c.events_key);
  const std::lock_guard lock(c.events->mutex);
  c.events->handler = nullptr;
}

}  // namespace

void NatsLink::close() noexcept {
  NatsHandles& c = *cnats_;
  if (c.jetstream != nullptr) jsCtx_Destroy(c.jetstream);
  c.jetstream = nullptr;
  const bool closed = c.connection == nullptr || closed_in_time(std::exchange(c.connection, nullptr));
  if (closed) {
    for (natsSubscription* subscription : c.subscriptions) natsSubscription_Destroy(subscription);
  }
  c.subscriptions.clear();  // not closed: the reader may still hand them messages, so they stay
  if (!closed) {
    (*c.events)(NatsEvent::error,
                "closing the NATS connection did not end within 10 s (a cnats thread that "
                "never wakes): left to the process's exit");
  }
  forget_events(c);
  if (c.options != nullptr) natsOptions_Destroy(c.options);
  c.options = nullptr;
}

void RepeatedRequest::failed(std::string_view error) {
  ++failures_in_a_row_;
  const std::string text = fmt::format("{}: {} ({} in a row)", what_, error, failures_in_a_row_);
  if (failures_in_a_row_ % warn_every == 1) {
    log_.warn(text);
  } else {
    log_.verbose(text);
  }
}

void RepeatedRequest::succeeded() {
  if (failures_in_a_row_ > 0) log_.info(fmt::format("{}: answered again", what_));
  failures_in_a_row_ = 0;
}

natsStatus ask_jetstream(std::string_view what, const std::function<natsStatus()>& request,
                         const std::function<void(std::string_view)>& warn) {
  constexpr int tries = 8;
  natsStatus status = NATS_OK;
  for (int attempt = 0; attempt < tries; ++attempt) {
    status = request();
    if ((status != NATS_TIMEOUT && status != NATS_NO_RESPONDERS) || attempt + 1 == tries) break;
    warn(fmt::format("{}: {} (the cluster may be starting or electing a leader); asking again", what,
                     natsStatus_GetText(status)));
    std::this_thread::sleep_for(std::chrono::milliseconds(250 << std::min(attempt, 4)));
  }
  return status;
}

}  // namespace tp
