// The lines of a message's payload (a chunk of records, a batch of rows): the one place a
// payload is split on newlines. A last line without its newline is a line too.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tp {

// Calls `on_line(line)` for each line of `payload`, without its '\n' (an empty line too).
template <typename OnLine>
void for_each_line(std::string_view payload, OnLine&& on_line) {
  while (!payload.empty()) {
    const std::size_t newline = payload.find('\n');
    on_line(payload.substr(0, newline));
    payload.remove_prefix(newline == std::string_view::npos ? payload.size() : newline + 1);
  }
}

// How many lines `payload` holds.
[[nodiscard]] inline std::size_t line_count(std::string_view payload) noexcept {
  const auto newlines = static_cast<std::size_t>(std::ranges::count(payload, '\n'));
  return newlines + (!payload.empty() && payload.back() != '\n' ? 1 : 0);
}

// `payload` after its first `skip` lines.
[[nodiscard]] inline std::string_view lines_after(std::string_view payload, std::uint64_t skip) noexcept {
  std::size_t at = 0;
  for (std::uint64_t i = 0; i < skip && at < payload.size(); ++i) {
    const std::size_t newline = payload.find('\n', at);
    at = newline == std::string_view::npos ? payload.size() : newline + 1;
  }
  return payload.substr(at);
}

// The first `count` lines of `payload`.
[[nodiscard]] inline std::string_view lines_before(std::string_view payload, std::uint64_t count) noexcept {
  return payload.substr(0, payload.size() - lines_after(payload, count).size());
}

}  // namespace tp

namespace tp {

// The lines of a text that comes in pieces (an HTTP body, a pipe): each whole line to
// `sink.line(line)` (without its '\n'), a line cut between pieces held until its end comes. A
// held line that grows past max_line is not held: `sink.too_long(start)` gets what was held,
// the rest of the line is dropped and its end told by `sink.dropped_line_end()`.
class PieceLines {
 public:
  explicit PieceLines(std::size_t max_line) : max_line_(max_line) {}

  template <typename Sink>
  void take(std::string_view piece, Sink& sink) {
    while (!piece.empty()) {
      const std::size_t newline = piece.find('\n');
      if (newline == std::string_view::npos) {
        hold(piece, sink);
        return;
      }
      end_line(piece.substr(0, newline), sink);
      piece.remove_prefix(newline + 1);
    }
  }
  // The end of the text: a last line without its newline is a line too.
  template <typename Sink>
  void finish(Sink& sink) {
    if (!held_.empty() || dropping_) end_line({}, sink);
  }

 private:
  template <typename Sink>
  void hold(std::string_view piece, Sink& sink) {
    if (dropping_) return;
    held_.append(piece);
    if (held_.size() > max_line_) {
      dropping_ = true;
      sink.too_long(std::string_view(held_));
      held_.clear();
    }
  }
  template <typename Sink>
  void end_line(std::string_view rest, Sink& sink) {
    if (dropping_) {
      dropping_ = false;
      if constexpr (requires { sink.dropped_line_end(); }) sink.dropped_line_end();
    } else if (held_.empty()) {
      sink.line(rest);
    } else {
      held_.append(rest);
      sink.line(std::string_view(held_));
    }
    held_.clear();
  }

  std::size_t max_line_;
  std::string held_;
  bool dropping_ = false;  // inside a line grown past max_line
};

}  // namespace tp
