// Fuzz target: the whole itm-decode pipeline (TPIU, decoder, ports, timestamps, NDJSON
// writer); every line written must be valid JSON.
#include <simdjson.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "decode/itm_session.hpp"

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
  const int fd = ::memfd_create("fuzz", 0);
  {
    tp::BatchedWriter writer(fd, false, 1024);
    tp::ItmSession session(tp::PortMap::standard(), options, writer);
    session.feed(std::span<const std::uint8_t>(data + 2, size - 2), 1);
    session.idle(1'000'000'000);
    session.finish(2'000'000'000);
    writer.flush();
  }
  std::string out(static_cast<std::size_t>(::lseek(fd, 0, SEEK_END)), '\0');
  ::pread(fd, out.data(), out.size(), 0);
  ::close(fd);
  simdjson::dom::parser parser;
  std::size_t start = 0;
  while (start < out.size()) {
    const std::size_t end = out.find('\n', start);
    if (end == std::string::npos) std::abort();  // only whole lines are written
    simdjson::dom::element element;
    if (parser.parse(out.data() + start, end - start).get(element) != simdjson::SUCCESS) std::abort();
    start = end + 1;
  }
  return 0;
}
