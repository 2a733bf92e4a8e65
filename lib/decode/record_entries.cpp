#include "decode/record_entries.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <type_traits>

#include "records/vocabulary.hpp"

namespace tp {
namespace {

constexpr char record_tag = 'R';
constexpr char line_tag = 'L';
// tag, time, exact, clock; then kind, source, port, c, d, a, b, text length, bytes length
constexpr std::size_t stamp_size = 1 + 8 + 1 + 1;
constexpr std::size_t record_head_size = stamp_size + 1 + 1 + 2 + 1 + 1 + 8 + 8 + 4 + 4;

template <class Value>
char* put_value(char* at, Value value) noexcept {
  static_assert(std::is_trivially_copyable_v<Value>);
  std::memcpy(at, &value, sizeof value);
  return at + sizeof value;
}

// Reads entries back; a short batch is a bug of the session, not bad input.
class EntryReader {
 public:
  explicit EntryReader(std::string_view bytes) noexcept : rest_(bytes) {}
  template <class Value>
  Value take() {
    Value value{};
    std::memcpy(&value, need(sizeof value).data(), sizeof value);
    return value;
  }
  std::string_view take_bytes(std::size_t n) { return need(n); }
  [[nodiscard]] std::string_view rest() const noexcept { return rest_; }

 private:
  std::string_view need(std::size_t n) {
    if (rest_.size() < n) throw std::logic_error("record entries: a batch ends inside an entry");
    const std::string_view taken = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return taken;
  }
  std::string_view rest_;
};

}  // namespace

void stage_record_entry(OutBuffer& out, const Event& event) {
  char* p = out.ensure(record_head_size + event.text.size() + event.bytes.size());
  *p = record_tag;
  p += stamp_size;  // stamped later
  p = put_value(p, static_cast<std::uint8_t>(event.kind));
  p = put_value(p, static_cast<std::uint8_t>(event.source));
  p = put_value(p, event.port);
  const Event::Values values = event.values();
  p = put_value(p, values.c);
  p = put_value(p, values.d);
  p = put_value(p, values.a);
  p = put_value(p, values.b);
  p = put_value(p, static_cast<std::uint32_t>(event.text.size()));
  p = put_value(p, static_cast<std::uint32_t>(event.bytes.size()));
  p = OutBuffer::put(p, event.text);
  p = OutBuffer::put(p, std::string_view(reinterpret_cast<const char*>(event.bytes.data()), event.bytes.size()));
  out.commit_to(p);
}

void stamp_record_entry(char* entry, std::uint64_t time, std::string_view clock, bool exact) {
  const auto code = static_cast<std::size_t>(std::find(record_clock_names.begin(), record_clock_names.end(), clock) -
                                             record_clock_names.begin());
  if (code == record_clock_names.size()) throw std::logic_error("record entries: a clock of no known name");
  char* p = put_value(entry + 1, time);
  p = put_value(p, static_cast<std::uint8_t>(exact ? 1 : 0));
  put_value(p, static_cast<std::uint8_t>(code));
}

void append_line_entry(OutBuffer& out, std::string_view line) {
  char* p = out.ensure(1 + 4 + line.size());
  *p++ = line_tag;
  p = put_value(p, static_cast<std::uint32_t>(line.size()));
  out.commit_to(OutBuffer::put(p, line));
}

EntryFormatter::EntryFormatter(OutputFormat format, PortMap port_map, const symbols::Symbolizer* symbols)
    : port_map_(std::move(port_map)), formatter_(format, &port_map_, symbols) {}

void EntryFormatter::format(std::string_view batch, OutBuffer& out) const {
  LastStamp last;
  std::string_view rest = batch;
  while (!rest.empty()) {
    const char tag = rest.front();
    rest.remove_prefix(1);
    if (tag == record_tag) {
      rest = format_record(rest, last, out);
    } else if (tag == line_tag) {
      EntryReader reader(rest);
      out += reader.take_bytes(reader.take<std::uint32_t>());
      rest = reader.rest();
    } else {
      throw std::logic_error("record entries: an entry of no known kind");
    }
  }
}

std::string_view EntryFormatter::format_record(std::string_view rest, LastStamp& last, OutBuffer& out) const {
  EntryReader reader(rest);
  const auto time = reader.take<std::uint64_t>();
  const bool exact = reader.take<std::uint8_t>() != 0;
  const auto code = reader.take<std::uint8_t>();
  if (code >= record_clock_names.size()) throw std::logic_error("record entries: a clock of no known code");
  if (!last.set || time != last.time || exact != last.exact || code != last.clock_code) {
    formatter_.stamp(last.stamp, time, record_clock_names[code], exact);
    last.time = time;
    last.clock_code = code;
    last.exact = exact;
    last.set = true;
  }
  const auto kind = static_cast<EventKind>(reader.take<std::uint8_t>());
  const auto source = static_cast<EventSource>(reader.take<std::uint8_t>());
  const auto port = reader.take<std::uint16_t>();
  Event::Values values;
  values.c = reader.take<std::uint8_t>();
  values.d = reader.take<std::uint8_t>();
  values.a = reader.take<std::uint64_t>();
  values.b = reader.take<std::uint64_t>();
  Event event = Event::restored(kind, values);
  event.source = source;
  event.port = port;
  const auto text_size = reader.take<std::uint32_t>();
  const auto bytes_size = reader.take<std::uint32_t>();
  event.text = reader.take_bytes(text_size);
  const std::string_view bytes = reader.take_bytes(bytes_size);
  event.bytes = std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  out += last.stamp.prefix.view();
  formatter_.body(out, event);
  out += last.stamp.suffix.view();
  return reader.rest();
}

BatchedWriter::BatchEncoder entry_encoder(OutputFormat format, const PortMap& port_map,
                                          const symbols::Symbolizer* symbols) {
  auto formatter = std::make_shared<const EntryFormatter>(format, port_map, symbols);
  return [formatter](std::string_view batch, OutBuffer& out) { formatter->format(batch, out); };
}

}  // namespace tp
