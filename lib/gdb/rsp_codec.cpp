#include "gdb/rsp_codec.hpp"

#include <charconv>

#include "core/number.hpp"

namespace tp::gdb {
namespace {

constexpr char hex_digits[] = "0123456789abcdef";

bool needs_escape(char c) noexcept {
  return c == '$' || c == '#' || c == '}' || c == '*';
}

// RLE counts are printable characters; the protocol forbids '#' and '$' as counts.
constexpr std::uint8_t rle_bias = 29;

}  // namespace

std::uint8_t checksum(std::string_view bytes) noexcept {
  unsigned sum = 0;
  for (const char c : bytes) sum += static_cast<unsigned char>(c);
  return static_cast<std::uint8_t>(sum & 0xffU);
}

std::string frame_packet(std::string_view payload) {
  std::string body;
  body.reserve(payload.size() + 4);
  for (const char c : payload) {
    if (needs_escape(c)) {
      body.push_back('}');
      body.push_back(static_cast<char>(c ^ 0x20));
    } else {
      body.push_back(c);
    }
  }
  const std::uint8_t sum = checksum(body);
  std::string framed;
  framed.reserve(body.size() + 4);
  framed.push_back('$');
  framed += body;
  framed.push_back('#');
  framed.push_back(hex_digits[sum >> 4U]);
  framed.push_back(hex_digits[sum & 0x0fU]);
  return framed;
}

void RspParser::body_byte(std::uint8_t byte) {
  if (payload_.size() >= max_payload) {
    broken_ = true;
    return;
  }
  payload_.push_back(static_cast<char>(byte));
}

void RspParser::finish(std::vector<RspEvent>& out) {
  state_ = State::idle;
  if (broken_) {
    ++malformed_;
    return;
  }
  if (run_length_) ++run_length_packets_;
  out.push_back(
      {notification_ ? RspEvent::Kind::notification : RspEvent::Kind::packet, std::move(payload_), trailer_ == sum_});
  payload_.clear();
}

void RspParser::feed(std::span<const std::uint8_t> bytes, std::vector<RspEvent>& out) {
  for (const std::uint8_t byte : bytes) {
    const char c = static_cast<char>(byte);
    switch (state_) {
      case State::idle:
        if (c == '+') {
          out.push_back({RspEvent::Kind::ack, {}, true});
        } else if (c == '-') {
          out.push_back({RspEvent::Kind::nak, {}, true});
        } else if (c == '$' || c == '%') {
          state_ = State::body;
          notification_ = c == '%';
          broken_ = false;
          run_length_ = false;
          payload_.clear();
          sum_ = 0;
        } else {
          ++stray_bytes_;
        }
        break;
      case State::body:
        if (c == '#') {
          state_ = State::checksum_high;
          break;
        }
        sum_ = static_cast<std::uint8_t>(sum_ + byte);
        if (c == '$') {  // a new packet starts inside this one: the stub restarted; drop this one
          ++malformed_;
          payload_.clear();
          sum_ = 0;
          broken_ = false;
        } else if (c == '}') {
          state_ = State::escape;
        } else if (c == '*') {
          state_ = State::repeat;
          run_length_ = true;
        } else {
          body_byte(byte);
        }
        break;
      case State::escape:
        sum_ = static_cast<std::uint8_t>(sum_ + byte);
        body_byte(byte ^ 0x20U);
        state_ = State::body;
        break;
      case State::repeat: {
        sum_ = static_cast<std::uint8_t>(sum_ + byte);
        state_ = State::body;
        if (payload_.empty() || byte < rle_bias || byte > 126) {
          broken_ = true;  // nothing to repeat, or not a printable count
          break;
        }
        const char repeated = payload_.back();
        for (unsigned i = 0; i < static_cast<unsigned>(byte - rle_bias); ++i)
          body_byte(static_cast<std::uint8_t>(repeated));
        break;
      }
      case State::checksum_high: {
        const int v = hex_digit_value(c);
        if (v < 0) broken_ = true;
        trailer_ = static_cast<std::uint8_t>((v < 0 ? 0 : v) << 4);
        state_ = State::checksum_low;
        break;
      }
      case State::checksum_low: {
        const int v = hex_digit_value(c);
        if (v < 0) broken_ = true;
        trailer_ = static_cast<std::uint8_t>(trailer_ | (v < 0 ? 0 : v));
        finish(out);
        break;
      }
    }
  }
}

void append_hex(std::string& out, std::span<const std::uint8_t> bytes) {
  for (const std::uint8_t b : bytes) {
    out.push_back(hex_digits[b >> 4U]);
    out.push_back(hex_digits[b & 0x0fU]);
  }
}

std::optional<std::vector<std::uint8_t>> decode_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::vector<std::uint8_t> bytes(hex.size() / 2);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const int high = hex_digit_value(hex[2 * i]);
    const int low = hex_digit_value(hex[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    bytes[i] = static_cast<std::uint8_t>((high << 4) | low);
  }
  return bytes;
}

std::optional<int> error_number(std::string_view reply) {
  if (reply.size() != 3 || reply[0] != 'E') return std::nullopt;
  const int high = hex_digit_value(reply[1]);
  const int low = hex_digit_value(reply[2]);
  if (high < 0 || low < 0) return std::nullopt;
  return high * 16 + low;
}

bool is_stop_reply(std::string_view reply) {
  return reply.size() >= 3 && (reply[0] == 'S' || reply[0] == 'T') && hex_digit_value(reply[1]) >= 0 &&
         hex_digit_value(reply[2]) >= 0;
}

bool is_exit_reply(std::string_view reply) {
  return reply.size() >= 3 && (reply[0] == 'W' || reply[0] == 'X') && hex_digit_value(reply[1]) >= 0 &&
         hex_digit_value(reply[2]) >= 0;
}

std::optional<std::uint64_t> stop_reply_pid(std::string_view reply) {
  const auto at = reply.find("thread:p");
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view rest = reply.substr(at + 8);
  std::uint64_t pid = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), pid, 16);
  if (ec != std::errc{} || end == rest.data()) return std::nullopt;
  return pid;
}

StubFeatures parse_supported(std::string_view reply) {
  StubFeatures features;
  while (!reply.empty()) {
    const auto semicolon = reply.find(';');
    const std::string_view item = reply.substr(0, semicolon);
    reply = semicolon == std::string_view::npos ? std::string_view{} : reply.substr(semicolon + 1);
    if (item.starts_with("PacketSize=")) {
      features.packet_size = parse_whole_number<std::size_t>(item.substr(11), 16).value_or(0);
    } else if (item == "QStartNoAckMode+") {
      features.no_ack_mode = true;
    } else if (item == "multiprocess+") {
      features.multiprocess = true;
    } else if (item == "qXfer:memory-map:read+") {
      features.memory_map = true;
    }
  }
  return features;
}

}  // namespace tp::gdb
