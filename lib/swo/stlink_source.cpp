// ST-Link trace capture (as OpenOCD drives it): check the firmware, start trace RX at the
// requested rate, ask how many bytes wait, read exactly those from the trace endpoint.
#include <fmt/format.h>

#include <algorithm>

#include "core/clock.hpp"
#include "probes/probe_link.hpp"
#include "probes/stlink_protocol.hpp"
#include "swo/probe_sources.hpp"

namespace tp::swo {
namespace {

using namespace probes::stlink;
using probes::AdaptiveInterval;
using probes::CommandLink;
using probes::find_endpoint;

class StLinkSource final : public SwoSource {
 public:
  StLinkSource(CommandLink link, usb::EndpointInfo trace, Model model, const ProbeSettings& settings)
      : link_(std::move(link)), trace_(trace), model_(model) {
    const auto version = parse_version_reply(link_.exchange(get_version_command(), "GET_VERSION"));
    if (!version) throw Error(ExitCode::io_error, fmt::format("{}: unexpected version reply", link_.name()));
    version_ = *version;
    if (!firmware_has_trace(model_.generation, version_)) {
      throw Error(
          ExitCode::unsupported,
          fmt::format("{} firmware V{}J{} has no trace capture: update it to J13 or later (STM32CubeProgrammer)",
                      model_.name, version_.stlink, version_.jtag));
    }
    link_.exchange(stop_trace_command(), "STOP_TRACE_RX");  // a previous run may have left it on
    rate_ = negotiate_rate(settings.rate, max_trace_hz(model_.generation), model_.name, [this](std::uint32_t hz) {
      return parse_ok_reply(link_.exchange(start_trace_command(hz), "START_TRACE_RX")) ? hz : 0U;
    });
    facts_.baud = rate_.achieved;
    running_ = true;
  }

  StLinkSource(const StLinkSource&) = delete;
  StLinkSource& operator=(const StLinkSource&) = delete;
  StLinkSource(StLinkSource&&) = delete;
  StLinkSource& operator=(StLinkSource&&) = delete;
  ~StLinkSource() override { StLinkSource::close(); }

  PullResult pull(std::span<std::uint8_t> buffer, int timeout_ms) override {
    const std::uint64_t deadline = monotonic_us() + static_cast<std::uint64_t>(timeout_ms) * 1000U;
    for (;;) {
      if (waiting_ == 0) {
        const auto count = parse_trace_count_reply(link_.exchange(trace_count_, "GET_TRACE_NB"));
        if (!count) ++counters_.malformed_replies;
        waiting_ = count.value_or(0);
      }
      if (waiting_ > 0) {
        interval_.data();
        const auto got = link_.handle().read(trace_, buffer.first(std::min<std::size_t>(waiting_, buffer.size())),
                                             link_.reply_timeout_ms());
        if (!got) {
          throw Error(ExitCode::timeout,
                      fmt::format("{} announced {} trace bytes but sent none", link_.name(), waiting_),
                      ErrorCode::target_not_responding);
        }
        waiting_ -= std::min<std::size_t>(waiting_, *got);
        return {Pull::data, *got};
      }
      if (!interval_.pause_until_next_poll(deadline)) return {Pull::timeout, 0};
    }
  }

  void close() noexcept override {
    if (!running_) return;
    running_ = false;
    try {
      link_.exchange(stop_trace_command(), "STOP_TRACE_RX");
    } catch (const std::exception&) {  // the probe may be gone
    }
  }

  [[nodiscard]] std::string description() const override {
    return fmt::format("{} (firmware V{}J{}) trace, {} bit/s NRZ", model_.name, version_.stlink, version_.jtag,
                       rate_.achieved);
  }

 private:
  CommandLink link_;
  const std::vector<std::uint8_t> trace_count_ = trace_count_command();
  usb::EndpointInfo trace_;
  Model model_;
  Version version_;
  NegotiatedRate rate_;
  AdaptiveInterval interval_;
  std::size_t waiting_ = 0;
  bool running_ = false;
};

}  // namespace

std::unique_ptr<SwoSource> open_stlink(const usb::Context& context, const probes::ProbeInfo& probe,
                                       const ProbeSettings& settings) {
  const auto model = model_for(probe.device.product_id);
  if (!model || probe.device.interfaces.empty()) {
    throw Error(ExitCode::unsupported, fmt::format("{} is not an ST-Link with trace", probe.device.id()));
  }
  const Endpoints endpoints = endpoints_for(model->generation);
  const auto& interface = probe.device.interfaces.front();
  const auto endpoint = [&](std::uint8_t address) {
    for (const auto& e : interface.endpoints) {
      if (e.address == address) return e;
    }
    throw Error(ExitCode::io_error, fmt::format("{} lacks endpoint {:#04x}", model->name, address));
  };
  usb::DeviceHandle handle = context.open(probe.device);
  handle.claim(interface.number);
  return std::make_unique<StLinkSource>(CommandLink(std::move(handle), endpoint(endpoints.command_out),
                                                    endpoint(endpoints.reply_in), settings.reply_timeout_ms),
                                        endpoint(endpoints.trace_in), *model, settings);
}

}  // namespace tp::swo
