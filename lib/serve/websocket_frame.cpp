#include "serve/websocket_frame.hpp"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>

namespace tp::serve {

void append_frame_header(std::string& out, Opcode opcode, std::uint64_t payload_size) {
  out.push_back(static_cast<char>(0x80U | static_cast<unsigned>(opcode)));  // FIN, no RSV bits
  if (payload_size < 126) {
    out.push_back(static_cast<char>(payload_size));
  } else if (payload_size <= 0xFFFF) {
    out.push_back(static_cast<char>(126));
    out.push_back(static_cast<char>(payload_size >> 8U));
    out.push_back(static_cast<char>(payload_size & 0xFFU));
  } else {
    out.push_back(static_cast<char>(127));
    for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>((payload_size >> shift) & 0xFFU));
  }
}

std::string make_frame(Opcode opcode, std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + max_server_header);
  append_frame_header(out, opcode, payload.size());
  out.append(payload);
  return out;
}

std::string make_close_frame(std::uint16_t code, std::string_view reason) {
  std::string payload;
  payload.push_back(static_cast<char>(code >> 8U));
  payload.push_back(static_cast<char>(code & 0xFFU));
  payload.append(reason.substr(0, 123));  // a control frame carries at most 125 bytes
  return make_frame(Opcode::close, payload);
}

namespace {

bool is_control(Opcode opcode) noexcept {
  return (static_cast<unsigned>(opcode) & 0x8U) != 0;
}

bool known_opcode(unsigned opcode) noexcept {
  return opcode <= 2 || (opcode >= 8 && opcode <= 10);
}

// RFC 6455 section 7.4: codes a peer may send in a close frame.
bool valid_close_code(std::uint16_t code) noexcept {
  if (code >= 3000 && code <= 4999) return true;
  return code >= 1000 && code <= 1014 && code != 1004 && code != 1005 && code != 1006;
}

bool valid_utf8(std::string_view text) noexcept {
  return simdjson::validate_utf8(text.data(), text.size());
}

FrameViolation violation(std::uint16_t code, std::string message) {
  return FrameViolation{code, std::move(message)};
}

}  // namespace

std::optional<FrameViolation> FrameParser::feed(std::span<const std::uint8_t> bytes, const Handler& on_frame) {
  if (failed_) return std::nullopt;
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
  std::optional<FrameViolation> result;
  bool progressed = true;
  while (progressed && !result) result = parse_one(on_frame, progressed);
  if (result) {
    failed_ = true;
    buffer_.clear();
    consumed_ = 0;
    return result;
  }
  buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(consumed_));
  consumed_ = 0;
  return std::nullopt;
}

std::optional<FrameViolation> FrameParser::parse_one(const Handler& on_frame, bool& progressed) {
  progressed = false;
  const std::span<std::uint8_t> pending(buffer_.data() + consumed_, buffer_.size() - consumed_);
  if (pending.size() < 2) return std::nullopt;
  const bool fin = (pending[0] & 0x80U) != 0;
  const unsigned rsv = pending[0] & 0x70U;
  const unsigned raw_opcode = pending[0] & 0x0FU;
  const bool masked = (pending[1] & 0x80U) != 0;
  std::uint64_t length = pending[1] & 0x7FU;
  if (rsv != 0) return violation(close_code::protocol_error, "reserved bits set (no extension was negotiated)");
  if (!known_opcode(raw_opcode)) return violation(close_code::protocol_error, fmt::format("opcode {}", raw_opcode));
  if (!masked) return violation(close_code::protocol_error, "client frames must be masked (RFC 6455 5.1)");
  const auto opcode = static_cast<Opcode>(raw_opcode);
  std::size_t header = 2;
  if (length == 126) {
    if (pending.size() < 4) return std::nullopt;
    length = (std::uint64_t{pending[2]} << 8U) | pending[3];
    header = 4;
  } else if (length == 127) {
    if (pending.size() < 10) return std::nullopt;
    length = 0;
    for (std::size_t i = 2; i < 10; ++i) length = (length << 8U) | pending[i];
    if ((length >> 63U) != 0) return violation(close_code::protocol_error, "64-bit length with the top bit set");
    header = 10;
  }
  if (is_control(opcode) && (!fin || length > 125)) {
    return violation(close_code::protocol_error, "control frames must be whole and at most 125 bytes");
  }
  const std::size_t so_far = fragmented_ ? message_.size() : 0;
  if (!is_control(opcode) && length > max_message_ - std::min(so_far, max_message_)) {
    return violation(close_code::message_too_big,
                     fmt::format("message of {} bytes or more (the limit is {})", so_far + length, max_message_));
  }
  header += 4;  // masking key
  if (pending.size() < header || pending.size() - header < length) return std::nullopt;
  const std::span<std::uint8_t> payload = pending.subspan(header, static_cast<std::size_t>(length));
  const std::uint8_t* key = pending.data() + header - 4;
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] ^= key[i % 4];
  consumed_ += header + payload.size();
  progressed = true;
  return deliver(opcode, fin, payload, on_frame);
}

std::optional<FrameViolation> FrameParser::deliver(Opcode opcode, bool fin, std::span<std::uint8_t> payload,
                                                   const Handler& on_frame) {
  const std::string_view text(reinterpret_cast<const char*>(payload.data()), payload.size());
  if (opcode == Opcode::close) {
    std::uint16_t code = 1005;  // "no status received"
    if (payload.size() == 1) return violation(close_code::protocol_error, "close frame with a 1-byte payload");
    if (payload.size() >= 2) {
      code = static_cast<std::uint16_t>((payload[0] << 8U) | payload[1]);
      if (!valid_close_code(code)) return violation(close_code::protocol_error, fmt::format("close code {}", code));
      if (!valid_utf8(text.substr(2))) return violation(close_code::invalid_payload, "close reason is not UTF-8");
    }
    on_frame(ClientFrame{opcode, text.size() >= 2 ? text.substr(2) : std::string_view{}, code});
    return std::nullopt;
  }
  if (is_control(opcode)) {
    on_frame(ClientFrame{opcode, text, 0});
    return std::nullopt;
  }
  if (opcode == Opcode::continuation) {
    if (!fragmented_) return violation(close_code::protocol_error, "continuation frame without a message");
  } else if (fragmented_) {
    return violation(close_code::protocol_error, "new message before the last one was finished");
  }
  if (!fin || fragmented_) {
    if (!fragmented_) fragmented_ = opcode;
    message_.append(text);
    if (!fin) return std::nullopt;
    const Opcode whole = *fragmented_;
    fragmented_.reset();
    if (whole == Opcode::text && !valid_utf8(message_)) {
      return violation(close_code::invalid_payload, "text message is not valid UTF-8");
    }
    const std::string message = std::move(message_);
    message_.clear();
    on_frame(ClientFrame{whole, message, 0});
    return std::nullopt;
  }
  if (opcode == Opcode::text && !valid_utf8(text)) {
    return violation(close_code::invalid_payload, "text message is not valid UTF-8");
  }
  on_frame(ClientFrame{opcode, text, 0});
  return std::nullopt;
}

}  // namespace tp::serve
