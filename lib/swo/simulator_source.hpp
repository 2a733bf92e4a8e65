// The simulated target as a capture source: whole events, paced to --rate, stopping at
// the last whole event within --max-bytes; optionally reports what it generated.
#pragma once

#include <deque>
#include <memory>
#include <optional>

#include "core/batched_writer.hpp"
#include "swo/pacer.hpp"
#include "swo/simulator.hpp"
#include "swo/swo_source.hpp"

namespace tp::swo {

struct SimulatorSourceOptions {
  SimulatorOptions target;
  std::uint64_t bytes_per_second = 0;  // 0 = as fast as the reader takes them
  std::uint64_t max_bytes = 0;         // 0 = no limit
};

class SimulatorSource final : public SwoSource {
 public:
  // `events`: where to write the records the generated events decode to (may be null).
  SimulatorSource(SimulatorSourceOptions options, std::unique_ptr<BatchedWriter> events);
  PullResult pull(std::span<std::uint8_t> buffer, int timeout_ms) override;
  void close() noexcept override;
  [[nodiscard]] std::string description() const override;
  [[nodiscard]] std::uint64_t events() const noexcept;
  [[nodiscard]] const SimulatedTarget& target() const noexcept { return target_; }

 private:
  bool refill();
  // The largest whole-event prefix of the next `allowed` bytes.
  [[nodiscard]] std::size_t whole_events(std::size_t allowed) const;
  void delivered(std::size_t bytes);

  SimulatorSourceOptions options_;
  SimulatedTarget target_;
  Pacer pacer_;
  std::unique_ptr<BatchedWriter> events_out_;
  itm::ByteBuffer pending_;
  std::size_t pending_offset_ = 0;
  std::string truth_;  // the records of the waiting events (with --sim-events)
  // Where each waiting event ends in pending_ and in truth_: only whole events are handed
  // out, and their records written once they are.
  struct EventEnd {
    std::size_t end;
    std::size_t truth_end;
  };
  std::deque<EventEnd> event_ends_;
  std::size_t truth_written_ = 0;
  std::uint64_t produced_ = 0;
  bool ended_ = false;
};

}  // namespace tp::swo
