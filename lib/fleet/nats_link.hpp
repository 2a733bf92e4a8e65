// The NATS side of the fleet tools, over cnats (libnats-dev, the official C client): a
// connection with its options (servers, credentials and TLS from files, reconnect forever),
// its JetStream context, and the errors of both as tp::Error with what to do.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/log.hpp"

namespace tp {

struct NatsSettings {
  std::string servers = "nats://127.0.0.1:4222";  // comma-separated URLs
  std::string creds;     // a NATS .creds file (JWT and NKey seed), or a file of user:password or a token
  std::string tls_ca;    // CA certificates that sign the server's (turns TLS on)
  std::string tls_cert;  // client certificate chain (with tls_key), for servers that verify clients
  std::string tls_key;
  std::string domain;               // the JetStream domain (a leaf node's, e.g. rack3), empty: the server's own
  std::string name;                 // the connection's name in the server's monitoring
  bool only_given_servers = false;  // ignore the servers a cluster advertises (a proxy in between)
  std::int64_t connect_timeout_ms = 2000;
  std::int64_t api_timeout_ms = 5000;
};

// Things a connection reports as it lives (a disconnection, a reconnection, an async error),
// and a warning about its settings (a credentials file others may read).
enum class NatsEvent : std::uint8_t { disconnected, reconnected, error, warning };
using NatsEventHandler = std::function<void(NatsEvent event, std::string_view text)>;

// The handler of a tool that only reports: warnings on stderr, the rest with -v.
[[nodiscard]] NatsEventHandler report_nats_events(const Logger& log);

// What cnats's connection callbacks reach: the tool's handler, which NatsLink::close() can
// take away (a close given up leaves the connection's threads running until the process ends).
struct NatsEventSink {
  std::mutex mutex;
  NatsEventHandler handler;
  void operator()(NatsEvent event, std::string_view text);
};

// The text of a cnats status with the library's last error detail.
[[nodiscard]] std::string nats_error_text(natsStatus status);
// Throws Error for a failed cnats call: `what` is what was being done.
void check_nats(natsStatus status, std::string_view what);

// One connection and its JetStream context (jsOptions as the tool sets them).
class NatsLink {
 public:
  NatsLink(NatsSettings settings, NatsEventHandler on_event);
  ~NatsLink();
  NatsLink(const NatsLink&) = delete;
  NatsLink& operator=(const NatsLink&) = delete;
  NatsLink(NatsLink&&) = delete;
  NatsLink& operator=(NatsLink&&) = delete;

  // Creates the JetStream context once: async publish acks go to `ack_handler`.
  jsCtx* jetstream(jsPubAckHandler ack_handler = nullptr, void* closure = nullptr, std::int64_t max_pending = 0);
  [[nodiscard]] natsConnection* connection() const noexcept { return connection_; }
  [[nodiscard]] std::int64_t max_payload() const noexcept;
  [[nodiscard]] const NatsSettings& settings() const noexcept { return settings_; }
  // Flushes what the client buffered and waits for the server to have seen it.
  void flush(std::int64_t timeout_ms);
  // Takes `subscription` over and returns it: it is destroyed after the connection closed
  // (its reader thread joined), never before. cnats 3.4.1's reader takes a subscription out
  // of the connection's table without a reference and then locks it: destroying one while
  // messages or heartbeats still come for it frees the mutex the reader is about to take
  // (SIGSEGV in natsConn_processMsg: nats.c issue 637, fixed in 3.6.0).
  natsSubscription* adopt(natsSubscription* subscription);
  // Closes (pending acks are not waited for: the caller did that), then destroys the adopted
  // subscriptions; gives up after 10 s, leaving both to the process's exit.
  void close() noexcept;

 private:
  NatsSettings settings_;
  std::unique_ptr<NatsEventSink> events_;
  natsOptions* options_ = nullptr;
  natsConnection* connection_ = nullptr;
  jsCtx* jetstream_ = nullptr;
  std::vector<natsSubscription*> subscriptions_;
};

struct NatsMessageDeleter {
  void operator()(natsMsg* message) const noexcept { natsMsg_Destroy(message); }
};
using NatsMessage = std::unique_ptr<natsMsg, NatsMessageDeleter>;

// What a consumer still holds for its reader: messages not yet delivered, and delivered but
// not acknowledged. A durable consumer is asked by name: cnats 3.4 answers "Invalid
// Subscription" when asked through a subscription that bound to an existing push consumer.
struct ConsumerBacklog {
  std::uint64_t undelivered = 0;
  std::int64_t unacknowledged = 0;
};
[[nodiscard]] std::optional<ConsumerBacklog> consumer_backlog(natsSubscription* subscription, jsCtx* jetstream,
                                                              const std::string& stream, const std::string& durable,
                                                              std::string& error);

// The failures of a JetStream request a tool repeats (a consumer's state, a fetch): the
// first of a series and every 20th are warnings, the others shown with -v, so a loop waiting
// on it is never silent (a durable deleted under a store fails one fetch, then times out).
class RepeatedRequest {
 public:
  RepeatedRequest(std::string what, const Logger& log) : what_(std::move(what)), log_(log) {}
  void failed(std::string_view error);
  void succeeded();

 private:
  static constexpr unsigned warn_every = 20;
  std::string what_;
  const Logger& log_;
  unsigned failures_in_a_row_ = 0;
};

// Makes a JetStream API request (`request`, a cnats call) again while it times out or finds
// no responders: a cluster that has just started, or is electing a stream leader after a node
// died, answers late for a while. Up to 8 tries with a back-off (about 20 s of waiting), each
// retry told to `warn` with `what`; returns the last status.
natsStatus ask_jetstream(std::string_view what, const std::function<natsStatus()>& request,
                         const std::function<void(std::string_view)>& warn);

// A JetStream stream as trace-ship creates it (--create-stream) or checks it.
struct StreamSettings {
  std::string name = "TRACE";
  std::string subjects;  // e.g. trace.>
  int replicas = 1;
  std::int64_t max_age_s = 0;   // 0: no limit
  std::int64_t max_bytes = -1;  // -1: no limit
  std::int64_t duplicate_window_s = 600;
};

// The smallest duplicate window trace-ship accepts: a resend later than this after the first
// send would be stored twice.
inline constexpr std::int64_t min_duplicate_window_s = 60;
// The shortest max_age trace-ship accepts (ensure_stream says why).
inline constexpr std::int64_t min_stream_max_age_s = 300;

// Creates the stream when `create` (an existing one with other settings is left as it is and
// checked), then checks that publishing `subject` in chunks of up to `chunk_bytes`, `window`
// of them in flight, to it can neither double nor lose records without a word (nor keep so
// little that what was just acknowledged is gone): throws Error naming the setting otherwise.
void ensure_stream(jsCtx* jetstream, const StreamSettings& settings, bool create, std::string_view subject,
                   std::size_t chunk_bytes, std::size_t window, const std::function<void(std::string_view)>& warn);

}  // namespace tp
