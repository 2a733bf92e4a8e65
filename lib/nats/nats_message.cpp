#include "nats/nats_message.hpp"

#include <nats/nats.h>

#include <utility>

#include "nats/cnats_glue.hpp"

namespace tp {
namespace {

natsMsg* msg(void* raw) noexcept {
  return static_cast<natsMsg*>(raw);
}

}  // namespace

NatsMessage::~NatsMessage() {
  natsMsg_Destroy(msg(raw_));
}

NatsMessage::NatsMessage(NatsMessage&& other) noexcept : raw_(std::exchange(other.raw_, nullptr)) {}

NatsMessage& NatsMessage::operator=(NatsMessage&& other) noexcept {
  if (this != &other) {
    natsMsg_Destroy(msg(raw_));
    raw_ = std::exchange(other.raw_, nullptr);
  }
  return *this;
}

std::string_view NatsMessage::data() const noexcept {
  return {natsMsg_GetData(msg(raw_)), static_cast<std::size_t>(natsMsg_GetDataLength(msg(raw_)))};
}

std::string_view NatsMessage::subject() const noexcept {
  return natsMsg_GetSubject(msg(raw_));
}

std::optional<std::string_view> NatsMessage::header(const char* name) const noexcept {
  const char* value = nullptr;
  if (raw_ == nullptr || natsMsgHeader_Get(msg(raw_), name, &value) != NATS_OK) return std::nullopt;
  return std::string_view(value);
}

std::optional<std::uint64_t> NatsMessage::pending_after() const noexcept {
  jsMsgMetaData* meta = nullptr;
  if (natsMsg_GetMetaData(&meta, msg(raw_)) != NATS_OK) return std::nullopt;
  const std::uint64_t pending = meta->NumPending;
  jsMsgMetaData_Destroy(meta);
  return pending;
}

void NatsMessage::ack() noexcept {
  natsMsg_Ack(msg(raw_), nullptr);
}

void NatsMessage::nak_with_delay(std::int64_t delay_ms) noexcept {
  natsMsg_NakWithDelay(msg(raw_), delay_ms, nullptr);
}

OutgoingMessage::OutgoingMessage(const std::string& subject, std::string_view payload) {
  natsMsg* made = nullptr;
  status_ = natsMsg_Create(&made, subject.c_str(), nullptr, payload.data(), static_cast<int>(payload.size()));
  raw_ = made;
}

OutgoingMessage::~OutgoingMessage() {
  natsMsg_Destroy(msg(raw_));  // nothing when the publisher's library took it
}

OutgoingMessage::OutgoingMessage(OutgoingMessage&& other) noexcept
    : raw_(std::exchange(other.raw_, nullptr)), status_(other.status_) {}

void OutgoingMessage::check_made() const {
  check_nats(static_cast<natsStatus>(status_), "making a message");
}

void OutgoingMessage::set_header(const char* name, const std::string& value) {
  natsMsgHeader_Set(msg(raw_), name, value.c_str());
}

}  // namespace tp
