// Reading a JetStream stream (trace-pull, trace-store): a consumer from where the settings
// say, its messages one by one (pushed by the server) or fetched in batches (pulled), and
// whether it has caught up with what the stream held.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/log.hpp"
#include "nats/nats_link.hpp"
#include "nats/nats_message.hpp"

namespace tp {

enum class DeliverFrom : std::uint8_t { all, new_only, sequence, time };

struct ConsumerSettings {
  std::string stream;
  std::string subject;
  std::string durable;  // empty: an ordered ephemeral consumer (pushed only)
  DeliverFrom from = DeliverFrom::all;
  std::uint64_t start_seq = 0;       // DeliverFrom::sequence
  std::int64_t start_time_ns = 0;    // DeliverFrom::time, since 1970
  std::int64_t max_ack_pending = 0;  // a durable's: messages delivered and not yet acknowledged
  std::int64_t ack_wait_s = 0;       // a durable's: redelivered when not acknowledged by then
  bool headers_only = false;         // the messages' headers without their payloads (trace-lab's board figures)
};

// Pushed: the server sends, next() takes one (trace-pull). Pulled: fetch() asks for a batch
// (trace-store's durable, which several stores may share).
enum class ConsumerKind : std::uint8_t { pushed, pulled };

// What a durable consumer's server says it holds for its readers (consumer info).
struct ConsumerState {
  std::uint64_t undelivered = 0;      // num_pending: not yet delivered
  std::int64_t unacknowledged = 0;    // num_ack_pending: delivered, not acknowledged by any reader
  std::uint64_t ack_floor = 0;        // stream sequence up to which everything is acknowledged
  std::uint64_t last_delivered = 0;   // stream sequence of the last message delivered
  std::uint64_t deliveries = 0;       // consumer sequence: deliveries, redeliveries included
  std::int64_t redelivered = 0;       // messages delivered more than once, not yet acknowledged
  std::int64_t waiting_requests = 0;  // pull requests waiting at the server
};

// One consumer. The link owns its subscription (destroyed after the connection closed).
class NatsConsumer {
 public:
  NatsConsumer(NatsLink& link, ConsumerKind kind, ConsumerSettings settings, const Logger& log);

  struct Next {
    enum class What : std::uint8_t { message, timeout, slow_consumer } what = What::timeout;
    NatsMessage message;
  };
  // The next pushed message, within `timeout_ms`; throws Error when the subscription failed.
  Next next(int timeout_ms);

  struct Fetched {
    std::vector<NatsMessage> messages;
    std::optional<std::string> error;  // a failure other than a timeout
    std::int64_t dropped = 0;          // messages the client dropped since the last fetch (see fetch)
  };
  // Up to `want` pulled messages and at most fetch_max_bytes of them (so that what the server
  // sends fits what the client holds for the subscription), waiting up to `timeout_ms` for the
  // first. A message the client dropped all the same (it held too much) is not acknowledged: the
  // server sends it again after the ack wait; `dropped` says how many.
  Fetched fetch(int want, int timeout_ms);

  // Messages the client holds, not yet taken; nothing when cnats does not say.
  [[nodiscard]] std::optional<int> queued() const noexcept;
  // Whether the consumer has delivered everything the stream holds for it (and the client has
  // nothing queued) and, with `acknowledged_too`, everything delivered is acknowledged (by
  // whichever reader sharing the durable took it). A failure to ask goes to `asking`.
  bool caught_up(RepeatedRequest& asking, bool acknowledged_too);
  // What the server said when caught_up last asked it (nothing before it answered).
  [[nodiscard]] const std::optional<ConsumerState>& last_state() const noexcept { return last_state_; }
  // Hands back (nak: delivered again after `delay_ms`) the messages the client holds not yet
  // taken, then flushes the connection (best effort, up to 2 s) so they, and the naks given
  // before, reach the server before it closes: else they come after the ack wait.
  void hand_back_queued(std::int64_t delay_ms) noexcept;

 private:
  NatsLink& link_;
  ConsumerSettings settings_;
  void* subscription_ = nullptr;
  std::int64_t dropped_ = 0;  // by the client, as of the last fetch
  std::optional<ConsumerState> last_state_;
};

}  // namespace tp
