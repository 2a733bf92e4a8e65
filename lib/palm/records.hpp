// Palm trace messages as tracepipe records (docs/design.md "The record"): Text records for text traces,
// Raw records for binary ones, with the Palm fields in event.data and the connection
// at the top level; or rows like the Reporter's window (--format text).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/out_buffer.hpp"
#include "palm/parser.hpp"

namespace tp::palm {

struct Connection {
  std::uint64_t id = 0;
  std::string peer;  // "address:port"
};

enum class Format : std::uint8_t { ndjson, text };

void append_record(OutBuffer& out, const Message& message, const Connection& connection, std::uint64_t host_us,
                   Format format);

// "0x0100,dm,32768": numbers (decimal or 0x) or the Palm OS error-class names mem, dm,
// ser, sys, app. Throws tp::Error(usage).
std::vector<std::uint16_t> parse_module_list(std::string_view list);

}  // namespace tp::palm
