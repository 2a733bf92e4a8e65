#include "fleet/chunk_order.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <tuple>
#include <utility>

#include "fleet/payload_lines.hpp"
#include "records/fleet_fields.hpp"

namespace tp {
namespace {

// Unwritten ranges kept per run (each gap is one): past it, the oldest count as written.
constexpr std::size_t max_unwritten = 4096;

bool piece_before(const ChunkRecords::Piece& a, const ChunkRecords::Piece& b) {
  return std::tie(a.board, a.run, a.range.first) < std::tie(b.board, b.run, b.range.first);
}

}  // namespace

ChunkRecords::ChunkRecords(BadLine on_bad_line)
    : on_bad_line_(std::move(on_bad_line)),
      reader_([this](NdjsonLine& line) { return take(line); },
              [this](std::uint64_t, std::string_view problem) {
                ++bad_lines_;
                if (on_bad_line_) on_bad_line_(problem);
              }) {}

simdjson::error_code ChunkRecords::take(NdjsonLine& line) {
  std::string_view board;
  std::string_view run;
  std::uint64_t seq = 0;
  if (line.root["board"].get(board) != simdjson::SUCCESS || line.root["run"].get(run) != simdjson::SUCCESS ||
      line.root["seq"].get(seq) != simdjson::SUCCESS) {
    line.problem = "without a string board and run and an integer seq";
    return simdjson::INCORRECT_TYPE;
  }
  if (!is_fleet_name(board) || !is_fleet_name(run) || seq >= seq_limit) {
    line.problem = "with a board or run that is not a name, or a seq of 2^63 or more";
    return simdjson::INCORRECT_TYPE;
  }
  if (used_ > 0) {
    Piece& last = pieces_[used_ - 1];
    if (last.range.last + 1 == seq && last.board == board && last.run == run) {
      last.range.last = seq;
      last.lines.append(line.text).push_back('\n');
      return simdjson::SUCCESS;
    }
  }
  if (used_ == pieces_.size()) pieces_.emplace_back();
  Piece& piece = pieces_[used_++];
  piece.board.assign(board);
  piece.run.assign(run);
  piece.range = SeqRange{seq, seq};
  piece.lines.assign(line.text).push_back('\n');
  return simdjson::SUCCESS;
}

std::span<const ChunkRecords::Piece> ChunkRecords::read(std::string_view payload) {
  used_ = 0;
  reader_.restart();
  reader_.feed(payload);
  reader_.finish();
  const auto pieces = std::span<Piece>(pieces_).first(used_);
  if (!std::ranges::is_sorted(pieces, piece_before)) std::ranges::stable_sort(pieces, piece_before);
  return pieces;
}

ChunkOrder::ChunkOrder(Limits limits, Emit emit, Gap gap)
    : limits_(limits), emit_(std::move(emit)), gap_(std::move(gap)) {}

void ChunkOrder::release(Stream& stream, SeqRange range, std::string_view payload) {
  if (range.last < stream.next) {
    duplicates_ += range.last - range.first + 1;
    return;
  }
  if (range.first < stream.next) {
    duplicates_ += stream.next - range.first;
    payload = lines_after(payload, stream.next - range.first);
    range.first = stream.next;
  }
  records_ += range.last - range.first + 1;
  emit_(payload);
  stream.next = range.last + 1;
}

void ChunkOrder::release_held(Stream& stream) {
  while (!stream.held.empty() && stream.held.begin()->first <= stream.next) {
    auto node = stream.held.extract(stream.held.begin());
    --held_count_;
    release(stream, SeqRange{node.key(), node.mapped().last}, node.mapped().payload);
  }
}

void ChunkOrder::skip_to_held(Stream& stream) {
  const std::uint64_t first = stream.held.begin()->first;
  if (first > stream.next) {
    missing_ += first - stream.next;
    gap_(stream.board, stream.run, SeqRange{stream.next, first - 1});
    stream.unwritten.emplace(stream.next, first - 1);
    if (stream.unwritten.size() > max_unwritten) stream.unwritten.erase(stream.unwritten.begin());
    stream.next = first;
  }
  release_held(stream);
}

void ChunkOrder::forget_written(Stream& stream, std::map<std::uint64_t, std::uint64_t>::iterator it, SeqRange written) {
  const SeqRange was{it->first, it->second};
  stream.unwritten.erase(it);
  if (was.first < written.first) stream.unwritten.emplace(was.first, written.first - 1);
  if (written.last < was.last) stream.unwritten.emplace(written.last + 1, was.last);
}

bool ChunkOrder::take_behind(Stream& stream, SeqRange& range, std::string_view& payload) {
  const std::uint64_t end = std::min(range.last + 1, stream.next);  // past the part behind
  for (std::uint64_t seq = range.first; seq < end;) {
    auto after = stream.unwritten.upper_bound(seq);
    if (after != stream.unwritten.begin() && std::prev(after)->second >= seq) {
      const SeqRange late{seq, std::min(std::prev(after)->second, end - 1)};
      const std::uint64_t count = late.last - late.first + 1;
      emit_(lines_before(lines_after(payload, seq - range.first), count));
      late_ += count;
      records_ += count;
      forget_written(stream, std::prev(after), late);
      seq = late.last + 1;
    } else {
      const std::uint64_t written_to = after == stream.unwritten.end() ? end : std::min(after->first, end);
      duplicates_ += written_to - seq;
      seq = written_to;
    }
  }
  if (range.last < stream.next) return false;
  payload = lines_after(payload, end - range.first);
  range.first = end;
  return true;
}

void ChunkOrder::add(std::string_view board, std::string_view run, SeqRange range, std::string_view payload,
                     std::int64_t now_us) {
  const std::string key = fmt::format("{} {}", board, run);
  auto it = streams_.find(key);
  if (it == streams_.end()) {
    // The first chunk of a run seen here: where this reader came in (--since), not a gap.
    it = streams_.emplace(key, Stream{std::string(board), std::string(run), range.first, {}, {}}).first;
    if (range.first > 0) it->second.unwritten.emplace(0, range.first - 1);
  }
  Stream& stream = it->second;
  if (range.first < stream.next && !take_behind(stream, range, payload)) return;
  if (range.first <= stream.next) {
    release(stream, range, payload);
    release_held(stream);
    return;
  }
  ++reordered_;
  auto [held, inserted] = stream.held.try_emplace(range.first, Held{std::string(payload), range.last, now_us});
  if (!inserted) {
    duplicates_ += range.last - range.first + 1;  // the same chunk twice, both early
    return;
  }
  ++held_count_;
  if (held_count_ > limits_.max_held) skip_to_held(stream);
}

void ChunkOrder::tick(std::int64_t now_us) {
  if (held_count_ == 0) return;
  for (auto& [key, stream] : streams_) {
    if (!stream.held.empty() && now_us - stream.held.begin()->second.since_us >= limits_.max_wait_us) {
      skip_to_held(stream);
    }
  }
}

void ChunkOrder::flush() {
  for (auto& [key, stream] : streams_) {
    while (!stream.held.empty()) skip_to_held(stream);
  }
}

}  // namespace tp
