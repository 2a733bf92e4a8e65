// Formats events as record lines: NDJSON shaped like a Callisto Event's data
// (DESIGN.md "The record"), or human-readable text lines for a terminal.
// A record is built in two steps so that the time can be added later: body() writes
// everything but the timestamp, line() wraps a body with its timestamp and clock.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "itm/exception_names.hpp"
#include "ports/event.hpp"
#include "ports/port_map.hpp"

namespace tp {

enum class OutputFormat : std::uint8_t { ndjson, text, none };

class RecordFormatter {
 public:
  RecordFormatter(OutputFormat format, const PortMap* port_map) : format_(format), port_map_(port_map) {}

  void body(std::string& out, const Event& event) const;
  void line(std::string& out, std::uint64_t timestamp, std::string_view clock, std::string_view body) const;

 private:
  void ndjson_body(std::string& out, const Event& event) const;
  void text_body(std::string& out, const Event& event) const;
  OutputFormat format_;
  const PortMap* port_map_;
};

}  // namespace tp
