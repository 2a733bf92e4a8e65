// Fuzz target: the whole itm-decode pipeline (TPIU, decoder, ports, timestamps, NDJSON
// writer); every line written must be valid JSON, and the output must not depend on how the
// input is split (fed whole, the fast paths take whole packets, frames and runs of 1-byte
// writes; fed byte by byte, none do), nor on where records are formatted (in the session, or
// from entries on the writer's thread, as itm-decode does).
#include <simdjson.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "decode/itm_session.hpp"

namespace {

std::string decode(const tp::SessionOptions& options, std::span<const std::uint8_t> input, std::size_t piece) {
  const int fd = ::memfd_create("fuzz", 0);
  {
    tp::BatchedWriter writer(fd, false, 1024);
    tp::ItmSession session(tp::PortMap::standard(), options, writer);
    for (std::size_t i = 0; i < input.size(); i += piece) {
      session.feed(input.subspan(i, std::min(piece, input.size() - i)), 1);
    }
    session.idle(1'000'000'000);
    session.finish(2'000'000'000);
    writer.flush();
  }
  std::string out(static_cast<std::size_t>(::lseek(fd, 0, SEEK_END)), '\0');
  if (::pread(fd, out.data(), out.size(), 0) != static_cast<ssize_t>(out.size())) std::abort();
  ::close(fd);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  tp::SessionOptions options;
  options.tpiu = (data[0] & 1U) != 0;
  options.frames = (data[0] & 2U) != 0;
  options.strict_sync = (data[0] & 4U) != 0;
  options.cpu_hz = (data[0] & 8U) != 0 ? 72'000'000 : 0;
  options.prescaler = 1U << (2U * ((data[0] >> 4U) & 3U));
  options.max_pending = 1U + data[1];
  options.max_line = 1U + data[1] / 4U;
  const std::span<const std::uint8_t> input(data + 2, size - 2);
  const std::string out = decode(options, input, input.size());
  tp::SessionOptions in_background = options;
  in_background.format_in_background = true;
  if (decode(in_background, input, input.size()) != out) std::abort();
  if ((data[0] & 0x40U) != 0) {  // the terminal format too
    options.format = in_background.format = tp::OutputFormat::text;
    if (decode(in_background, input, input.size()) != decode(options, input, input.size())) std::abort();
    options.format = tp::OutputFormat::ndjson;
  }
  simdjson::dom::parser parser;
  std::size_t start = 0;
  while (start < out.size()) {
    const std::size_t end = out.find('\n', start);
    if (end == std::string::npos) std::abort();  // only whole lines are written
    simdjson::dom::element element;
    if (parser.parse(out.data() + start, end - start).get(element) != simdjson::SUCCESS) std::abort();
    start = end + 1;
  }
  // Split equivalence, with no early release (where a release falls depends on how many
  // records a run of writes made before the check: a difference of grouping, not of decoding).
  // No input makes more records or frames than it has bytes.
  tp::SessionOptions unbounded = options;
  unbounded.max_pending = input.size() + 1;
  if (decode(unbounded, input, input.size()) != decode(unbounded, input, 1)) std::abort();
  return 0;
}
