// trace-pull's reorder window: the chunks of each (board, run) released in seq order.
// JetStream stores a board's chunks in the order they arrived, which after a resend is not
// always seq order (the note on the fleet engines saw one chunk out of order in a leader
// kill). A chunk that comes early is held until the chunks before it come, for at most
// max_wait or while fewer than max_held are held; then what is missing is reported as a gap
// and the held chunks go on. Records of a gap, or from before the first one this reader
// wrote of the run, that come after all (late; a durable's message handed back by a reader
// that died holding it comes after the ack wait) are written then, out of seq order: they
// were written nowhere. A chunk, or the part of one, that was written already (a duplicate)
// is dropped and counted. What goes in are pieces of consecutive records read by
// ChunkRecords from the records' own fleet fields: a message's headers only name it, and a
// peer can lie in them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fleet/fleet_subject.hpp"
#include "json/ndjson_reader.hpp"

namespace tp {

// The records of one message, by their own board, run and seq: runs of consecutive seqs of
// one (board, run), in seq order (a chunk holding seq 9 then 7 gives 7, then 9). A line that
// is not a stamped record (not JSON, not an object, without a fleet board, run or seq, or a
// seq of 2^63 or more) is counted and reported, never passed on. Every value is parsed
// (simdjson's DOM, as the record tools do): a line is passed on byte for byte.
class ChunkRecords {
 public:
  struct Piece {
    std::string board;
    std::string run;
    SeqRange range;
    std::string lines;  // each with its newline
  };
  using BadLine = std::function<void(std::string_view problem)>;

  explicit ChunkRecords(BadLine on_bad_line);

  // The pieces of `payload`, valid until the next call.
  std::span<const Piece> read(std::string_view payload);
  [[nodiscard]] std::uint64_t bad_lines() const noexcept { return bad_lines_; }

 private:
  simdjson::error_code take(NdjsonLine& line);

  BadLine on_bad_line_;
  NdjsonReader reader_;
  std::vector<Piece> pieces_;
  std::size_t used_ = 0;  // pieces_ beyond used_ are kept for their buffers
  std::uint64_t bad_lines_ = 0;
};

class ChunkOrder {
 public:
  struct Limits {
    std::size_t max_held = 256;
    std::int64_t max_wait_us = 500'000;
  };
  // Whole record lines, in order.
  using Emit = std::function<void(std::string_view lines)>;
  // Seqs of a (board, run) that never came (within the window).
  using Gap = std::function<void(std::string_view board, std::string_view run, SeqRange missing)>;

  ChunkOrder(Limits limits, Emit emit, Gap gap);

  // A chunk of (board, run) holding seqs range.first..range.last, one line each.
  void add(std::string_view board, std::string_view run, SeqRange range, std::string_view payload, std::int64_t now_us);
  // Gives up waiting for what is missing where a held chunk is max_wait old.
  void tick(std::int64_t now_us);
  // Releases everything held (the end of the pull), reporting what is missing before it.
  void flush();

  [[nodiscard]] std::uint64_t records() const noexcept { return records_; }
  [[nodiscard]] std::uint64_t duplicates() const noexcept { return duplicates_; }
  [[nodiscard]] std::uint64_t missing() const noexcept { return missing_; }
  [[nodiscard]] std::uint64_t reordered() const noexcept { return reordered_; }
  // Records written out of seq order, behind later ones (of a gap, or before the first).
  [[nodiscard]] std::uint64_t late() const noexcept { return late_; }
  [[nodiscard]] std::size_t held() const noexcept { return held_count_; }

 private:
  struct Held {
    std::string payload;
    std::uint64_t last = 0;
    std::int64_t since_us = 0;
  };
  struct Stream {
    std::string board;
    std::string run;
    std::uint64_t next = 0;              // the seq expected next
    std::map<std::uint64_t, Held> held;  // by first seq
    // Seqs behind `next` written nowhere yet (before the first one written, gaps), as
    // first -> last; the oldest are forgotten past max_unwritten.
    std::map<std::uint64_t, std::uint64_t> unwritten;
  };
  void release(Stream& stream, SeqRange range, std::string_view payload);
  void release_held(Stream& stream);
  void skip_to_held(Stream& stream);
  // Writes the seqs of a chunk that are behind `next` and written nowhere (late); drops the
  // others as duplicates; leaves `range` and `payload` at what is not behind. False: nothing is.
  bool take_behind(Stream& stream, SeqRange& range, std::string_view& payload);
  static void forget_written(Stream& stream, std::map<std::uint64_t, std::uint64_t>::iterator it, SeqRange written);

  Limits limits_;
  Emit emit_;
  Gap gap_;
  std::map<std::string, Stream, std::less<>> streams_;  // by "board run"
  std::size_t held_count_ = 0;
  std::uint64_t records_ = 0;
  std::uint64_t duplicates_ = 0;
  std::uint64_t missing_ = 0;
  std::uint64_t reordered_ = 0;
  std::uint64_t late_ = 0;
};

}  // namespace tp
