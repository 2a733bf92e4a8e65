// Fuzz target: the Palm Reporter message parser, fed whole and split; both must agree on
// every message and every skipped one, and every record must format.
#include <cstdlib>
#include <vector>

#include "palm/parser.hpp"
#include "palm/records.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = 1U + data[0] % 17U;
  const std::span<const std::uint8_t> input(data + 1, size - 1);
  tp::OutBuffer out;
  std::vector<std::uint64_t> whole;
  tp::palm::Parser a(4096);
  const auto error_a = a.feed(
      input,
      [&](const tp::palm::Message& m) {
        whole.push_back(m.offset);
        tp::palm::append_record(out, m, tp::palm::Connection{1, "fuzz"}, 1, tp::palm::Format::ndjson);
        tp::palm::append_record(out, m, tp::palm::Connection{1, "fuzz"}, 1, tp::palm::Format::text);
      },
      [&](const tp::palm::ParseError& skipped) { whole.push_back(~skipped.offset); });
  std::vector<std::uint64_t> split;
  tp::palm::Parser b(4096);
  std::optional<tp::palm::ParseError> error_b;
  for (std::size_t i = 0; i < input.size() && !error_b; i += chunk) {
    error_b = b.feed(
        input.subspan(i, std::min(chunk, input.size() - i)),
        [&](const tp::palm::Message& m) { split.push_back(m.offset); },
        [&](const tp::palm::ParseError& skipped) { split.push_back(~skipped.offset); });
  }
  if (whole != split || error_a.has_value() != error_b.has_value()) std::abort();
  if (error_a && error_a->offset != error_b->offset) std::abort();
  return 0;
}
