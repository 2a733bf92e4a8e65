#include "swo/lpclink2_poll_tracker.hpp"

#include <algorithm>

#include "core/byte_order.hpp"
#include "probes/lpclink2_protocol.hpp"

namespace tp::swo::lpclink2 {
namespace {

using probes::lpclink2::buffer_size;
using probes::lpclink2::ReplyKind;

constexpr std::size_t incremental_header = 5;  // 04 epoch p0 p1 p2
constexpr std::size_t flush_header = 2;        // 82 epoch

}  // namespace

std::size_t PollTracker::on_reply(std::span<const std::uint8_t> reply, std::vector<std::uint8_t>& out,
                                  SourceCounters& counters) {
  more_expected_ = false;
  if (reply.size() >= incremental_header && reply[0] == static_cast<std::uint8_t>(ReplyKind::incremental)) {
    return on_incremental(reply, out, counters);
  }
  if (reply.size() >= flush_header + buffer_size && reply[0] == static_cast<std::uint8_t>(ReplyKind::flush)) {
    return on_flush(reply, out, counters);
  }
  ++counters.malformed_replies;
  return 0;
}

bool PollTracker::enter_epoch(std::uint8_t epoch, SourceCounters& counters) {
  const auto current = *epoch_;
  // Epochs count up from 1 and wrap; after 255 accept 0 or 1 (the spec does not say which).
  const bool successor = epoch == static_cast<std::uint8_t>(current + 1U) || (current == 0xff && epoch == 1);
  if (!flushed_) {  // the flush that ends `current` never reached us: its tail is lost
    counters.lost_bytes += buffer_size - position_;
    ++counters.gaps;
  }
  if (!successor) ++counters.lost_sync;
  epoch_ = epoch;
  position_ = 0;
  flushed_ = false;
  return successor;
}

std::size_t PollTracker::on_incremental(std::span<const std::uint8_t> reply, std::vector<std::uint8_t>& out,
                                        SourceCounters& counters) {
  const std::uint8_t epoch = reply[1];
  const auto packed = load_little_endian<std::uint32_t, 3>(reply.data() + 2);
  const std::size_t before = packed & 0xfffU;
  const std::size_t after = packed >> 12U;
  if (packed != 0 && (after < before || after > buffer_size || reply.size() < incremental_header + after - before)) {
    ++counters.malformed_replies;
    return 0;
  }
  const bool first = !epoch_;
  if (first) {
    if (packed == 0) return 0;  // nothing known yet: wait for data to learn the epoch
    epoch_ = epoch;
    position_ = before;  // the very first packet is taken whole
  } else if (epoch != *epoch_) {
    enter_epoch(epoch, counters);
  }
  if (packed == 0) return 0;
  if (flushed_) {  // this epoch's flush already delivered everything
    counters.duplicate_bytes += after - before;
    return 0;
  }
  if (before > position_) {
    counters.lost_bytes += before - position_;
    ++counters.gaps;
  }
  const std::size_t from = std::max(before, position_);
  if (after <= from) {
    counters.duplicate_bytes += after - before;
    return 0;
  }
  counters.duplicate_bytes += from - before;
  const auto data = reply.subspan(incremental_header + (from - before), after - from);
  out.insert(out.end(), data.begin(), data.end());
  position_ = after;
  more_expected_ = true;
  return data.size();
}

std::size_t PollTracker::on_flush(std::span<const std::uint8_t> reply, std::vector<std::uint8_t>& out,
                                  SourceCounters& counters) {
  const std::uint8_t epoch = reply[1];
  more_expected_ = true;  // double-buffered: more may have piled up meanwhile
  ++flushes_;
  if (!epoch_) {
    epoch_ = epoch;
    position_ = 0;
  } else if (epoch != *epoch_) {
    enter_epoch(epoch, counters);
  } else if (flushed_) {
    counters.duplicate_bytes += buffer_size;
    return 0;
  }
  // [0, position_) repeats what 04 replies delivered: the protocol's normal behaviour.
  const auto data = reply.subspan(flush_header + position_, buffer_size - position_);
  out.insert(out.end(), data.begin(), data.end());
  position_ = buffer_size;
  flushed_ = true;
  return data.size();
}

}  // namespace tp::swo::lpclink2
