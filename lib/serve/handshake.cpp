#include "serve/handshake.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "core/number.hpp"
#include "serve/sha1.hpp"

namespace tp::serve {

std::string base64_encode(std::string_view bytes) {
  static constexpr std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const auto n = (std::uint32_t{static_cast<std::uint8_t>(bytes[i])} << 16U) |
                   (std::uint32_t{static_cast<std::uint8_t>(bytes[i + 1])} << 8U) |
                   std::uint32_t{static_cast<std::uint8_t>(bytes[i + 2])};
    for (const unsigned shift : {18U, 12U, 6U, 0U}) out.push_back(alphabet[(n >> shift) & 63U]);
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    std::uint32_t n = std::uint32_t{static_cast<std::uint8_t>(bytes[i])} << 16U;
    if (rest == 2) n |= std::uint32_t{static_cast<std::uint8_t>(bytes[i + 1])} << 8U;
    out.push_back(alphabet[(n >> 18U) & 63U]);
    out.push_back(alphabet[(n >> 12U) & 63U]);
    out.push_back(rest == 2 ? alphabet[(n >> 6U) & 63U] : '=');
    out.push_back('=');
  }
  return out;
}

std::string websocket_accept_key(std::string_view client_key) {
  // RFC 6455 section 1.3: the key with this GUID appended, SHA-1, base64.
  const std::string joined = fmt::format("{}258EAFA5-E914-47DA-95CA-C5AB0DC85B11", client_key);
  const Sha1Digest digest = sha1(joined);
  return base64_encode(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

bool constant_time_equal(std::string_view a, std::string_view b) noexcept {
  unsigned difference = a.size() == b.size() ? 0U : 1U;
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0U;
    const auto y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0U;
    difference |= x ^ y;
  }
  return difference == 0;
}

namespace {

std::string percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out.push_back(' ');
    } else if (text[i] == '%' && i + 2 < text.size() && hex_digit_value(text[i + 1]) >= 0 &&
               hex_digit_value(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex_digit_value(text[i + 1]) * 16 + hex_digit_value(text[i + 2])));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}
}  // namespace

std::string_view target_path(std::string_view target) noexcept {
  return target.substr(0, target.find('?'));
}

std::vector<std::string> query_parameters(std::string_view target, std::string_view name) {
  std::vector<std::string> values;
  const std::size_t question = target.find('?');
  if (question == std::string_view::npos) return values;
  std::string_view query = target.substr(question + 1);
  query = query.substr(0, query.find('#'));
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const std::size_t eq = pair.find('=');
    if (percent_decode(pair.substr(0, eq)) == name) {
      values.push_back(eq == std::string_view::npos ? std::string{} : percent_decode(pair.substr(eq + 1)));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return values;
}

std::optional<std::string> query_parameter(std::string_view target, std::string_view name) {
  std::vector<std::string> values = query_parameters(target, name);
  if (values.empty()) return std::nullopt;
  return std::move(values.front());
}

bool offers_subprotocol(std::string_view header, std::string_view name) noexcept {
  while (!header.empty()) {
    const std::size_t comma = header.find(',');
    std::string_view token = header.substr(0, comma);
    while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) token.remove_prefix(1);
    while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
    if (token == name) return true;
    if (comma == std::string_view::npos) break;
    header.remove_prefix(comma + 1);
  }
  return false;
}

std::optional<std::string_view> bearer_token(std::string_view authorization) noexcept {
  constexpr std::string_view scheme = "bearer ";
  if (authorization.size() < scheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < scheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != scheme[i]) return std::nullopt;
  }
  std::string_view token = authorization.substr(scheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  return token;
}

}  // namespace tp::serve
