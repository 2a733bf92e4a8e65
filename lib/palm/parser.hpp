// Palm Reporter protocol v1 (Palm OS Emulator's Reporter; docs/design.md "Peers and their protocols"): a push-style
// parser for one TCP stream. Header: version major, minor, u32 total size (including the
// header); then parameters (opcode u8, length u16, data), all big-endian, ending with
// parameter 0.
// The size frames every message, so only input that cannot be framed stops the stream
// (a major version we do not speak, a size below 9 or over the limit, the end of the
// stream inside a message). A framed message whose content breaks a rule is skipped and
// reported; the next message is read as usual. Where the document is ambiguous, the
// plausible reading is taken and counted (Message::line_break_readings, repeated_parameters):
// the real sender (PalmTrace.dll) is closed, nobody knows how it splits long text.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tp::palm {

enum class TraceKind : std::uint8_t { text = 0, text_line = 1, binary = 2 };

struct Message {
  std::uint8_t major = 1;
  std::uint8_t minor = 0;
  std::uint16_t module = 0;
  TraceKind kind = TraceKind::text;  // of the last trace part (text_line: add a line break)
  std::optional<std::uint8_t> indent;
  std::optional<std::uint32_t> process_id;
  std::optional<std::uint32_t> thread_id;
  std::optional<std::uint32_t> timestamp;  // the sender's time stamp (parameter 6)
  std::string data;                        // the trace parts, concatenated
  std::uint32_t skipped_parameters = 0;    // user (>= 128) and unknown parameters
  // Trace parts after a part of kind 1 (the document: only the last may be): under the same
  // attributes they are one text split in parts (the line break at the end); after a new
  // attributes parameter, the break goes between them ('\n').
  std::uint32_t line_break_readings = 0;
  // Parameters 2, 3, 4 or 6 given again (the last value counts), or attributes naming another
  // module (the first names the message's module).
  std::uint32_t repeated_parameters = 0;
  std::uint64_t offset = 0;  // of the message in its stream
};

struct ParseError {
  std::uint64_t offset;  // stream offset of the offending byte
  std::string message;
};

inline constexpr std::uint8_t supported_major = 1;
inline constexpr std::size_t header_size = 6;
inline constexpr std::size_t default_max_message_size = std::size_t{1} << 20U;

// Decodes one whole message (header included); an error names the rule the content breaks.
// Exposed for tests and the fuzzer.
std::optional<ParseError> decode_message(std::span<const std::uint8_t> bytes, std::uint64_t offset, Message& out);

class Parser {
 public:
  explicit Parser(std::size_t max_message_size = default_max_message_size) : max_message_size_(max_message_size) {}

  // Calls on_message(const Message&) for each complete message and on_skipped(const
  // ParseError&) for each framed message whose content breaks a rule. Returns an error
  // only for input that cannot be framed: then the stream is unusable and the caller
  // closes the connection (messages before it were delivered).
  template <class OnMessage, class OnSkipped>
  std::optional<ParseError> feed(std::span<const std::uint8_t> bytes, OnMessage&& on_message, OnSkipped&& on_skipped);
  // End of stream: an error if it ended inside a message.
  [[nodiscard]] std::optional<ParseError> finish() const;
  // True while a message has begun and is not complete yet.
  [[nodiscard]] bool mid_message() const noexcept { return !pending_.empty(); }

 private:
  // Forgets the message gathered across reads; a large buffer is freed, so a sender idle
  // between messages holds no more than a small one.
  void release_pending() {
    if (pending_.capacity() > std::size_t{64} << 10U) {
      std::vector<std::uint8_t>().swap(pending_);
    } else {
      pending_.clear();
    }
  }
  // Checks a complete header; returns the total size or an error.
  std::optional<ParseError> check_header(const std::uint8_t* header, std::uint32_t& total) const;

  std::size_t max_message_size_;
  std::uint64_t offset_ = 0;           // stream offset of the next byte fed
  std::vector<std::uint8_t> pending_;  // a message split across reads
  std::uint32_t total_ = 0;            // its size, once its header is in pending_
  Message message_;
};

template <class OnMessage, class OnSkipped>
std::optional<ParseError> Parser::feed(std::span<const std::uint8_t> bytes, OnMessage&& on_message,
                                       OnSkipped&& on_skipped) {
  const auto deliver = [&](std::span<const std::uint8_t> whole, std::uint64_t start) {
    if (auto problem = decode_message(whole, start, message_)) {
      on_skipped(std::as_const(*problem));
    } else {
      on_message(std::as_const(message_));
    }
  };
  while (!bytes.empty()) {
    const std::uint64_t start = offset_ - pending_.size();  // of the message being read
    if (pending_.empty() && bytes.size() >= header_size) {
      // Fast path: the whole message is in this read; decode it in place.
      std::uint32_t total = 0;
      if (auto error = check_header(bytes.data(), total)) return error;
      if (bytes.size() >= total) {
        deliver(bytes.first(total), start);
        offset_ += total;
        bytes = bytes.subspan(total);
        continue;
      }
    }
    // Slow path: gather the header, then the rest of the message, across reads.
    const bool have_header = pending_.size() >= header_size;
    const std::size_t want = (have_header ? total_ : header_size) - pending_.size();
    const std::size_t take = std::min(want, bytes.size());
    pending_.insert(pending_.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(take));
    offset_ += take;
    bytes = bytes.subspan(take);
    if (!have_header && pending_.size() == header_size) {
      if (auto error = check_header(pending_.data(), total_)) return error;
      pending_.reserve(total_);  // one allocation of the exact size: no doubling past it
    } else if (have_header && pending_.size() == total_) {
      deliver(pending_, start);
      release_pending();
    }
  }
  return std::nullopt;
}

}  // namespace tp::palm
