// WebSocket framing (RFC 6455 section 5) for the server side: frame headers for what we
// send (unmasked, one per message, so one framed message can go to every client as is),
// and a push-style parser for what clients send (masked; fragments reassembled; control
// frames interleaved; protocol violations reported with the close code to send).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tp::serve {

enum class Opcode : std::uint8_t { continuation = 0, text = 1, binary = 2, close = 8, ping = 9, pong = 10 };

// Close codes (RFC 6455 section 7.4.1).
namespace close_code {
inline constexpr std::uint16_t normal = 1000;
inline constexpr std::uint16_t going_away = 1001;
inline constexpr std::uint16_t protocol_error = 1002;
inline constexpr std::uint16_t invalid_payload = 1007;
inline constexpr std::uint16_t policy_violation = 1008;
inline constexpr std::uint16_t message_too_big = 1009;
inline constexpr std::uint16_t internal_error = 1011;
inline constexpr std::uint16_t try_again_later = 1013;  // IANA's registry (RFC 6455 section 11.7)
}  // namespace close_code

// The largest header a frame can have (2 + 8 bytes of length, no mask from a server).
inline constexpr std::size_t max_server_header = 10;

void append_frame_header(std::string& out, Opcode opcode, std::uint64_t payload_size);
std::string make_frame(Opcode opcode, std::string_view payload);
std::string make_close_frame(std::uint16_t code, std::string_view reason);

struct ClientFrame {
  Opcode opcode;             // text or binary (a whole message), close, ping or pong
  std::string_view payload;  // valid until the next feed
  std::uint16_t close_code;  // for close: the code the client sent (1005 when none)
};

struct FrameViolation {
  std::uint16_t close_code;
  std::string message;
};

class FrameParser {
 public:
  using Handler = std::function<void(const ClientFrame&)>;

  // max_message: the largest message (all fragments together) accepted.
  explicit FrameParser(std::size_t max_message) : max_message_(max_message) {}

  // Feeds bytes from the socket. Calls on_frame for each complete message or control
  // frame. After a violation the connection must be closed: later feeds do nothing.
  std::optional<FrameViolation> feed(std::span<const std::uint8_t> bytes, const Handler& on_frame);

  [[nodiscard]] std::size_t buffered() const noexcept { return buffer_.size() - consumed_; }

 private:
  std::optional<FrameViolation> parse_one(const Handler& on_frame, bool& progressed);
  std::optional<FrameViolation> deliver(Opcode opcode, bool fin, std::span<std::uint8_t> payload,
                                        const Handler& on_frame);

  std::size_t max_message_;
  std::vector<std::uint8_t> buffer_;
  std::size_t consumed_ = 0;
  std::string message_;  // fragments of a message so far
  std::optional<Opcode> fragmented_;
  bool failed_ = false;
};

}  // namespace tp::serve
