#include "nats/nats_consumer.hpp"

#include <fmt/format.h>
#include <nats/nats.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string_view>
#include <thread>
#include <utility>

#include "core/clock.hpp"
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

// How long a subscription to a durable push consumer still bound to another subscriber is
// asked for again: a reader that has just ended is seen gone by the server the consumer's
// leader is on only once its interest went away there (over the cluster's routes).
constexpr std::uint64_t bound_wait_ms = 10'000;

// cnats refuses to subscribe to a push consumer the server says is bound (its consumer info's
// push_bound: a subscriber has interest in its deliver subject) with this text, and no
// JetStream error code (nats.c js.c, _processConsInfo).
bool refused_as_bound(natsStatus status) {
  natsStatus last = NATS_OK;
  const char* detail = nats_GetLastError(&last);
  return status == NATS_ERR && detail != nullptr &&
         std::string_view(detail).find("consumer is already bound to a subscription") != std::string_view::npos;
}

// One subscription attempt, asked for again while the cluster does not answer (ask_jetstream).
natsStatus try_subscribe(jsCtx* jetstream, ConsumerKind kind, const ConsumerSettings& s, const Logger& log,
                         natsSubscription*& subscription, jsErrCode& code) {
  jsSubOptions options;
  set_consumer_options(options, kind, s);
  const bool pushed = kind == ConsumerKind::pushed;
  return ask_jetstream(
      pushed ? "subscribing to " + s.subject : fmt::format("the durable consumer {}", s.durable),
      [&] {
        code = static_cast<jsErrCode>(0);
        return pushed ? js_SubscribeSync(&subscription, jetstream, s.subject.c_str(), nullptr, &options, &code)
                      : js_PullSubscribe(&subscription, jetstream, s.subject.c_str(), s.durable.c_str(), nullptr,
                                         &options, &code);
      },
      [&](std::string_view text) { log.warn(text); });
}

// The subscription. A durable push consumer still bound to a subscriber (the reader before,
// just ended, not yet seen gone) is asked for again with a back-off up to bound_wait_ms, each
// try told with -v; still bound then, another reader has it: Error(busy).
natsSubscription* subscribe(jsCtx* jetstream, ConsumerKind kind, const ConsumerSettings& s, const Logger& log) {
  const std::uint64_t until = monotonic_ms() + bound_wait_ms;
  natsSubscription* subscription = nullptr;
  auto code = static_cast<jsErrCode>(0);
  natsStatus status = try_subscribe(jetstream, kind, s, log, subscription, code);
  for (unsigned tries = 1; refused_as_bound(status) && monotonic_ms() < until; ++tries) {
    const auto delay_ms = std::min<std::uint64_t>(std::uint64_t{100} << std::min(tries, 4U), until - monotonic_ms());
    log.verbose(
        fmt::format("the durable consumer {} is still bound to a subscriber (the reader before may have "
                    "just ended); asking again in {} ms (try {})",
                    s.durable, delay_ms, tries + 1));
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    status = try_subscribe(jetstream, kind, s, log, subscription, code);
  }
  if (refused_as_bound(status)) {
    throw Error(ExitCode::busy, fmt::format("the durable consumer {} on stream {} is in use: another reader is "
                                            "subscribed to it (still after {} s); one reader per --durable at a time",
                                            s.durable, s.stream, bound_wait_ms / 1000));
  }
  const bool pushed = kind == ConsumerKind::pushed;
  if (status == NATS_NOT_FOUND || code == JSStreamNotFoundErr) {
    throw Error(ExitCode::not_found, fmt::format("no JetStream stream {} (--stream)", s.stream));
  }
  check_nats(status, pushed ? fmt::format("subscribing to {} in stream {}", s.subject, s.stream)
                            : fmt::format("the durable consumer {} on stream {}", s.durable, s.stream));
  return subscription;
}

// A durable consumer is asked by name: a pull subscription bound to an existing durable has no
// consumer name in cnats 3.4.1 (natsSubscription_GetConsumerInfo answers "Invalid
// Subscription"), nor has one bound to an existing push consumer.
std::optional<ConsumerState> consumer_state(natsSubscription* subscription, jsCtx* jetstream, const ConsumerSettings& s,
                                            std::string& error) {
  jsConsumerInfo* info = nullptr;
  auto code = static_cast<jsErrCode>(0);
  const natsStatus status =
      s.durable.empty() ? natsSubscription_GetConsumerInfo(&info, subscription, nullptr, &code)
                        : js_GetConsumerInfo(&info, jetstream, s.stream.c_str(), s.durable.c_str(), nullptr, &code);
  if (status != NATS_OK) {
    error = nats_error_text(status);
    return std::nullopt;
  }
  const ConsumerState state{.undelivered = info->NumPending,
                            .unacknowledged = info->NumAckPending,
                            .ack_floor = info->AckFloor.Stream,
                            .last_delivered = info->Delivered.Stream,
                            .deliveries = info->Delivered.Consumer,
                            .redelivered = info->NumRedelivered,
                            .waiting_requests = info->NumWaiting};
  jsConsumerInfo_Destroy(info);
  return state;
}

// What the client holds for one subscription before it drops messages (a slow consumer): many
// messages of up to max_payload each (a chunk of records is large), well above what one fetch
// asks for (a fetch the server answers late may overlap the next).
constexpr int pending_bytes_held = 256 * 1024 * 1024;

// The most one fetch asks for; at least two of the server's largest messages.
std::int64_t fetch_max_bytes(natsConnection* connection) {
  constexpr std::int64_t budget = std::int64_t{32} * 1024 * 1024;
  const std::int64_t max_payload = connection != nullptr ? natsConnection_GetMaxPayload(connection) : 0;
  return std::max(budget, 2 * max_payload);
}

}  // namespace

NatsConsumer::NatsConsumer(NatsLink& link, ConsumerKind kind, ConsumerSettings settings, const Logger& log)
    : link_(link), settings_(std::move(settings)) {
  natsSubscription* subscription = subscribe(jetstream_of(link_), kind, settings_, log);
  link_.cnats().subscriptions.push_back(subscription);  // destroyed after the connection closed
  subscription_ = subscription;
  // Every kind: the default (64 MiB) is less than one fetch of 1024 large chunks was.
  natsSubscription_SetPendingLimits(subscription, -1, pending_bytes_held);
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
  jsFetchRequest request;
  jsFetchRequest_Init(&request);
  request.Batch = want;
  request.MaxBytes = fetch_max_bytes(link_.cnats().connection);
  request.Expires = std::int64_t{timeout_ms} * 1'000'000;
  const natsStatus status = natsSubscription_FetchRequest(&list, sub(subscription_), &request);
  Fetched fetched;
  if (status != NATS_OK && status != NATS_TIMEOUT) fetched.error = nats_error_text(status);
  std::int64_t dropped = 0;
  if (natsSubscription_GetDropped(sub(subscription_), &dropped) == NATS_OK && dropped > dropped_) {
    fetched.dropped = dropped - std::exchange(dropped_, dropped);
  }
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
  const auto state = consumer_state(sub(subscription_), jetstream_of(link_), settings_, error);
  if (!state) {
    asking.failed(error);
    return false;
  }
  asking.succeeded();
  last_state_ = state;
  return state->undelivered == 0 && (!acknowledged_too || state->unacknowledged == 0);
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
