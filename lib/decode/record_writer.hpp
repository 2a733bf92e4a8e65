// Formats events as record lines: NDJSON shaped like a Callisto Event's data
// (DESIGN.md "The record"), or human-readable text lines for a terminal.
// A record is built in two steps so that the time can be added later: body() writes
// everything but the timestamp; stamp() formats what goes around the bodies of one
// timestamp, and line() puts a body between them.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "core/out_buffer.hpp"
#include "itm/exception_names.hpp"
#include "ports/event.hpp"
#include "ports/port_map.hpp"

namespace tp {

enum class OutputFormat : std::uint8_t { ndjson, text, none };

class RecordFormatter {
 public:
  RecordFormatter(OutputFormat format, const PortMap* port_map) : format_(format), port_map_(port_map) {}

  void body(OutBuffer& out, const Event& event) const;
  // The parts of a line around its body, for writing many lines with one timestamp.
  struct Stamp {
    OutBuffer prefix;
    OutBuffer suffix;
  };
  void stamp(Stamp& stamp, std::uint64_t timestamp, std::string_view clock) const;
  static void line(OutBuffer& out, const Stamp& stamp, std::string_view body) {
    char* p = out.ensure(stamp.prefix.size() + body.size() + stamp.suffix.size());
    std::memcpy(p, stamp.prefix.data(), stamp.prefix.size());
    p += stamp.prefix.size();
    std::memcpy(p, body.data(), body.size());
    p += body.size();
    std::memcpy(p, stamp.suffix.data(), stamp.suffix.size());
    out.commit_to(p + stamp.suffix.size());
  }

 private:
  static void ndjson_body(OutBuffer& out, const Event& event);
  void text_body(OutBuffer& out, const Event& event) const;
  OutputFormat format_;
  const PortMap* port_map_;
};

}  // namespace tp
