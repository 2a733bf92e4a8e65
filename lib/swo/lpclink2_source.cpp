// LPC-Link2 proprietary SWO port (seed spec): Ohai, Initialize UART, rate negotiation,
// then polling with the epoch bookkeeping of lpclink2::PollTracker.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/clock.hpp"
#include "probes/lpclink2_protocol.hpp"
#include "probes/probe_link.hpp"
#include "swo/lpclink2_poll_tracker.hpp"
#include "swo/probe_sources.hpp"

namespace tp::swo {
namespace {

namespace commands = probes::lpclink2;
using probes::AdaptiveInterval;
using probes::CommandLink;
using probes::find_endpoint;

class LpcLink2Source final : public SwoSource {
 public:
  LpcLink2Source(CommandLink link, const ProbeSettings& settings) : link_(std::move(link)) {
    if (!commands::is_ohai_reply(link_.exchange(commands::ohai_command(), "Ohai (1f ff)"))) {
      throw Error(ExitCode::io_error, fmt::format("{}: unexpected answer to Ohai", link_.name()));
    }
    const auto max = commands::parse_init_uart_reply(link_.exchange(commands::init_uart_command(), "Initialize UART"));
    if (!max) throw Error(ExitCode::io_error, fmt::format("{}: unexpected answer to Initialize UART", link_.name()));
    max_rate_ = *max;
    rate_ = negotiate_rate(settings.rate, max_rate_, "the LPC-Link2", [this](std::uint32_t hz) {
      const auto achieved = commands::parse_set_rate_reply(link_.exchange(commands::set_rate_command(hz), "set rate"));
      return achieved.value_or(0);
    });
    facts_.baud = rate_.achieved;
  }

  PullResult pull(std::span<std::uint8_t> buffer, int timeout_ms) override {
    const std::uint64_t deadline = monotonic_us() + static_cast<std::uint64_t>(timeout_ms) * 1000U;
    while (pending_offset_ == pending_.size()) {
      pending_.clear();
      pending_offset_ = 0;
      tracker_.on_reply(link_.exchange(poll_, "poll"), pending_, counters_);
      if (tracker_.more_expected()) {  // data, or a flush after which more piled up: poll again now
        interval_.data();
        continue;
      }
      if (!interval_.pause_until_next_poll(deadline)) return {Pull::timeout, 0};
    }
    const std::size_t n = std::min(buffer.size(), pending_.size() - pending_offset_);
    std::memcpy(buffer.data(), pending_.data() + pending_offset_, n);
    pending_offset_ += n;
    return {Pull::data, n};
  }

  [[nodiscard]] std::string description() const override {
    return fmt::format("LPC-Link2 SWO port, {} bit/s (requested {}, {} attempt(s); probe maximum {}), {} flushes",
                       rate_.achieved, rate_.requested, rate_.attempts, max_rate_, tracker_.flushes());
  }

 private:
  CommandLink link_;
  const std::vector<std::uint8_t> poll_ = commands::poll_command();
  lpclink2::PollTracker tracker_;
  AdaptiveInterval interval_;
  NegotiatedRate rate_;
  std::uint32_t max_rate_ = 0;
  std::vector<std::uint8_t> pending_;
  std::size_t pending_offset_ = 0;
};

}  // namespace

std::unique_ptr<SwoSource> open_lpclink2(const usb::Context& context, const probes::ProbeInfo& probe,
                                         const ProbeSettings& settings) {
  const auto& interfaces = probe.device.interfaces;
  const auto data_port = std::find_if(interfaces.begin(), interfaces.end(),
                                      [](const usb::InterfaceInfo& i) { return i.name == commands::interface_name; });
  if (data_port == interfaces.end()) {
    throw Error(ExitCode::not_found,
                fmt::format("{} has no \"{}\" interface (firmware without the SWO port?)", probe.device.id(),
                            commands::interface_name),
                ErrorCode::probe_not_found);
  }
  const auto* out = find_endpoint(*data_port, false, usb::TransferType::interrupt);
  const auto* in = find_endpoint(*data_port, true, usb::TransferType::interrupt);
  if (out == nullptr || in == nullptr) {
    throw Error(ExitCode::io_error, "the LPC-Link2 data port lacks its interrupt endpoints");
  }
  usb::DeviceHandle handle = context.open(probe.device);
  handle.claim(data_port->number);
  return std::make_unique<LpcLink2Source>(
      CommandLink(std::move(handle), *out, *in, settings.reply_timeout_ms, commands::packet_size), settings);
}

}  // namespace tp::swo
