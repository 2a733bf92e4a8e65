// NATS for the fleet tools, over cnats (libnats-dev, the official C client), which no header
// of lib/nats shows: a connection with its options (servers, credentials and TLS from files,
// reconnect forever), and the errors of cnats as tp::Error with what to do. Publishing
// (nats_publisher), consuming (nats_consumer) and stream checks (stream_check) use it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
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

struct NatsHandles;

// One connection (and, once asked for, its JetStream context), reconnecting forever. cnats's
// handles are lib/nats's own (cnats_glue.hpp): users of the link see none of its types.
class NatsLink {
 public:
  NatsLink(NatsSettings settings, NatsEventHandler on_event);
  ~NatsLink();
  NatsLink(const NatsLink&) = delete;
  NatsLink& operator=(const NatsLink&) = delete;
  NatsLink(NatsLink&&) = delete;
  NatsLink& operator=(NatsLink&&) = delete;

  [[nodiscard]] std::int64_t max_payload() const noexcept;
  [[nodiscard]] const NatsSettings& settings() const noexcept { return settings_; }
  // Closes (pending acks are not waited for: the caller did that), then destroys the adopted
  // subscriptions; gives up after 10 s, leaving both to the process's exit.
  void close() noexcept;

  // cnats's handles, for lib/nats's sources (defined in cnats_glue.hpp).
  [[nodiscard]] NatsHandles& cnats() noexcept { return *cnats_; }

 private:
  NatsSettings settings_;
  std::unique_ptr<NatsHandles> cnats_;
};

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

}  // namespace tp
