// trace-ship's reader side: numbers the records of one (board, run), stamps them (records/
// fleet_fields) and cuts them into chunks, the messages it publishes. A chunk is sealed when
// the next record would take it over max_bytes or when its first record is max_age old, so a
// slow stream is still shipped within max_age. Nothing numbered vanishes without a trace:
//
//   - a chunk the queue refuses (its buffer is full: the server is away) is lost as a whole,
//     and the next chunk the queue takes starts with a Loss record (reason buffer_full) for
//     every seq lost since the last one that got through (its own seq included);
//   - a record that would not fit in a message of the server's largest size is numbered and
//     not shipped; a Loss record (reason too_large) for its seq follows it at once.
//
// Resuming (ship_journal): seqs up to skip_through were shipped by an earlier process and are
// not shipped again; the chunks it published after them are cut again at the same seqs (the
// plan), so they carry the same message ids and JetStream's duplicate window drops the ones it
// already stored.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "fleet/fleet_subject.hpp"

namespace tp {

// Where the input stood: how many bytes were read and a hash (FNV-1a, 64 bits) of them all.
// The ship journal records it at each seq it keeps, so that a resume can tell whether the
// input it reads again is the one it recorded (ship_journal.hpp).
struct InputMark {
  std::uint64_t bytes = 0;
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  void add(std::string_view data) noexcept;
  friend bool operator==(const InputMark&, const InputMark&) = default;
};

// A chunk of an earlier process to cut again at the same seqs, and where the input stood
// after its last record.
struct PlannedChunk {
  SeqRange range;
  InputMark after;
};

struct Chunk {
  std::string payload;  // whole stamped record lines, each ending with '\n'
  std::uint64_t first_seq = 0;
  std::uint64_t last_seq = 0;
  std::int64_t opened_us = 0;  // host time of its first record
  InputMark before;            // the input up to the line of seq first_seq - 1
  InputMark after;             // the input up to the line of seq last_seq
};

struct ChunkLimits {
  std::size_t max_bytes = std::size_t{64} * 1024;
  std::int64_t max_age_us = 50'000;
  std::size_t max_message = std::size_t{1024} * 1024;  // the server's max_payload: a bigger record is too large
};

class ChunkBuilder {
 public:
  // Takes a sealed chunk; false when it cannot (the buffer is full): the chunk is lost.
  // `must_wait`: the chunk is the last word on a loss, worth waiting for room for.
  using Sink = std::function<bool(Chunk&&, bool must_wait)>;

  ChunkBuilder(std::string board, std::string run, ChunkLimits limits, Sink sink);

  // Resume after an earlier process: seqs <= skip_through (if any) are skipped, then chunks are cut at
  // the given ranges (in order) before the limits rule again. The input must stand at
  // `skipped` after seq skip_through and at each planned chunk's mark after its last seq:
  // otherwise it is not the input the journal recorded, and add() throws Error (bad_input)
  // before anything of it is shipped.
  void resume(std::optional<std::uint64_t> skip_through, InputMark skipped, std::deque<PlannedChunk> plan);
  // Throws Error (bad_input) when a resume's input ended before the seq it skips to.
  void check_resumed_input_complete() const;

  // A checked record line without its newline (ends with '}'), received at host_us; `mark`:
  // where the input stands after its line.
  void add(std::string_view record, std::int64_t host_us, InputMark mark = {});
  // A line too long to hold (over the largest message): numbered, not shipped, told lost.
  void add_too_large(std::int64_t host_us, InputMark mark = {});
  // Seals the open chunk when it is max_age old at now_us (the input went quiet).
  void seal_if_due(std::int64_t now_us);
  // Seals the open chunk whatever its age (end of input, stop).
  void seal();
  // At the end: a loss not yet told gets a chunk of its own, offered to wait for room.
  void tell_loss(std::int64_t host_us);
  // When the open chunk is due (for a reader's poll timeout), if one is open.
  [[nodiscard]] std::optional<std::int64_t> due_us() const noexcept;

  [[nodiscard]] std::uint64_t next_seq() const noexcept { return next_seq_; }
  [[nodiscard]] std::uint64_t skipped() const noexcept { return skipped_; }
  [[nodiscard]] std::uint64_t lost_buffer_full() const noexcept { return lost_buffer_full_; }
  [[nodiscard]] std::uint64_t lost_too_large() const noexcept { return lost_too_large_; }
  // The seq range lost to a full buffer and not yet told by a Loss record that got through.
  [[nodiscard]] std::optional<SeqRange> untold_loss() const noexcept { return pending_loss_; }

 private:
  void open(std::int64_t host_us);
  void seal(bool must_wait);
  void append(std::string_view record, std::int64_t host_us);
  void append_loss(SeqRange range, std::string_view reason, std::int64_t host_us);
  [[nodiscard]] bool planned_end_reached() const noexcept;
  // Counts one skipped seq of a resume; true when `seq` was one.
  bool skip(std::uint64_t seq, InputMark mark);
  void end_planned_chunk();
  void check_planned(const Chunk& chunk) const;

  std::string board_;
  std::string run_;
  ChunkLimits limits_;
  Sink sink_;
  Chunk open_;
  bool is_open_ = false;
  std::uint64_t next_seq_ = 0;
  std::uint64_t skip_through_plus_one_ = 0;
  std::optional<InputMark> skipped_mark_;  // where the input must stand after the last skipped seq
  std::deque<PlannedChunk> plan_;
  InputMark mark_;  // where the input stands after the last numbered line
  std::optional<SeqRange> pending_loss_;
  std::optional<SeqRange> told_in_open_;  // the loss the open chunk's first record tells
  std::uint64_t skipped_ = 0;
  std::uint64_t lost_buffer_full_ = 0;
  std::uint64_t lost_too_large_ = 0;
};

}  // namespace tp
