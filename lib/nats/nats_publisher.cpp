#include "nats/nats_publisher.hpp"

#include <fmt/format.h>
#include <nats/nats.h>

#include <utility>

#include "nats/cnats_glue.hpp"

namespace tp {
namespace {

// cnats calls this on its own thread for every publish's ack or failure; the message is ours
// to destroy (its copy of the payload).
void on_publish_ack(jsCtx*, natsMsg* message, jsPubAck* ack, jsPubAckErr* error, void* closure) {
  const NatsMessage owned(message);
  if (message == nullptr) return;
  PublishOutcome outcome;
  if (ack != nullptr && error == nullptr) {
    outcome.stored = true;
    outcome.duplicate = ack->Duplicate;
  } else {
    outcome.error = fmt::format(
        "{}{}", natsStatus_GetText(error != nullptr ? error->Err : NATS_ERR),
        error != nullptr && error->ErrText != nullptr ? fmt::format(" ({})", error->ErrText) : std::string());
  }
  static_cast<const NatsPublisher*>(closure)->answered(owned, outcome);
}

}  // namespace

NatsPublisher::NatsPublisher(NatsLink& link, PublishAckHandler on_ack, std::int64_t max_pending,
                             std::int64_t ack_timeout_ms)
    : link_(link), on_ack_(std::move(on_ack)), ack_timeout_ms_(ack_timeout_ms) {
  jetstream_of(link_, on_publish_ack, this, max_pending);
}

std::optional<std::string> NatsPublisher::publish(OutgoingMessage message) {
  jsPubOptions options;
  jsPubOptions_Init(&options);
  options.MaxWait = ack_timeout_ms_;
  auto* raw = static_cast<natsMsg*>(message.raw());
  const natsStatus status = js_PublishMsgAsync(jetstream_of(link_), &raw, &options);
  message.raw() = raw;  // null when the library took it
  if (status != NATS_OK) return nats_error_text(status);
  return std::nullopt;
}

}  // namespace tp
