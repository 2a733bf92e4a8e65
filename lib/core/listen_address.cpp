#include "core/listen_address.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/number.hpp"

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
  const auto value = parse_whole_number<std::uint16_t>(port);
  if (!value) throw Error(ExitCode::usage, fmt::format("--listen '{}': '{}' is not a port number", text, port));
  return ListenAddress{std::string(address.empty() ? default_address : address), *value};
}

}  // namespace tp
