#include "fleet/chunk_builder.hpp"

#include <fmt/format.h>

#include <utility>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/out_buffer.hpp"
#include "records/fleet_fields.hpp"
#include "records/record_line.hpp"

namespace tp {

void InputMark::add(std::string_view data) noexcept {
  constexpr std::uint64_t fnv_prime = 0x100000001b3ULL;
  for (const char c : data) hash = (hash ^ static_cast<unsigned char>(c)) * fnv_prime;
  bytes += data.size();
}

namespace {

Error not_the_recorded_input(std::uint64_t seq, std::string_view how) {
  return Error(ExitCode::bad_input,
               fmt::format("the input is not the one the journal recorded: {} at seq {} (remove the journal to "
                           "ship this input as a new run, or give the input it recorded)",
                           how, seq));
}

}  // namespace

ChunkBuilder::ChunkBuilder(std::string board, std::string run, ChunkLimits limits, Sink sink)
    : board_(std::move(board)), run_(std::move(run)), limits_(limits), sink_(std::move(sink)) {
  open_.payload.reserve(limits_.max_bytes + 1024);
}

void ChunkBuilder::resume(std::optional<std::uint64_t> skip_through, InputMark skipped, std::deque<PlannedChunk> plan) {
  plan_ = std::move(plan);
  if (!skip_through) return;
  skip_through_plus_one_ = *skip_through + 1;
  skipped_mark_ = skipped;
  while (!plan_.empty() && plan_.front().range.last <= *skip_through) plan_.pop_front();
}

void ChunkBuilder::check_resumed_input_complete() const {
  if (next_seq_ < skip_through_plus_one_) {
    throw not_the_recorded_input(
        next_seq_, fmt::format("it ended before seq {}, acknowledged in the journal,", skip_through_plus_one_ - 1));
  }
}

bool ChunkBuilder::skip(std::uint64_t seq, InputMark mark) {
  if (seq >= skip_through_plus_one_) return false;
  ++skipped_;
  if (seq + 1 == skip_through_plus_one_ && skipped_mark_ && mark != *skipped_mark_) {
    throw not_the_recorded_input(seq, "its bytes up to the acknowledged seq differ");
  }
  return true;
}

void ChunkBuilder::check_planned(const Chunk& chunk) const {
  if (!plan_.empty() && plan_.front().range.last == chunk.last_seq && plan_.front().after != chunk.after) {
    throw not_the_recorded_input(chunk.last_seq, "its bytes differ from those of a chunk published before");
  }
}

bool ChunkBuilder::planned_end_reached() const noexcept {
  return !plan_.empty() && is_open_ && open_.last_seq >= plan_.front().range.last;
}

std::optional<std::int64_t> ChunkBuilder::due_us() const noexcept {
  if (!is_open_ || !plan_.empty()) return std::nullopt;
  return open_.opened_us + limits_.max_age_us;
}

void ChunkBuilder::open(std::int64_t host_us) {
  is_open_ = true;
  open_.payload.clear();
  open_.opened_us = host_us;
  open_.before = mark_;
  told_in_open_ = pending_loss_;
  pending_loss_.reset();
  if (told_in_open_) append_loss(*told_in_open_, "buffer_full", host_us);
}

void ChunkBuilder::append(std::string_view record, std::int64_t host_us) {
  if (!is_open_) open(host_us);
  const std::uint64_t seq = next_seq_++;
  if (open_.payload.empty()) open_.first_seq = seq;
  open_.last_seq = seq;
  append_stamped(open_.payload, record, FleetStamp{board_, run_, seq, static_cast<std::uint64_t>(host_us)});
}

void ChunkBuilder::append_loss(SeqRange range, std::string_view reason, std::int64_t host_us) {
  // Its timestamp is host monotonic time, as clock "us" means in every record (its host_us
  // says when on the wall clock).
  OutBuffer line(256);
  RecordLine loss(line, RecordHead{monotonic_us(), clock_name(RecordClock::us), 0, RecordKind::loss,
                                   source_name(RecordSource::trace_ship)});
  loss.data()
      .uint("first_seq", range.first)
      .uint("last_seq", range.last)
      .uint("records", range.last - range.first + 1)
      .name("reason", reason);
  loss.end();
  append(std::string_view(line.data(), line.size() - 1), host_us);  // without its newline
}

void ChunkBuilder::add(std::string_view record, std::int64_t host_us, InputMark mark) {
  // The fleet fields add at most this much (two names, two 20-digit numbers, the keys).
  const std::size_t stamped_most = record.size() + board_.size() + run_.size() + 80;
  if (stamped_most > limits_.max_message) {
    add_too_large(host_us, mark);
    return;
  }
  if (skip(next_seq_, mark)) {
    ++next_seq_;
    mark_ = mark;
    return;
  }
  if (is_open_ && plan_.empty() && open_.payload.size() + stamped_most > limits_.max_bytes) seal();
  if (is_open_ && !plan_.empty() && open_.payload.size() + stamped_most > limits_.max_message) {
    // No process published a chunk this large: the journal's range is not of this input.
    throw not_the_recorded_input(next_seq_,
                                 fmt::format("the chunk the journal says was published as seqs {}-{} "
                                             "would be larger than any message ({} bytes)",
                                             open_.first_seq, plan_.front().range.last, limits_.max_message));
  }
  append(record, host_us);  // a chunk it opens starts after the mark of the line before
  mark_ = mark;
  end_planned_chunk();
}

void ChunkBuilder::add_too_large(std::int64_t host_us, InputMark mark) {
  // Two seqs: the record's, never shipped, then its Loss record's (a chunk that begins with
  // that one starts after this line's mark); a resume skips both.
  mark_ = mark;
  const std::uint64_t seq = next_seq_++;
  if (skip(seq, mark) && skip(next_seq_, mark)) {
    ++next_seq_;
    return;
  }
  ++lost_too_large_;
  append_loss(SeqRange{seq, seq}, "too_large", host_us);
  end_planned_chunk();
}

void ChunkBuilder::end_planned_chunk() {
  if (planned_end_reached()) {
    seal();
    plan_.pop_front();
  }
}

void ChunkBuilder::seal_if_due(std::int64_t now_us) {
  const auto due = due_us();
  if (due && now_us >= *due) seal();
}

void ChunkBuilder::seal() {
  seal(false);
}

void ChunkBuilder::tell_loss(std::int64_t host_us) {
  seal(false);
  if (!pending_loss_) return;
  open(host_us);
  seal(true);
}

void ChunkBuilder::seal(bool must_wait) {
  if (!is_open_) return;
  is_open_ = false;
  Chunk chunk;
  chunk.payload.reserve(limits_.max_bytes + 1024);
  std::swap(chunk, open_);
  chunk.after = mark_;
  check_planned(chunk);
  const SeqRange range{chunk.first_seq, chunk.last_seq};
  if (sink_(std::move(chunk), must_wait)) return;
  // Refused: every seq of the chunk is lost, the Loss record it may have begun with too, and
  // what that one told is untold again; the first chunk that gets through tells it all.
  lost_buffer_full_ += range.last - range.first + 1;
  pending_loss_ = SeqRange{told_in_open_ ? told_in_open_->first : range.first, range.last};
}

}  // namespace tp
