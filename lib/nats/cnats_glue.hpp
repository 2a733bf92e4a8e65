// What lib/nats's sources share over cnats: the link's handles, the errors of a cnats call and
// JetStream's asking again. For lib/nats's .cpp files only, each including <nats/nats.h>
// before it: cnats's types stay out of every header the fleet's users see.
#pragma once

#ifndef NATS_H_
#error "include <nats/nats.h> before nats/cnats_glue.hpp (lib/nats's sources only)"
#endif

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tp {

class NatsLink;
struct NatsEventSink;  // nats_link.cpp: what the connection's callbacks reach

// A NatsLink's handles (NatsLink::cnats()).
struct NatsHandles {
  NatsHandles();
  ~NatsHandles();
  NatsHandles(const NatsHandles&) = delete;
  NatsHandles& operator=(const NatsHandles&) = delete;
  NatsHandles(NatsHandles&&) = delete;
  NatsHandles& operator=(NatsHandles&&) = delete;

  // What the connection's callbacks reach, found by events_key (nats_link.cpp: EventSinks).
  std::shared_ptr<NatsEventSink> events;
  std::uintptr_t events_key = 0;
  natsOptions* options = nullptr;
  natsConnection* connection = nullptr;
  jsCtx* jetstream = nullptr;
  // Destroyed after the connection closed (its reader thread joined), never before: cnats
  // 3.4.1's reader takes a subscription out of the connection's table without a reference and
  // then locks it, so destroying one while messages or heartbeats still come for it frees the
  // mutex the reader is about to take (SIGSEGV in natsConn_processMsg: nats.c issue 637, fixed
  // in 3.6.0).
  std::vector<natsSubscription*> subscriptions;
};

// The JetStream context of `link`, created once (jsOptions from its settings): async publish
// acks go to `ack_handler`.
jsCtx* jetstream_of(NatsLink& link, jsPubAckHandler ack_handler = nullptr, void* closure = nullptr,
                    std::int64_t max_pending = 0);

// The text of a cnats status with the library's last error detail.
[[nodiscard]] std::string nats_error_text(natsStatus status);
// Throws Error for a failed cnats call: `what` is what was being done.
void check_nats(natsStatus status, std::string_view what);

// Makes a JetStream API request (`request`, a cnats call) again while it times out or finds
// no responders: a cluster that has just started, or is electing a stream leader after a node
// died, answers late for a while. Up to 8 tries with a back-off (about 20 s of waiting), each
// retry told to `warn` with `what`; returns the last status.
natsStatus ask_jetstream(std::string_view what, const std::function<natsStatus()>& request,
                         const std::function<void(std::string_view)>& warn);

}  // namespace tp
