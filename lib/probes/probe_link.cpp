#include "probes/probe_link.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "core/clock.hpp"

namespace tp::probes {

CommandLink::CommandLink(usb::DeviceHandle handle, usb::EndpointInfo out, usb::EndpointInfo in, int reply_timeout_ms,
                         std::size_t pad_to)
    : handle_(std::move(handle)),
      out_(out),
      in_(in),
      reply_timeout_ms_(reply_timeout_ms),
      pad_to_(pad_to),
      reply_(std::max<std::size_t>(in.max_packet, 64)) {}

std::span<const std::uint8_t> CommandLink::exchange(std::span<const std::uint8_t> command, std::string_view what) {
  if (command.size() > 1 && command.size() < pad_to_) {  // sent padded, as the vendor's tools do
    padded_.assign(command.begin(), command.end());
    padded_.resize(pad_to_, 0);
    command = padded_;
  }
  handle_.write(out_, command, reply_timeout_ms_);
  const auto got = handle_.read(in_, reply_, reply_timeout_ms_);
  if (!got) {
    throw Error(ExitCode::timeout,
                fmt::format("{} did not answer {} within {} ms (unplug and replug the probe)", handle_.name(), what,
                            reply_timeout_ms_),
                ErrorCode::target_not_responding);
  }
  return std::span<const std::uint8_t>(reply_).first(*got);
}

bool AdaptiveInterval::pause_until_next_poll(std::uint64_t deadline_us) {
  const auto delay = next_delay();
  if (monotonic_us() + static_cast<std::uint64_t>(delay.count()) * 1000U > deadline_us) return false;
  std::this_thread::sleep_for(delay);
  return true;
}

const usb::EndpointInfo* find_endpoint(const usb::InterfaceInfo& interface, bool in, usb::TransferType type, int skip) {
  for (const auto& endpoint : interface.endpoints) {
    if (endpoint.is_in() == in && endpoint.type == type && skip-- == 0) return &endpoint;
  }
  return nullptr;
}

}  // namespace tp::probes
