// Fuzz target: the SystemView stream decoder and record writer, fed whole and split at a
// size the first byte chooses (with --no-sync, and waiting for a sync); both must write the
// same records byte for byte, and every record must pass the record validator.
#include <simdjson.h>

#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "records/record_check.hpp"
#include "sysview/records.hpp"
#include "sysview/stream_decoder.hpp"

namespace {

struct Sink {
  tp::sysview::RecordWriter& records;
  tp::OutBuffer& out;
  void packet(const tp::sysview::Packet& p) { records.packet(p, out); }
  void skipped(std::string_view reason, std::uint64_t bytes) { records.skipped(reason, bytes, out); }
};

// The records, and the error that ended the stream if one did (a time past 2^64 ns): the
// records before it are whole lines.
std::string decode(std::span<const std::uint8_t> input, std::size_t chunk, bool wait_for_sync, std::uint64_t hz,
                   std::string& error) {
  tp::OutBuffer out;
  tp::sysview::RecordWriter records({hz, false, 1});
  tp::sysview::StreamDecoder decoder(wait_for_sync);
  Sink sink{records, out};
  try {
    for (std::size_t i = 0; i < input.size(); i += chunk)
      decoder.feed(input.subspan(i, std::min(chunk, input.size() - i)), sink);
    decoder.finish(sink);
    records.finish(out);
  } catch (const tp::Error& e) {
    if (e.code() != tp::ExitCode::bad_input) std::abort();
    error = e.what();
  }
  return std::string(out.view());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t chunk = 1U + data[0] % 23U;
  const bool wait_for_sync = (data[1] & 1U) != 0;
  const std::uint64_t hz = (data[1] & 2U) != 0 ? 0 : 48'000'000;
  const std::span<const std::uint8_t> input(data + 2, size - 2);
  std::string whole_error;
  std::string split_error;
  const std::string whole = decode(input, input.size() + 1, wait_for_sync, hz, whole_error);
  if (decode(input, chunk, wait_for_sync, hz, split_error) != whole || split_error != whole_error) std::abort();
  simdjson::dom::parser parser;
  std::string problem;
  std::size_t start = 0;
  while (start < whole.size()) {
    const std::size_t end = whole.find('\n', start);
    const std::string line = whole.substr(start, end - start);
    start = end == std::string::npos ? whole.size() : end + 1;
    simdjson::dom::object root;
    if (parser.parse(line).get_object().get(root) != simdjson::SUCCESS) std::abort();
    if (!tp::check_record_line(root, problem)) std::abort();
  }
  return 0;
}
