#include "fleet/chunk_builder.hpp"

#include <utility>

#include "core/clock.hpp"
#include "core/out_buffer.hpp"
#include "records/fleet_fields.hpp"
#include "records/record_line.hpp"

namespace tp {

ChunkBuilder::ChunkBuilder(std::string board, std::string run, ChunkLimits limits, Sink sink)
    : board_(std::move(board)), run_(std::move(run)), limits_(limits), sink_(std::move(sink)) {
  open_.payload.reserve(limits_.max_bytes + 1024);
}

void ChunkBuilder::resume(std::uint64_t skip_through, std::deque<SeqRange> plan) {
  skip_through_plus_one_ = skip_through + 1;
  plan_ = std::move(plan);
  while (!plan_.empty() && plan_.front().last <= skip_through) plan_.pop_front();
}

bool ChunkBuilder::planned_end_reached() const noexcept {
  return !plan_.empty() && is_open_ && open_.last_seq >= plan_.front().last;
}

std::optional<std::int64_t> ChunkBuilder::due_us() const noexcept {
  if (!is_open_ || !plan_.empty()) return std::nullopt;
  return open_.opened_us + limits_.max_age_us;
}

void ChunkBuilder::open(std::int64_t host_us) {
  is_open_ = true;
  open_.payload.clear();
  open_.opened_us = host_us;
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

void ChunkBuilder::add(std::string_view record, std::int64_t host_us) {
  if (next_seq_ < skip_through_plus_one_) {
    ++next_seq_;
    ++skipped_;
    return;
  }
  // The fleet fields add at most this much (two names, two 20-digit numbers, the keys).
  const std::size_t stamped_most = record.size() + board_.size() + run_.size() + 80;
  if (stamped_most > limits_.max_message) {
    const std::uint64_t seq = next_seq_++;
    ++lost_too_large_;
    append_loss(SeqRange{seq, seq}, "too_large", host_us);
  } else {
    if (is_open_ && plan_.empty() && open_.payload.size() + stamped_most > limits_.max_bytes) seal();
    append(record, host_us);
  }
  if (planned_end_reached()) {
    plan_.pop_front();
    seal();
  }
}

void ChunkBuilder::add_too_large(std::int64_t host_us) {
  if (next_seq_ < skip_through_plus_one_) {
    ++next_seq_;
    ++skipped_;
    return;
  }
  const std::uint64_t seq = next_seq_++;
  ++lost_too_large_;
  append_loss(SeqRange{seq, seq}, "too_large", host_us);
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
  const SeqRange range{chunk.first_seq, chunk.last_seq};
  if (sink_(std::move(chunk), must_wait)) return;
  // Refused: every seq of the chunk is lost, the Loss record it may have begun with too, and
  // what that one told is untold again; the first chunk that gets through tells it all.
  lost_buffer_full_ += range.last - range.first + 1;
  pending_loss_ = SeqRange{told_in_open_ ? told_in_open_->first : range.first, range.last};
}

}  // namespace tp
