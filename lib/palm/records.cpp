#include "palm/records.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "core/number.hpp"
#include "records/record_line.hpp"

namespace tp::palm {
namespace {

using namespace std::string_view_literals;

constexpr std::array<std::pair<std::string_view, std::uint16_t>, 5> module_names{
    {{"mem", 0x0100}, {"dm", 0x0200}, {"ser", 0x0300}, {"sys", 0x0500}, {"app", 0x8000}}};

// Text traces are C strings on the sender side: drop NUL padding at the end.
std::string_view text_of(const Message& m) {
  std::string_view text = m.data;
  while (!text.empty() && text.back() == '\0') text.remove_suffix(1);
  return text;
}

void add_palm_fields(RecordData& data, const Message& m) {
  data.uint("module", m.module);
  if (m.kind != TraceKind::binary) data.boolean("line_break", m.kind == TraceKind::text_line);
  if (m.indent) data.uint("indent", *m.indent);
  if (m.process_id) data.uint("pid", *m.process_id);
  if (m.thread_id) data.uint("tid", *m.thread_id);
  if (m.timestamp) data.uint("sender_time", *m.timestamp);
}

void append_ndjson(OutBuffer& out, const Message& m, const Connection& c, std::uint64_t host_us) {
  const bool binary = m.kind == TraceKind::binary;
  RecordLine record(out, {host_us, clock_name(RecordClock::us), 0, binary ? RecordKind::raw : RecordKind::text,
                          source_name(RecordSource::palm)});
  if (binary) {
    record.data().bytes("data", std::span(reinterpret_cast<const std::uint8_t*>(m.data.data()), m.data.size()));
  } else {
    record.data().string("message", text_of(m));
  }
  add_palm_fields(record.data(), m);
  record.meta("connection", c.id).meta("peer", c.peer).end();
}

void append_text_row(OutBuffer& out, const Message& m, const Connection& c) {
  auto it = std::back_inserter(out);
  const std::string time = m.timestamp ? std::to_string(*m.timestamp) : "-";
  fmt::format_to(it, "{:>4} {:>10} {:#06x} {:{}}", c.id, time, m.module, "", m.indent.value_or(0));
  if (m.kind != TraceKind::binary) {
    for (const char ch : text_of(m)) {
      if (static_cast<unsigned char>(ch) < 0x20 && ch != '\n' && ch != '\t') {
        fmt::format_to(it, "\\x{:02x}", static_cast<unsigned char>(ch));
      } else {
        out += ch;
      }
    }
    out += '\n';
    return;
  }
  // Binary: a hex dump, 16 bytes a row, as the Reporter shows it.
  fmt::format_to(it, "[{} bytes]\n", m.data.size());
  for (std::size_t row = 0; row < m.data.size(); row += 16) {
    fmt::format_to(it, "{:>21}{:04x}: ", "", row);
    std::string ascii;
    for (std::size_t i = row; i < row + 16; ++i) {
      if (i < m.data.size()) {
        const auto b = static_cast<unsigned char>(m.data[i]);
        fmt::format_to(it, "{:02x} ", b);
        ascii += b >= 0x20 && b < 0x7F ? static_cast<char>(b) : '.';
      } else {
        out += "   "sv;
      }
    }
    fmt::format_to(it, " {}\n", ascii);
  }
}

}  // namespace

void append_record(OutBuffer& out, const Message& message, const Connection& connection, std::uint64_t host_us,
                   Format format) {
  if (format == Format::ndjson) {
    append_ndjson(out, message, connection, host_us);
  } else {
    append_text_row(out, message, connection);
  }
}

std::vector<std::uint16_t> parse_module_list(std::string_view list) {
  std::vector<std::uint16_t> modules;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view item = list.substr(start, comma - start);
    start = comma + 1;
    if (item.empty()) continue;
    bool named = false;
    for (const auto& [name, value] : module_names) {
      if (name == item) {
        modules.push_back(value);
        named = true;
      }
    }
    if (named) continue;
    const auto value = parse_c_number<std::uint16_t>(item);
    if (!value) {
      throw Error(ExitCode::usage,
                  fmt::format("--module: '{}' is not a module number or one of mem, dm, ser, sys, app", item));
    }
    modules.push_back(*value);
  }
  if (modules.empty()) throw Error(ExitCode::usage, "--module needs a list such as 0x0100,dm");
  return modules;
}

}  // namespace tp::palm
