#include "swo/lpclink2_protocol.hpp"

#include <algorithm>

namespace tp::swo::lpclink2 {
namespace {

constexpr std::size_t incremental_header = 5;  // 04 epoch p0 p1 p2
constexpr std::size_t flush_header = 2;        // 82 epoch

std::uint32_t load_u32(std::span<const std::uint8_t> bytes, std::size_t at) {
  return static_cast<std::uint32_t>(bytes[at]) | static_cast<std::uint32_t>(bytes[at + 1]) << 8U |
         static_cast<std::uint32_t>(bytes[at + 2]) << 16U | static_cast<std::uint32_t>(bytes[at + 3]) << 24U;
}

std::vector<std::uint8_t> with_u32(Command command, std::uint32_t value) {
  return {static_cast<std::uint8_t>(command), static_cast<std::uint8_t>(value), static_cast<std::uint8_t>(value >> 8U),
          static_cast<std::uint8_t>(value >> 16U), static_cast<std::uint8_t>(value >> 24U)};
}

}  // namespace

std::vector<std::uint8_t> ohai_command() {
  return {static_cast<std::uint8_t>(Command::ohai), 0xff};
}
std::vector<std::uint8_t> init_uart_command() {
  return {static_cast<std::uint8_t>(Command::init_uart)};
}
std::vector<std::uint8_t> set_rate_command(std::uint32_t hz) {
  return with_u32(Command::set_rate, hz);
}
std::vector<std::uint8_t> poll_command() {
  return {static_cast<std::uint8_t>(Command::poll)};
}

bool is_ohai_reply(std::span<const std::uint8_t> reply) {
  return reply.size() >= 2 && reply[0] == static_cast<std::uint8_t>(Command::ohai);
}

std::optional<std::uint32_t> parse_init_uart_reply(std::span<const std::uint8_t> reply) {
  if (reply.size() < 9 || reply[0] != static_cast<std::uint8_t>(Command::init_uart)) return std::nullopt;
  return load_u32(reply, 5);
}

std::optional<std::uint32_t> parse_set_rate_reply(std::span<const std::uint8_t> reply) {
  if (reply.size() < 5 || reply[0] != static_cast<std::uint8_t>(Command::set_rate)) return std::nullopt;
  return load_u32(reply, 1);
}

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
  const std::uint32_t packed = static_cast<std::uint32_t>(reply[2]) | static_cast<std::uint32_t>(reply[3]) << 8U |
                               static_cast<std::uint32_t>(reply[4]) << 16U;
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
