#include "nats/nats_consumer.hpp"

#include <fmt/format.h>
#include <nats/nats.h>

#include <functional>
#include <utility>

#include "core/error.hpp"
#include "nats/cnats_glue.hpp"

namespace tp {
namespace {

natsSubscription* sub(void* subscription) noexcept {
  return static_cast<natsSubscription*>(subscription);
}

void set_deliver_policy(jsConsumerConfig& config, const ConsumerSettings& s) {
  switch (s.from) {
    case DeliverFrom::all:
      config.DeliverPolicy = js_DeliverAll;
      break;
    case DeliverFrom::new_only:
      config.DeliverPolicy = js_DeliverNew;
      break;
    case DeliverFrom::sequence:
      config.DeliverPolicy = js_DeliverByStartSequence;
      config.OptStartSeq = s.start_seq;
      break;
    case DeliverFrom::time:
      config.DeliverPolicy = js_DeliverByStartTime;
      config.OptStartTime = s.start_time_ns;
      break;
  }
}

// The options of the consumer: a durable acknowledges each message explicitly.
void set_consumer_options(jsSubOptions& options, ConsumerKind kind, const ConsumerSettings& s) {
  jsSubOptions_Init(&options);
  options.Stream = s.stream.c_str();
  set_deliver_policy(options.Config, s);
  options.Config.HeadersOnly = s.headers_only;
  const bool pushed = kind == ConsumerKind::pushed;
  if (pushed && s.durable.empty()) {
    options.Ordered = true;  // the library re-creates it at the right place after a hiccup
    return;
  }
  if (pushed) options.Config.Durable = s.durable.c_str();  // a pulled one is named by js_PullSubscribe
  options.Config.AckPolicy = js_AckExplicit;
  options.Config.MaxAckPending = s.max_ack_pending;
  options.Config.AckWait = s.ack_wait_s * 1'000'000'000;
  options.ManualAck = pushed;
}

// The subscription, asked for again while the cluster does not answer (ask_jetstream).
natsSubscription* subscribe(jsCtx* jetstream, ConsumerKind kind, const ConsumerSettings& s, const Logger& log) {
  jsSubOptions options;
  set_consumer_options(options, kind, s);
  natsSubscription* subscription = nullptr;
  auto code = static_cast<jsErrCode>(0);
  const bool pushed = kind == ConsumerKind::pushed;
  const natsStatus status = ask_jetstream(
      pushed ? "subscribing to " + s.subject : fmt::format("the durable consumer {}", s.durable),
      [&] {
        code = static_cast<jsErrCode>(0);
        return pushed ? js_SubscribeSync(&subscription, jetstream, s.subject.c_str(), nullptr, &options, &code)
                      : js_PullSubscribe(&subscription, jetstream, s.subject.c_str(), s.durable.c_str(), nullptr,
                                         &options, &code);
      },
      [&](std::string_view text) { log.warn(text); });
  if (status == NATS_NOT_FOUND || code == JSStreamNotFoundErr) {
    throw Error(ExitCode::not_found, fmt::format("no JetStream stream {} (--stream)", s.stream));
  }
  check_nats(status, pushed ? fmt::format("subscribing to {} in stream {}", s.subject, s.stream)
                            : fmt::format("the durable consumer {} on stream {}", s.durable, s.stream));
  return subscription;
}

// What a consumer still holds for its readers: messages not yet delivered, and delivered but
// not acknowledged.
struct ConsumerBacklog {
  std::uint64_t undelivered = 0;
  std::int64_t unacknowledged = 0;
};

// A durable consumer is asked by name: a pull subscription bound to an existing durable has no
// consumer name in cnats 3.4.1 (natsSubscription_GetConsumerInfo answers "Invalid
// Subscription"), nor has one bound to an existing push consumer.
std::optional<ConsumerBacklog> consumer_backlog(natsSubscription* subscription, jsCtx* jetstream,
                                                const ConsumerSettings& s, std::string& error) {
  jsConsumerInfo* info = nullptr;
  auto code = static_cast<jsErrCode>(0);
  const natsStatus status =
      s.durable.empty() ? natsSubscription_GetConsumerInfo(&info, subscription, nullptr, &code)
                        : js_GetConsumerInfo(&info, jetstream, s.stream.c_str(), s.durable.c_str(), nullptr, &code);
  if (status != NATS_OK) {
    error = nats_error_text(status);
    return std::nullopt;
  }
  const ConsumerBacklog backlog{info->NumPending, info->NumAckPending};
  jsConsumerInfo_Destroy(info);
  return backlog;
}

}  // namespace

NatsConsumer::NatsConsumer(NatsLink& link, ConsumerKind kind, ConsumerSettings settings, const Logger& log)
    : link_(link), settings_(std::move(settings)) {
  natsSubscription* subscription = subscribe(jetstream_of(link_), kind, settings_, log);
  link_.cnats().subscriptions.push_back(subscription);  // destroyed after the connection closed
  subscription_ = subscription;
  if (kind == ConsumerKind::pushed) {
    natsSubscription_SetPendingLimits(subscription, -1, 256 * 1024 * 1024);  // bytes: chunks are large
  }
}

NatsConsumer::Next NatsConsumer::next(int timeout_ms) {
  natsMsg* raw = nullptr;
  const natsStatus status = natsSubscription_NextMsg(&raw, sub(subscription_), timeout_ms);
  if (status == NATS_TIMEOUT) return {};
  if (status == NATS_SLOW_CONSUMER) return {Next::What::slow_consumer, NatsMessage()};
  check_nats(status, "reading from JetStream");
  return {Next::What::message, NatsMessage(raw)};
}

NatsConsumer::Fetched NatsConsumer::fetch(int want, int timeout_ms) {
  natsMsgList list{nullptr, 0};
  auto code = static_cast<jsErrCode>(0);
  const natsStatus status = natsSubscription_Fetch(&list, sub(subscription_), want, timeout_ms, &code);
  Fetched fetched;
  if (status != NATS_OK && status != NATS_TIMEOUT) fetched.error = nats_error_text(status);
  fetched.messages.reserve(static_cast<std::size_t>(list.Count));
  for (int i = 0; i < list.Count; ++i) fetched.messages.emplace_back(std::exchange(list.Msgs[i], nullptr));
  natsMsgList_Destroy(&list);
  return fetched;
}

std::optional<int> NatsConsumer::queued() const noexcept {
  int messages = 0;
  int bytes = 0;
  if (natsSubscription_GetPending(sub(subscription_), &messages, &bytes) != NATS_OK) return std::nullopt;
  return messages;
}

bool NatsConsumer::caught_up(RepeatedRequest& asking, bool acknowledged_too) {
  if (const auto held = queued(); held && *held > 0) return false;
  std::string error;
  const auto backlog = consumer_backlog(sub(subscription_), jetstream_of(link_), settings_, error);
  if (!backlog) {
    asking.failed(error);
    return false;
  }
  asking.succeeded();
  return backlog->undelivered == 0 && (!acknowledged_too || backlog->unacknowledged == 0);
}

void NatsConsumer::hand_back_queued(std::int64_t delay_ms) noexcept {
  natsMsg* raw = nullptr;
  for (int left = queued().value_or(0); left > 0 && natsSubscription_NextMsg(&raw, sub(subscription_), 1) == NATS_OK;
       --left) {
    NatsMessage(raw).nak_with_delay(delay_ms);
  }
  if (link_.cnats().connection != nullptr) natsConnection_FlushTimeout(link_.cnats().connection, 2000);
}

}  // namespace tp
