#include "swo/simulator_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <numeric>

namespace tp::swo {
namespace {

constexpr std::size_t refill_bytes = std::size_t{64} * 1024;

}  // namespace

SimulatorSource::SimulatorSource(SimulatorSourceOptions options, std::unique_ptr<BatchedWriter> events)
    : options_(options), target_(options.target), pacer_(options.bytes_per_second), events_out_(std::move(events)) {
  facts_.probe = "simulator";
  facts_.target = "simulated Cortex-M target";
  facts_.cpu_hz = options_.target.cpu_hz;
}

// Generates whole events until about refill_bytes are waiting. Returns false once the
// byte limit is reached and nothing is left.
bool SimulatorSource::refill() {
  pending_.clear();
  pending_offset_ = 0;
  truth_.clear();
  truth_written_ = 0;
  event_ends_.clear();
  while (pending_.size() < refill_bytes) {
    const std::size_t before = pending_.size();
    const std::size_t truth_before = truth_.size();
    target_.next(pending_, events_out_ ? &truth_ : nullptr);
    if (options_.max_bytes != 0 && produced_ + pending_.size() > options_.max_bytes) {
      pending_.resize(before);  // this event does not fit: the stream ends before it
      truth_.resize(truth_before);
      target_.forget_last();
      ended_ = true;
      break;
    }
    event_ends_.push_back({pending_.size(), truth_.size()});
  }
  produced_ += pending_.size();
  return !pending_.empty();
}

std::size_t SimulatorSource::whole_events(std::size_t allowed) const {
  std::size_t end = pending_offset_;
  for (const auto& event : event_ends_) {
    if (event.end > pending_offset_ + allowed) break;
    end = event.end;
  }
  return end - pending_offset_;
}

void SimulatorSource::delivered(std::size_t bytes) {
  pending_offset_ += bytes;
  pacer_.sent(bytes);
  std::size_t truth_end = truth_written_;
  while (!event_ends_.empty() && event_ends_.front().end <= pending_offset_) {
    truth_end = event_ends_.front().truth_end;
    event_ends_.pop_front();
  }
  if (events_out_ && truth_end > truth_written_) {
    events_out_->write(std::string_view(truth_).substr(truth_written_, truth_end - truth_written_));
    truth_written_ = truth_end;
  }
}

PullResult SimulatorSource::pull(std::span<std::uint8_t> buffer, int timeout_ms) {
  if (pending_offset_ == pending_.size() && (ended_ || !refill())) return {Pull::end, 0};
  const std::size_t available = std::min(buffer.size(), pending_.size() - pending_offset_);
  const std::size_t next_event = event_ends_.front().end - pending_offset_;
  const std::size_t allowed = whole_events(pacer_.await(available, std::min(next_event, available), timeout_ms));
  if (allowed == 0) return {Pull::timeout, 0};
  std::memcpy(buffer.data(), pending_.data() + pending_offset_, allowed);
  delivered(allowed);
  return {Pull::data, allowed};
}

void SimulatorSource::close() noexcept {
  try {
    if (events_out_) events_out_->flush();
  } catch (const std::exception&) {  // the report is best effort; the stream itself is complete
  }
}

std::uint64_t SimulatorSource::events() const noexcept {
  const auto& counts = target_.counts();
  return std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
}

std::string SimulatorSource::description() const {
  return fmt::format(
      "simulated Cortex-M target, seed {}, {} Hz, {}", options_.target.seed, options_.target.cpu_hz,
      options_.bytes_per_second == 0 ? std::string("unpaced") : fmt::format("{} bytes/s", options_.bytes_per_second));
}

}  // namespace tp::swo
