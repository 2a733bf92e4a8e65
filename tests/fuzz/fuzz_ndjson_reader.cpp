// Fuzz target: the NDJSON reader, with a handler that walks record fields.
#include <cstdlib>
#include <string_view>

#include "json/ndjson_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::uint64_t good = 0;
  tp::NdjsonReader reader(
      [&](tp::NdjsonLine& line) -> simdjson::error_code {
        std::uint64_t timestamp = 0;
        std::string_view kind;
        if (auto e = line.root["timestamp"].get_uint64().get(timestamp); e != simdjson::SUCCESS) return e;
        if (auto e = line.root["event"]["kind"].get_string().get(kind); e != simdjson::SUCCESS) return e;
        ++good;
        return simdjson::SUCCESS;
      },
      [](std::uint64_t, std::string_view) {}, false, 4096);
  const std::size_t half = size / 2;
  reader.feed(std::string_view(reinterpret_cast<const char*>(data), half));
  reader.feed(std::string_view(reinterpret_cast<const char*>(data) + half, size - half));
  reader.finish();
  if (good + reader.bad_lines() > reader.lines()) std::abort();
  return 0;
}
