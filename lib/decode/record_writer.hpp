// Formats events as record lines: NDJSON through the record's one writer (records/record_line,
// docs/design.md "The record"), or human-readable text lines for a terminal.
// A record is built in two steps so that the time can be added later: body() writes
// everything but the timestamp; stamp() formats what goes around the bodies of one
// timestamp, and line() puts a body between them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/out_buffer.hpp"
#include "itm/exception_names.hpp"
#include "ports/event.hpp"
#include "ports/port_map.hpp"
#include "records/record_line.hpp"
#include "symbols/symbolizer.hpp"

namespace tp {

enum class OutputFormat : std::uint8_t { ndjson, text, none };

class RecordFormatter {
 public:
  // `symbols`: names for PC samples and exception handlers (itm-decode --elf), or none.
  RecordFormatter(OutputFormat format, const PortMap* port_map, const symbols::Symbolizer* symbols = nullptr)
      : format_(format), port_map_(port_map), symbols_(symbols) {}

  void body(OutBuffer& out, const Event& event) const;
  // The parts of a line around its body, for writing many lines with one timestamp.
  using Stamp = RecordStamp;
  // `exact` false: the time is only the best known (NDJSON: "time_exact":false; text: a '~'
  // after the time).
  void stamp(Stamp& stamp, std::uint64_t timestamp, std::string_view clock, bool exact = true) const;
  static void line(OutBuffer& out, const Stamp& stamp, std::string_view body) { stamp.line(out, body); }

 private:
  void ndjson_body(OutBuffer& out, const Event& event) const;
  void text_body(OutBuffer& out, const Event& event) const;
  // The names --elf adds to PcSample and Exception data.
  void symbol_data(RecordData& data, const Event& event) const;
  OutputFormat format_;
  const PortMap* port_map_;
  const symbols::Symbolizer* symbols_;
};

}  // namespace tp
