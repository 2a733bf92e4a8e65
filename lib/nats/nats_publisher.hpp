// Publishing to JetStream asynchronously (trace-ship): messages go out with their headers
// (Nats-Msg-Id makes a resend one message), and the server's answer to each comes back to a
// handler on cnats's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "nats/nats_link.hpp"
#include "nats/nats_message.hpp"

namespace tp {

// The server's answer to one publish: stored (or a duplicate of one stored), or why not.
struct PublishOutcome {
  bool stored = false;
  bool duplicate = false;
  std::string error;  // when not stored: cnats's status text, and the server's text if it gave one
};
// Called on cnats's thread with the message published (its headers say which it was).
using PublishAckHandler = std::function<void(const NatsMessage& message, const PublishOutcome& outcome)>;

class NatsPublisher {
 public:
  // Opens the link's JetStream context for async publishing: at most `max_pending` messages
  // unanswered, each answered within `ack_timeout_ms` (or told timed out).
  NatsPublisher(NatsLink& link, PublishAckHandler on_ack, std::int64_t max_pending, std::int64_t ack_timeout_ms);
  NatsPublisher(const NatsPublisher&) = delete;
  NatsPublisher& operator=(const NatsPublisher&) = delete;
  NatsPublisher(NatsPublisher&&) = delete;
  NatsPublisher& operator=(NatsPublisher&&) = delete;
  ~NatsPublisher() = default;

  // Hands `message` to the library; its answer goes to the handler. Why not, when the library
  // did not take it (then no answer comes).
  [[nodiscard]] std::optional<std::string> publish(OutgoingMessage message);

  // The link it publishes on (the stream's check while publishing asks on it too).
  [[nodiscard]] NatsLink& link() const noexcept { return link_; }

  // For cnats's callback: the handler.
  void answered(const NatsMessage& message, const PublishOutcome& outcome) const { on_ack_(message, outcome); }

 private:
  NatsLink& link_;
  PublishAckHandler on_ack_;
  std::int64_t ack_timeout_ms_;
};

}  // namespace tp
