// Fuzz target: Callisto client messages. Any text parses to a message or a protocol error
// with one of the two codes the parser may give; nothing else.
#include <cstdlib>
#include <string_view>

#include "serve/protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static tp::serve::ClientMessageParser parser;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto result = parser.parse(text);
  if (const auto* error = std::get_if<tp::serve::ProtocolError>(&result)) {
    if (error->code != tp::ErrorCode::invalid_message && error->code != tp::ErrorCode::invalid_parameters) {
      std::abort();
    }
    if (error->message.empty()) std::abort();
  }
  return 0;
}
