// Runs an ItmSession over bytes and returns the output lines (through a real file).
#pragma once

#include <doctest/doctest.h>
#include <simdjson.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "decode/itm_session.hpp"

namespace tp::test {

// The output of an ItmSession over `bytes` (fed in pieces of `chunk`, 0: all at once),
// through a real file written by a BatchedWriter of `capacity` bytes.
inline std::string decode_output(const std::vector<std::uint8_t>& bytes, const SessionOptions& options,
                                 const PortMap& map, std::size_t chunk, std::uint64_t host_us,
                                 std::size_t capacity = 4096) {
  const int fd = ::memfd_create("tracepipe-test", 0);
  {
    BatchedWriter writer(fd, false, capacity);
    ItmSession session(map, options, writer);
    if (chunk == 0) chunk = bytes.empty() ? 1 : bytes.size();
    for (std::size_t i = 0; i < bytes.size(); i += chunk) {
      session.feed(std::span<const std::uint8_t>(bytes.data() + i, std::min(chunk, bytes.size() - i)), host_us);
    }
    session.finish(host_us);
    writer.flush();
  }
  std::string content;
  ::lseek(fd, 0, SEEK_SET);
  char buffer[65536];
  ssize_t n = 0;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) content.append(buffer, static_cast<std::size_t>(n));
  ::close(fd);
  return content;
}

// The output lines of an ItmSession over `bytes`. Every call also decodes with its record
// entries formatted on the other thread (the writer's own, or the session's) and requires
// the same bytes: every session test checks both.
inline std::vector<std::string> decode_lines(const std::vector<std::uint8_t>& bytes, SessionOptions options = {},
                                             const PortMap& map = PortMap::standard(), std::size_t chunk = 0,
                                             std::uint64_t host_us = 1000) {
  const std::string content = decode_output(bytes, options, map, chunk, host_us);
  options.format_in_background = !options.format_in_background;
  REQUIRE(decode_output(bytes, options, map, chunk, host_us) == content);
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < content.size()) {
    const std::size_t end = content.find('\n', start);
    lines.push_back(content.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// Field access for assertions: parses one NDJSON line.
class Json {
 public:
  explicit Json(const std::string& line) : doc_(parser().parse(line)) {}
  simdjson::dom::element operator[](std::string_view path) const { return doc_.at_pointer(path).value(); }
  [[nodiscard]] std::string str(std::string_view path) const {
    return std::string(doc_.at_pointer(path).get_string().value());
  }
  [[nodiscard]] std::uint64_t u64(std::string_view path) const { return doc_.at_pointer(path).get_uint64().value(); }
  [[nodiscard]] bool has(std::string_view path) const { return doc_.at_pointer(path).error() == simdjson::SUCCESS; }

 private:
  static simdjson::dom::parser& parser() {
    thread_local std::vector<std::unique_ptr<simdjson::dom::parser>> parsers;
    parsers.push_back(std::make_unique<simdjson::dom::parser>());
    return *parsers.back();
  }
  simdjson::dom::element doc_;
};

}  // namespace tp::test
