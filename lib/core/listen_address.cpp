#include "core/listen_address.hpp"

#include <fmt/format.h>

#include <charconv>

#include "core/error.hpp"

namespace tp {

ListenAddress parse_listen_address(std::string_view text, std::string_view default_address) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    throw Error(ExitCode::usage, fmt::format("--listen '{}': expected ADDR:PORT", text));
  }
  std::string_view address = text.substr(0, colon);
  if (address.size() >= 2 && address.front() == '[' && address.back() == ']') {
    address = address.substr(1, address.size() - 2);
  }
  const std::string_view port = text.substr(colon + 1);
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc{} || end != port.data() + port.size() || port.empty() || value > 65535) {
    throw Error(ExitCode::usage, fmt::format("--listen '{}': '{}' is not a port number", text, port));
  }
  return ListenAddress{std::string(address.empty() ? default_address : address), static_cast<std::uint16_t>(value)};
}

}  // namespace tp
