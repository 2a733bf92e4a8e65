#include "palm/parser.hpp"

#include <fmt/format.h>

#include "core/byte_order.hpp"

namespace tp::palm {
namespace {

std::string_view parameter_name(std::uint8_t opcode) {
  switch (opcode) {
    case 0:
      return "end of message (0)";
    case 1:
      return "attributes (1)";
    case 2:
      return "indentation (2)";
    case 3:
      return "process id (3)";
    case 4:
      return "thread id (4)";
    case 5:
      return "trace data (5)";
    case 6:
      return "time stamp (6)";
    default:
      return "parameter";
  }
}

// The fixed data length of parameters 0-4 and 6; 5 and unknown ones are variable.
std::optional<std::uint16_t> fixed_length(std::uint8_t opcode) {
  switch (opcode) {
    case 0:
      return 0;
    case 1:
      return 5;
    case 2:
      return 1;
    case 3:
    case 4:
    case 6:
      return 4;
    default:
      return std::nullopt;
  }
}

// The rules of section 2.4 for trace parts, with the state they need.
struct TraceParts {
  std::size_t count = 0;
  TraceKind first = TraceKind::text;
  TraceKind last = TraceKind::text;
  bool attributes_since_last = false;  // an attributes parameter came after the last part

  // Adds a part of `kind` to `out`: an error when the message cannot be read, else the
  // plausible reading where the document is ambiguous (see Message::line_break_readings).
  std::optional<std::string> add(TraceKind kind, std::string_view data, Message& out) {
    if (count != 0 && (first == TraceKind::binary) != (kind == TraceKind::binary)) {
      return first == TraceKind::binary ? "a binary message has a text part" : "a text message has a binary part";
    }
    if (count != 0 && last == TraceKind::text_line) {
      ++out.line_break_readings;
      if (attributes_since_last) out.data += '\n';
    }
    if (count == 0) first = kind;
    last = kind;
    attributes_since_last = false;
    ++count;
    out.data.append(data);
    return std::nullopt;
  }
};

// Parameters 2, 3, 4, 6: the last value counts; a repeat is counted.
template <class T>
void set_optional(std::optional<T>& field, T value, Message& out) {
  if (field) ++out.repeated_parameters;
  field = value;
}

}  // namespace

std::optional<ParseError> Parser::check_header(const std::uint8_t* header, std::uint32_t& total) const {
  const std::uint64_t start = offset_ - pending_.size();
  if (header[0] != supported_major) {
    return ParseError{start, fmt::format("protocol version {}.{} is not supported (this receiver speaks {}.x)",
                                         header[0], header[1], supported_major)};
  }
  total = load_be32(header + 2);
  if (total < header_size + 3) {
    return ParseError{start + 2, fmt::format("message size {} is smaller than a header and an end parameter", total)};
  }
  if (total > max_message_size_) {
    return ParseError{start + 2, fmt::format("message size {} is over the limit of {} bytes (--max-message-size)",
                                             total, max_message_size_)};
  }
  return std::nullopt;
}

std::optional<ParseError> Parser::finish() const {
  if (pending_.empty()) return std::nullopt;
  return ParseError{offset_,
                    fmt::format("the stream ended inside a message ({} bytes of it received)", pending_.size())};
}

std::optional<ParseError> decode_message(std::span<const std::uint8_t> bytes, std::uint64_t offset, Message& out) {
  out = Message{};
  out.offset = offset;
  out.major = bytes[0];
  out.minor = bytes[1];
  const auto fail = [&](std::size_t at, std::string message) {
    return std::optional<ParseError>(ParseError{offset + at, std::move(message)});
  };
  bool attributes = false;
  TraceKind kind = TraceKind::text;
  TraceParts parts;
  std::size_t pos = header_size;
  while (pos < bytes.size()) {
    if (bytes.size() - pos < 3) return fail(pos, "a parameter header is cut off by the end of the message");
    const std::uint8_t opcode = bytes[pos];
    const std::uint16_t length = load_be16(bytes.data() + pos + 1);
    const std::size_t at = pos;
    pos += 3;
    if (length > bytes.size() - pos) {
      return fail(at, fmt::format("{} {} of {} bytes runs past the end of the message", parameter_name(opcode), opcode,
                                  length));
    }
    const std::uint8_t* data = bytes.data() + pos;
    pos += length;
    if (const auto expected = fixed_length(opcode); expected && *expected != length) {
      return fail(at, fmt::format("{} must be {} bytes, not {}", parameter_name(opcode), *expected, length));
    }
    switch (opcode) {
      case 0:
        if (!attributes || parts.count == 0)
          return fail(at, "the message ends without attributes (1) and trace data (5)");
        if (pos != bytes.size()) return fail(pos, "bytes after the end-of-message parameter");
        out.kind = parts.last;
        return std::nullopt;
      case 1:
        if (data[4] > 2)
          return fail(at + 7, fmt::format("unknown trace kind {} (0 text, 1 text with line break, 2 binary)", data[4]));
        if (!attributes) out.module = load_be16(data);
        if (attributes && load_be16(data) != out.module) ++out.repeated_parameters;
        attributes = true;
        parts.attributes_since_last = parts.count != 0;
        kind = static_cast<TraceKind>(data[4]);
        break;
      case 2:
        set_optional(out.indent, data[0], out);
        break;
      case 3:
        set_optional(out.process_id, load_be32(data), out);
        break;
      case 4:
        set_optional(out.thread_id, load_be32(data), out);
        break;
      case 6:
        set_optional(out.timestamp, load_be32(data), out);
        break;
      case 5:
        if (!attributes) return fail(at, "trace data (5) before the attributes (1)");
        if (auto problem = parts.add(kind, std::string_view(reinterpret_cast<const char*>(data), length), out))
          return fail(at, *problem);
        break;
      default:
        ++out.skipped_parameters;
        break;  // user parameters (>= 128) and unknown ones
    }
  }
  return fail(bytes.size(), "the message has no end-of-message parameter (0)");
}

}  // namespace tp::palm
