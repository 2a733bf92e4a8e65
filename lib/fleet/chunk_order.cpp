#include "fleet/chunk_order.hpp"

#include <fmt/format.h>

#include <utility>

namespace tp {
namespace {

// The lines of `payload` from line `skip` on.
std::string_view lines_from(std::string_view payload, std::uint64_t skip) {
  std::size_t at = 0;
  for (std::uint64_t i = 0; i < skip && at < payload.size(); ++i) {
    const std::size_t newline = payload.find('\n', at);
    at = newline == std::string_view::npos ? payload.size() : newline + 1;
  }
  return payload.substr(at);
}

}  // namespace

ChunkOrder::ChunkOrder(Limits limits, Emit emit, Gap gap)
    : limits_(limits), emit_(std::move(emit)), gap_(std::move(gap)) {}

void ChunkOrder::release(Stream& stream, SeqRange range, std::string_view payload) {
  if (range.last < stream.next) {
    duplicates_ += range.last - range.first + 1;
    return;
  }
  if (range.first < stream.next) {
    duplicates_ += stream.next - range.first;
    payload = lines_from(payload, stream.next - range.first);
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
    stream.next = first;
  }
  release_held(stream);
}

void ChunkOrder::add(std::string_view board, std::string_view run, SeqRange range, std::string_view payload,
                     std::int64_t now_us) {
  const std::string key = fmt::format("{} {}", board, run);
  auto it = streams_.find(key);
  if (it == streams_.end()) {
    // The first chunk of a run seen here: where this reader came in (--since), not a gap.
    it = streams_.emplace(key, Stream{std::string(board), std::string(run), range.first, {}}).first;
  }
  Stream& stream = it->second;
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
