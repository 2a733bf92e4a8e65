// Fuzz target: the WebSocket client-frame parser, fed whole and split at a chosen size;
// both must deliver the same frames and the same verdict, and payloads stay in bounds.
#include <cstdlib>
#include <string>
#include <vector>

#include "serve/websocket_frame.hpp"

namespace {
struct Outcome {
  std::vector<std::string> frames;
  bool violated = false;
  std::uint16_t code = 0;
};

Outcome run(std::span<const std::uint8_t> input, std::size_t chunk) {
  Outcome outcome;
  tp::serve::FrameParser parser(4096);
  for (std::size_t i = 0; i < input.size() && !outcome.violated; i += chunk) {
    const auto violation =
        parser.feed(input.subspan(i, std::min(chunk, input.size() - i)), [&](const tp::serve::ClientFrame& frame) {
          if (frame.payload.size() > 4096) std::abort();
          outcome.frames.push_back(std::to_string(static_cast<int>(frame.opcode)) + ":" + std::string(frame.payload));
        });
    if (violation) {
      outcome.violated = true;
      outcome.code = violation->close_code;
    }
  }
  return outcome;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = 1U + data[0] % 13U;
  const std::span<const std::uint8_t> input(data + 1, size - 1);
  const Outcome whole = run(input, input.size() + 1);
  const Outcome split = run(input, chunk);
  if (whole.frames != split.frames || whole.violated != split.violated || whole.code != split.code) std::abort();
  return 0;
}
