#include "fleet/nats_link.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <future>
#include <memory>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/file_descriptor.hpp"
#include "fleet/fleet_subject.hpp"

namespace tp {
namespace {

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
  (*static_cast<NatsEventSink*>(closure))(NatsEvent::disconnected, "disconnected from the NATS server; reconnecting");
}
void on_reconnected(natsConnection*, void* closure) {
  (*static_cast<NatsEventSink*>(closure))(NatsEvent::reconnected, "reconnected to the NATS server");
}
void on_async_error(natsConnection*, natsSubscription*, natsStatus status, void* closure) {
  (*static_cast<NatsEventSink*>(closure))(NatsEvent::error, fmt::format("NATS: {}", natsStatus_GetText(status)));
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

NatsLink::NatsLink(NatsSettings settings, NatsEventHandler on_event)
    : settings_(std::move(settings)), events_(std::make_unique<NatsEventSink>()) {
  events_->handler = std::move(on_event);
  check_nats(natsOptions_Create(&options_), "creating NATS options");
  std::vector<std::string> urls;
  for (std::size_t start = 0; start <= settings_.servers.size();) {
    const std::size_t comma = std::min(settings_.servers.find(',', start), settings_.servers.size());
    if (comma > start) urls.push_back(settings_.servers.substr(start, comma - start));
    start = comma + 1;
  }
  std::vector<const char*> url_pointers;
  url_pointers.reserve(urls.size());
  for (const std::string& url : urls) url_pointers.push_back(url.c_str());
  check_nats(natsOptions_SetServers(options_, url_pointers.data(), static_cast<int>(url_pointers.size())),
             "the server list " + settings_.servers);
  if (!settings_.name.empty()) natsOptions_SetName(options_, settings_.name.c_str());
  natsOptions_SetTimeout(options_, settings_.connect_timeout_ms);
  natsOptions_SetMaxReconnect(options_, -1);  // forever: a link outage must not end a capture
  natsOptions_SetReconnectWait(options_, 250);
  natsOptions_SetReconnectJitter(options_, 100, 1000);
  natsOptions_SetReconnectBufSize(options_, 8 * 1024 * 1024);
  natsOptions_SetPingInterval(options_, 2000);  // a dead link is noticed within seconds
  natsOptions_SetMaxPingsOut(options_, 3);
  natsOptions_SetIgnoreDiscoveredServers(options_, settings_.only_given_servers);
  natsOptions_SetDisconnectedCB(options_, on_disconnected, events_.get());
  natsOptions_SetReconnectedCB(options_, on_reconnected, events_.get());
  natsOptions_SetErrorHandler(options_, on_async_error, events_.get());
  if (!settings_.creds.empty()) {
    set_credentials(options_, settings_.creds, [this](std::string_view text) { (*events_)(NatsEvent::warning, text); });
  }
  // A TLS file that is missing is not found (3), not a TLS failure (9).
  const auto check_file = [](const std::string& path, std::string_view option) {
    if (!path.empty()) static_cast<void>(open_option_file(path, option));
  };
  check_file(settings_.tls_ca, "--tls-ca");
  check_file(settings_.tls_cert, "--tls-cert");
  check_file(settings_.tls_key, "--tls-key");
  if (!settings_.tls_ca.empty()) {
    check_nats(natsOptions_SetSecure(options_, true), "turning TLS on");
    check_nats(natsOptions_LoadCATrustedCertificates(options_, settings_.tls_ca.c_str()),
               "loading the CA certificates " + settings_.tls_ca);
  }
  if (!settings_.tls_cert.empty()) {
    check_nats(natsOptions_LoadCertificatesChain(options_, settings_.tls_cert.c_str(), settings_.tls_key.c_str()),
               "loading the client certificate " + settings_.tls_cert);
  }
  const natsStatus status = natsConnection_Connect(&connection_, options_);
  if (status != NATS_OK) {
    natsOptions_Destroy(options_);
    options_ = nullptr;
    check_nats(status, "connecting to " + settings_.servers);
  }
}

NatsLink::~NatsLink() {
  close();
}

jsCtx* NatsLink::jetstream(jsPubAckHandler ack_handler, void* closure, std::int64_t max_pending) {
  if (jetstream_ != nullptr) return jetstream_;
  jsOptions options;
  jsOptions_Init(&options);
  options.Wait = settings_.api_timeout_ms;
  if (!settings_.domain.empty()) options.Domain = settings_.domain.c_str();
  options.PublishAsync.AckHandler = ack_handler;
  options.PublishAsync.AckHandlerClosure = closure;
  if (max_pending > 0) options.PublishAsync.MaxPending = max_pending;
  check_nats(natsConnection_JetStream(&jetstream_, connection_, &options), "opening JetStream");
  return jetstream_;
}

std::int64_t NatsLink::max_payload() const noexcept {
  return natsConnection_GetMaxPayload(connection_);
}

void NatsLink::flush(std::int64_t timeout_ms) {
  check_nats(natsConnection_FlushTimeout(connection_, timeout_ms), "flushing to the NATS server");
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

}  // namespace

natsSubscription* NatsLink::adopt(natsSubscription* subscription) {
  subscriptions_.push_back(subscription);
  return subscription;
}

void NatsLink::close() noexcept {
  if (jetstream_ != nullptr) jsCtx_Destroy(jetstream_);
  jetstream_ = nullptr;
  const bool closed = connection_ == nullptr || closed_in_time(std::exchange(connection_, nullptr));
  if (closed) {
    for (natsSubscription* subscription : subscriptions_) natsSubscription_Destroy(subscription);
  }
  subscriptions_.clear();  // not closed: the reader may still hand them messages, so they stay
  if (!closed) {
    (*events_)(NatsEvent::error,
               "closing the NATS connection did not end within 10 s (a cnats thread that "
               "never wakes): left to the process's exit");
    {
      const std::lock_guard lock(events_->mutex);
      events_->handler = nullptr;  // what it reaches is the caller's, about to go
    }
    // The stuck close's threads may still call back: the sink stays for them, to the end.
    static_cast<void>(events_.release());
  }
  if (options_ != nullptr) natsOptions_Destroy(options_);
  options_ = nullptr;
}

std::optional<ConsumerBacklog> consumer_backlog(natsSubscription* subscription, jsCtx* jetstream,
                                                const std::string& stream, const std::string& durable,
                                                std::string& error) {
  jsConsumerInfo* info = nullptr;
  auto code = static_cast<jsErrCode>(0);
  const natsStatus status = durable.empty()
                                ? natsSubscription_GetConsumerInfo(&info, subscription, nullptr, &code)
                                : js_GetConsumerInfo(&info, jetstream, stream.c_str(), durable.c_str(), nullptr, &code);
  if (status != NATS_OK) {
    error = nats_error_text(status);
    return std::nullopt;
  }
  const ConsumerBacklog backlog{info->NumPending, info->NumAckPending};
  jsConsumerInfo_Destroy(info);
  return backlog;
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

namespace {

// A stream that keeps less than what one trace-ship has in flight drops records it has just
// acknowledged, before any reader could fetch them (with discard new: refuses all but the
// first few, for good): refused, not warned about. The bounds are the least a stream must
// hold: the window of chunks in flight (a board's chunks all go on one subject, so a
// per-subject limit counts them too) and as many bytes as that window at full chunks; and a
// few minutes of age, so that a reader away for a short while (a restart, an election) still
// finds what was acknowledged. Larger limits are the operator's retention.
void refuse_small_limits(const jsStreamConfig& config, std::size_t chunk_bytes, std::size_t window,
                         const std::function<void(const std::string&)>& refuse) {
  const auto least_messages = static_cast<std::int64_t>(window);
  const auto least_bytes = static_cast<std::int64_t>(window * chunk_bytes);
  const std::string_view how = config.Discard == js_DiscardNew ? "refuses new messages" : "drops acknowledged messages";
  if (config.MaxMsgsPerSubject > 0 && config.MaxMsgsPerSubject < least_messages) {
    refuse(
        fmt::format("it keeps {} messages per subject and {} beyond them: a board's chunks all go on one subject, "
                    "and the {} in flight (--window) need room (at least {})",
                    config.MaxMsgsPerSubject, how, window, least_messages));
  }
  if (config.MaxMsgs > 0 && config.MaxMsgs < least_messages) {
    refuse(
        fmt::format("it keeps {} messages and {} beyond them: the {} chunks in flight (--window) need room (at "
                    "least {})",
                    config.MaxMsgs, how, window, least_messages));
  }
  if (config.MaxBytes > 0 && config.MaxBytes < least_bytes) {
    refuse(
        fmt::format("it keeps {} bytes and {} beyond them: the {} chunks in flight of up to {} bytes need room "
                    "(at least {}; or lower --window or --chunk-bytes)",
                    config.MaxBytes, how, window, chunk_bytes, least_bytes));
  }
  if (config.MaxAge > 0 && config.MaxAge < min_stream_max_age_s * 1'000'000'000) {
    refuse(
        fmt::format("it keeps a message {} s: a reader away for a few minutes would find acknowledged records "
                    "gone (at least {} s)",
                    config.MaxAge / 1'000'000'000, min_stream_max_age_s));
  }
}

}  // namespace

void ensure_stream(jsCtx* jetstream, const StreamSettings& settings, bool create, std::string_view subject,
                   std::size_t chunk_bytes, std::size_t window, const std::function<void(std::string_view)>& warn) {
  jsStreamInfo* info = nullptr;
  auto code = static_cast<jsErrCode>(0);
  natsStatus status = ask_jetstream(
      "reading the stream " + settings.name,
      [&] {
        code = static_cast<jsErrCode>(0);
        return js_GetStreamInfo(&info, jetstream, settings.name.c_str(), nullptr, &code);
      },
      warn);
  if (status == NATS_NOT_FOUND || code == JSStreamNotFoundErr) {
    if (!create) {
      throw Error(ExitCode::not_found, fmt::format("no JetStream stream {}: create it with --create-stream (or give "
                                                   "the right --stream)",
                                                   settings.name));
    }
    jsStreamConfig config;
    jsStreamConfig_Init(&config);
    config.Name = settings.name.c_str();
    const std::string subjects = settings.subjects.empty() ? std::string(subject) : settings.subjects;
    const char* subject_list[] = {subjects.c_str()};
    config.Subjects = subject_list;
    config.SubjectsLen = 1;
    config.Storage = js_FileStorage;
    config.Replicas = settings.replicas;
    config.MaxAge = settings.max_age_s * 1'000'000'000;
    config.MaxBytes = settings.max_bytes;
    config.Duplicates = settings.duplicate_window_s * 1'000'000'000;
    config.Discard = js_DiscardOld;
    status = ask_jetstream(
        "creating the stream " + settings.name,
        [&] {
          code = static_cast<jsErrCode>(0);
          return js_AddStream(&info, jetstream, &config, nullptr, &code);
        },
        warn);
    if (status != NATS_OK && code != JSStreamNameExistErr) {
      check_nats(status, fmt::format("creating the stream {} (subjects {}, {} replicas)", settings.name, subjects,
                                     settings.replicas));
    }
    if (status != NATS_OK) status = js_GetStreamInfo(&info, jetstream, settings.name.c_str(), nullptr, &code);
  }
  check_nats(status, "reading the stream " + settings.name);
  const std::unique_ptr<jsStreamInfo, void (*)(jsStreamInfo*)> owned(info, jsStreamInfo_Destroy);
  const jsStreamConfig& config = *info->Config;
  const auto refuse = [&](const std::string& why) {
    throw Error(ExitCode::unsupported, fmt::format("stream {}: {}", settings.name, why));
  };
  bool covered = false;
  for (int i = 0; i < config.SubjectsLen; ++i) covered = covered || subject_matches(config.Subjects[i], subject);
  if (!covered && config.SubjectsLen > 0) refuse(fmt::format("its subjects do not cover {}", subject));
  if (config.NoAck) refuse("it does not acknowledge publishes (no_ack): nothing could be accounted for");
  if (config.Retention != js_LimitsPolicy) {
    refuse("its retention is work-queue or interest: a record one reader takes would be gone for the others");
  }
  const std::int64_t window_s = config.Duplicates / 1'000'000'000;
  if (window_s < min_duplicate_window_s) {
    refuse(
        fmt::format("its duplicate window is {} s: a chunk resent after a longer outage would be stored twice "
                    "(at least {} s; trace-ship creates streams with 600)",
                    window_s, min_duplicate_window_s));
  }
  if (config.MaxMsgSize > 0 && static_cast<std::size_t>(config.MaxMsgSize) < chunk_bytes) {
    refuse(fmt::format("its largest message is {} bytes, smaller than a chunk ({} bytes): lower --chunk-bytes",
                       config.MaxMsgSize, chunk_bytes));
  }
  refuse_small_limits(config, chunk_bytes, window, refuse);
  if (config.Discard == js_DiscardNew && (config.MaxBytes > 0 || config.MaxMsgs > 0)) {
    warn(fmt::format("stream {} refuses new messages when full (discard new): chunks will wait, then be told lost",
                     settings.name));
  }
}

}  // namespace tp
