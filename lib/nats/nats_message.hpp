// A NATS message as lib/nats hands it out: one received (its data, subject and headers, its
// acknowledgement) and one being made to publish (its payload and headers). Each owns its
// cnats message; the handle is lib/nats's own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tp {

class NatsMessage {
 public:
  NatsMessage() = default;
  // Takes a cnats message (natsMsg*) over: for lib/nats's sources.
  explicit NatsMessage(void* raw) noexcept : raw_(raw) {}
  ~NatsMessage();
  NatsMessage(NatsMessage&& other) noexcept;
  NatsMessage& operator=(NatsMessage&& other) noexcept;
  NatsMessage(const NatsMessage&) = delete;
  NatsMessage& operator=(const NatsMessage&) = delete;

  [[nodiscard]] std::string_view data() const noexcept;
  [[nodiscard]] std::string_view subject() const noexcept;
  // The value of header `name`, if the message has it.
  [[nodiscard]] std::optional<std::string_view> header(const char* name) const noexcept;
  // How many messages the consumer still had for its reader after this one (JetStream's
  // metadata), if the message says.
  [[nodiscard]] std::optional<std::uint64_t> pending_after() const noexcept;
  // JetStream acknowledgements: done with it; or to be delivered again after `delay_ms`.
  void ack() noexcept;
  void nak_with_delay(std::int64_t delay_ms) noexcept;

 private:
  void* raw_ = nullptr;
};

// A message to publish: `payload` copied (the caller's buffer may go), headers set one by one.
class OutgoingMessage {
 public:
  OutgoingMessage(const std::string& subject, std::string_view payload);
  ~OutgoingMessage();
  OutgoingMessage(OutgoingMessage&& other) noexcept;
  OutgoingMessage& operator=(OutgoingMessage&&) = delete;
  OutgoingMessage(const OutgoingMessage&) = delete;
  OutgoingMessage& operator=(const OutgoingMessage&) = delete;

  // Throws Error when the message could not be made (said here, not where it was made: that
  // may be under a lock).
  void check_made() const;
  void set_header(const char* name, const std::string& value);
  // The cnats message (natsMsg*), for lib/nats's publisher: it may take it (then null).
  [[nodiscard]] void*& raw() noexcept { return raw_; }

 private:
  void* raw_ = nullptr;
  int status_ = 0;
};

}  // namespace tp
