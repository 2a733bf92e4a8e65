// Fuzz target: records of any content through observe() into the timeline: the output must
// always be one valid JSON object whose slices (B/E) balance on every track, whatever the
// order, the missing exits, the windows or the names.
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include "analysis/observation.hpp"
#include "analysis/timeline.hpp"
#include "json/ndjson_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  // The first two bytes choose the options: a clock rate and a window.
  tp::analysis::TimelineOptions options;
  options.cpu_hz = data[0] % 4 == 0 ? 0 : std::uint64_t{1} << (data[0] % 32);
  if ((data[1] & 1U) != 0) options.since = std::uint64_t{data[1]} * 10;
  if ((data[1] & 2U) != 0) options.until = std::uint64_t{data[1]} * 40 + 1;
  if (options.since && options.until && *options.since >= *options.until) options.until.reset();
  tp::analysis::TimelineWriter timeline(options);
  tp::OutBuffer out;
  timeline.begin(out);
  tp::NdjsonReader reader(
      [&](tp::NdjsonLine& line) {
        if (const auto observation = tp::analysis::observe(line.root)) timeline.add(*observation, out);
        return simdjson::SUCCESS;
      },
      nullptr);
  reader.feed(std::string_view(reinterpret_cast<const char*>(data) + 2, size - 2));
  reader.finish();
  timeline.finish(out);

  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(std::string(out.data(), out.size())).get(root) != simdjson::SUCCESS) std::abort();
  simdjson::dom::array events;
  if (root["traceEvents"].get_array().get(events) != simdjson::SUCCESS) std::abort();
  std::map<std::int64_t, int> depth;
  for (const simdjson::dom::element event : events) {
    const std::string_view phase = event["ph"].get_string().value_unsafe();
    const std::int64_t tid = event["tid"].get_int64().value_unsafe();
    if (phase == "B") ++depth[tid];
    if (phase == "E" && --depth[tid] < 0) std::abort();
  }
  for (const auto& [tid, open] : depth) {
    if (open != 0) std::abort();
  }
  return 0;
}
