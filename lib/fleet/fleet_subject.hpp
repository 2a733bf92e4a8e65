// Where a board's records go in NATS and how a message of them is named (docs/design.md
// "The fleet"). A message carries several whole stamped records of one (board, run), seq
// first_seq..last_seq, and says so in its headers, so a reader knows its range without
// parsing it:
//
//   subject  <prefix>.<board>                  (trace.rack3-b07)
//   headers  Nats-Msg-Id: <board>.<run>.<first_seq>   (JetStream drops a resend of it)
//            Tp-Board, Tp-Run, Tp-First-Seq, Tp-Last-Seq
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tp {

inline constexpr std::string_view default_subject_prefix = "trace";
inline constexpr const char* msg_id_header = "Nats-Msg-Id";
inline constexpr const char* board_header = "Tp-Board";
inline constexpr const char* run_header = "Tp-Run";
inline constexpr const char* first_seq_header = "Tp-First-Seq";
inline constexpr const char* last_seq_header = "Tp-Last-Seq";

// A subject prefix: dot-separated tokens without wildcards or blanks ("trace", "lab.rack3").
[[nodiscard]] bool is_subject_prefix(std::string_view prefix) noexcept;

[[nodiscard]] std::string board_subject(std::string_view prefix, std::string_view board);
// Every board's subject under the prefix (a stream's subjects; trace-pull without --board).
[[nodiscard]] std::string all_boards_subject(std::string_view prefix);
[[nodiscard]] std::string message_id(std::string_view board, std::string_view run, std::uint64_t first_seq);

// A fresh run id: the UTC start time and the process id, e.g. 20261127T101056Z-4242.
[[nodiscard]] std::string new_run_id();

// A shell glob over board names ('*' any run of characters, '?' one character).
[[nodiscard]] bool board_matches(std::string_view glob, std::string_view board) noexcept;

// The seq range a message says it holds, read from its headers' text.
struct SeqRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
};
// Seqs are below 2^63, so a range's end plus one never wraps: a seq above is none of
// trace-ship's (a hostile message, a journal that lies).
inline constexpr std::uint64_t seq_limit = std::uint64_t{1} << 63U;
// "FIRST" "LAST" as a range of seqs below seq_limit, FIRST <= LAST.
[[nodiscard]] std::optional<SeqRange> seq_range_of(std::string_view first_text, std::string_view last_text) noexcept;

}  // namespace tp
