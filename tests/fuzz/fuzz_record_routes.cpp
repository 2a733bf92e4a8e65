// Fuzz target: trace-serve's input path. Arbitrary NDJSON is classified and framed; every
// framed message must be one well-formed server frame holding valid JSON, and a line
// the classifier accepts as a core kind must carry the fields Callisto's schema requires.
#include <simdjson.h>

#include <cstdlib>
#include <string>

#include "json/ndjson_reader.hpp"
#include "serve/broadcast.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static tp::serve::KindTable kinds;
  tp::serve::RecordClassifier classifier(kinds);
  tp::serve::BatchBuilder builder;
  std::string problem;
  tp::NdjsonReader reader(
      [&](tp::NdjsonLine& line) {
        const auto route = classifier.classify(line.root, problem);
        if (!route) return simdjson::INCORRECT_TYPE;
        builder.add(line.text, *route, 0);
        return simdjson::SUCCESS;
      },
      [](std::uint64_t, std::string_view) {});
  reader.feed(std::string_view(reinterpret_cast<const char*>(data), size));
  reader.finish();
  if (builder.empty()) return 0;
  const auto batch = builder.take();
  simdjson::dom::parser parser;
  for (const tp::serve::BatchItem& item : batch->items) {
    const std::string_view frame(batch->bytes.data() + item.offset, item.size);
    const auto b1 = static_cast<std::uint8_t>(frame[1]);
    const std::size_t header = (b1 & 0x7FU) < 126 ? 2 : (b1 & 0x7FU) == 126 ? 4 : 10;
    if (static_cast<std::uint8_t>(frame[0]) != 0x81 || frame.size() <= header) std::abort();
    const std::string message(frame.substr(header));
    simdjson::dom::element root;
    if (parser.parse(message).get(root) != simdjson::SUCCESS) std::abort();
    std::string_view type;
    if (root["type"].get(type) != simdjson::SUCCESS) std::abort();
    if (item.route.kind == 0) {
      std::string_view text;
      if (root.at_pointer("/data/event/data/message").get(text) != simdjson::SUCCESS) std::abort();
    }
  }
  return 0;
}
