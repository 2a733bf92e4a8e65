// What the probe sources share: a claimed USB interface used command/response style,
// and the adaptive poll interval (fast while data flows, ~10 ms when idle).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "usb/usb_device.hpp"

namespace tp::probes {

class CommandLink {
 public:
  CommandLink(usb::DeviceHandle handle, usb::EndpointInfo out, usb::EndpointInfo in, int reply_timeout_ms,
              std::size_t pad_to = 0);
  // Sends `command` and returns the reply. Throws Error(timeout) when none comes.
  std::span<const std::uint8_t> exchange(std::span<const std::uint8_t> command, std::string_view what);
  [[nodiscard]] usb::DeviceHandle& handle() noexcept { return handle_; }
  [[nodiscard]] const std::string& name() const noexcept { return handle_.name(); }
  [[nodiscard]] int reply_timeout_ms() const noexcept { return reply_timeout_ms_; }
  // Room for replies longer than one USB packet (CMSIS-DAP v2 packets of up to 64 KiB).
  void set_reply_capacity(std::size_t bytes) { reply_.resize(std::max(reply_.size(), bytes)); }

 private:
  usb::DeviceHandle handle_;
  usb::EndpointInfo out_;
  usb::EndpointInfo in_;
  int reply_timeout_ms_;
  std::size_t pad_to_;
  std::vector<std::uint8_t> padded_;
  std::vector<std::uint8_t> reply_;
};

// Poll delay: 0 after data, then 1, 2, 4, 8, 10, 10 ... ms while nothing comes.
class AdaptiveInterval {
 public:
  static constexpr int idle_ms = 10;
  void data() noexcept { idle_polls_ = 0; }
  [[nodiscard]] std::chrono::milliseconds next_delay() noexcept {
    const int delay = idle_polls_ >= 4 ? idle_ms : 1 << idle_polls_;
    ++idle_polls_;
    return std::chrono::milliseconds(delay);
  }
  // Sleeps for the next delay, unless that would pass `deadline_us` (monotonic): then
  // returns false at once, so the caller reports a timeout.
  bool pause_until_next_poll(std::uint64_t deadline_us);

 private:
  int idle_polls_ = 0;
};

const usb::EndpointInfo* find_endpoint(const usb::InterfaceInfo& interface, bool in, usb::TransferType type,
                                       int skip = 0);

}  // namespace tp::probes
