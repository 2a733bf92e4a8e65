// CMSIS-DAP v2 SWO: the streaming endpoint when the probe has one, otherwise
// DAP_SWO_Data polling; UART or Manchester; overruns and stream errors from SWO_Status.
#include <fmt/format.h>

#include <algorithm>

#include "core/clock.hpp"
#include "probes/probe_link.hpp"
#include "swo/probe_sources.hpp"

namespace tp::swo {
namespace {

using namespace probes::cmsis_dap;
using probes::AdaptiveInterval;
using probes::CommandLink;
using probes::find_endpoint;

constexpr std::uint64_t status_every_us = 250'000;  // how often a streaming capture asks for overruns

class CmsisDapSource final : public SwoSource {
 public:
  CmsisDapSource(CommandLink link, std::optional<usb::EndpointInfo> stream, const ProbeSettings& settings)
      : link_(std::move(link)), stream_(stream), mode_(settings.mode) {
    packet_size_ = info_value(InfoId::packet_size).value_or(64);
    buffer_size_ = info_value(InfoId::swo_buffer_size).value_or(0);
    const auto info = parse_info_reply(link_.exchange(info_command(InfoId::capabilities), "DAP_Info"));
    capabilities_ = parse_capabilities(info.value_or(std::span<const std::uint8_t>{}));
    check_mode();
    command(control_command(false), Command::swo_control, "SWO_Control(stop)");  // a previous run may have left it on
    use_stream_ = stream_ && capabilities_.swo_streaming &&
                  parse_status_reply(Command::swo_transport,
                                     link_.exchange(transport_command(Transport::streaming_endpoint), "SWO_Transport"));
    if (!use_stream_) command(transport_command(Transport::data_command), Command::swo_transport, "SWO_Transport");
    command(mode_command(mode_), Command::swo_mode, "SWO_Mode");
    rate_ = negotiate_rate(settings.rate, 0, "the CMSIS-DAP probe", [this](std::uint32_t hz) {
      return parse_baudrate_reply(link_.exchange(baudrate_command(hz), "SWO_Baudrate")).value_or(0);
    });
    facts_.baud = rate_.achieved;
    command(control_command(true), Command::swo_control, "SWO_Control(start)");
    running_ = true;
  }

  CmsisDapSource(const CmsisDapSource&) = delete;
  CmsisDapSource& operator=(const CmsisDapSource&) = delete;
  CmsisDapSource(CmsisDapSource&&) = delete;
  CmsisDapSource& operator=(CmsisDapSource&&) = delete;
  ~CmsisDapSource() override { CmsisDapSource::close(); }

  PullResult pull(std::span<std::uint8_t> buffer, int timeout_ms) override {
    return use_stream_ ? pull_stream(buffer, timeout_ms) : pull_data(buffer, timeout_ms);
  }

  void close() noexcept override {
    if (!running_) return;
    running_ = false;
    try {  // leave the probe as we found it: capture off
      link_.exchange(control_command(false), "SWO_Control(stop)");
      link_.exchange(mode_command(Mode::off), "SWO_Mode(off)");
    } catch (const std::exception&) {  // the probe may be gone; nothing more to do
    }
  }

  [[nodiscard]] std::string description() const override {
    return fmt::format("CMSIS-DAP SWO {} via {}, {} bit/s (requested {}, {} attempt(s)), packet {} B, buffer {} B",
                       mode_ == Mode::manchester ? "Manchester" : "UART",
                       use_stream_ ? "the streaming endpoint" : "DAP_SWO_Data", rate_.achieved, rate_.requested,
                       rate_.attempts, packet_size_, buffer_size_);
  }

 private:
  std::optional<std::uint32_t> info_value(InfoId id) {
    const auto info = parse_info_reply(link_.exchange(info_command(id), "DAP_Info"));
    return info ? info_u32(*info) : std::nullopt;
  }

  void command(const std::vector<std::uint8_t>& bytes, Command which, std::string_view what) {
    if (!parse_status_reply(which, link_.exchange(bytes, what))) {
      throw Error(ExitCode::unsupported, fmt::format("{} refused {}", link_.name(), what));
    }
  }

  void check_mode() const {
    if (mode_ == Mode::manchester && !capabilities_.swo_manchester) {
      throw Error(ExitCode::unsupported,
                  fmt::format("{} has no Manchester SWO (DAP_Info capabilities); use --swo-mode uart", link_.name()));
    }
    if (mode_ == Mode::uart && !capabilities_.swo_uart) {
      throw Error(ExitCode::unsupported,
                  fmt::format("{} has no UART SWO (DAP_Info capabilities){}", link_.name(),
                              capabilities_.swo_manchester ? "; use --swo-mode manchester" : ""));
    }
  }

  void note_status(std::uint8_t status) {
    const bool overrun = (status & status_overrun) != 0;
    if (overrun && !overrun_seen_) ++counters_.overruns;
    overrun_seen_ = overrun;
    if ((status & status_stream_error) != 0) ++counters_.malformed_replies;
  }

  PullResult pull_stream(std::span<std::uint8_t> buffer, int timeout_ms) {
    const std::uint64_t now = monotonic_us();
    if (now - last_status_us_ >= status_every_us) {
      last_status_us_ = now;
      if (const auto status = parse_swo_status_reply(link_.exchange(status_command(), "SWO_Status"))) {
        note_status(status->status);
      }
    }
    // Whole packets only: a short buffer would make the probe babble.
    const std::size_t packet = std::max<std::size_t>(stream_->max_packet, 64);
    const std::size_t want = std::max(packet, buffer.size() / packet * packet);
    const auto got =
        link_.handle().read(*stream_, buffer.first(std::min(want, buffer.size())), std::min(timeout_ms, 100));
    return got && *got > 0 ? PullResult{Pull::data, *got} : PullResult{Pull::timeout, 0};
  }

  PullResult pull_data(std::span<std::uint8_t> buffer, int timeout_ms) {
    const std::uint64_t deadline = monotonic_us() + static_cast<std::uint64_t>(timeout_ms) * 1000U;
    const auto max_count = static_cast<std::uint16_t>(std::min<std::size_t>(packet_size_ - 4, buffer.size()));
    for (;;) {
      const auto reply = parse_swo_data_reply(link_.exchange(data_command(max_count), "DAP_SWO_Data"));
      if (!reply) {
        ++counters_.malformed_replies;
      } else {
        note_status(reply->status);
        if (!reply->data.empty()) {
          interval_.data();
          const std::size_t n = std::min(reply->data.size(), buffer.size());
          std::copy_n(reply->data.begin(), n, buffer.begin());
          return {Pull::data, n};
        }
      }
      if (!interval_.pause_until_next_poll(deadline)) return {Pull::timeout, 0};
    }
  }

  CommandLink link_;
  std::optional<usb::EndpointInfo> stream_;
  Mode mode_;
  Capabilities capabilities_;
  std::uint32_t packet_size_ = 64;
  std::uint32_t buffer_size_ = 0;
  bool use_stream_ = false;
  bool running_ = false;
  bool overrun_seen_ = false;
  std::uint64_t last_status_us_ = 0;
  NegotiatedRate rate_;
  AdaptiveInterval interval_;
};

}  // namespace

std::unique_ptr<SwoSource> open_cmsis_dap(const usb::Context& context, const probes::ProbeInfo& probe,
                                          const ProbeSettings& settings) {
  for (const auto& interface : probe.device.interfaces) {
    if (interface.name.find("CMSIS-DAP") == std::string::npos) continue;
    const auto* out = find_endpoint(interface, false, usb::TransferType::bulk);
    const auto* in = find_endpoint(interface, true, usb::TransferType::bulk);
    if (out == nullptr || in == nullptr) continue;  // v1 (HID): not supported for SWO here
    const auto* stream = find_endpoint(interface, true, usb::TransferType::bulk, 1);
    usb::DeviceHandle handle = context.open(probe.device);
    handle.claim(interface.number);
    return std::make_unique<CmsisDapSource>(CommandLink(std::move(handle), *out, *in, settings.reply_timeout_ms),
                                            stream != nullptr ? std::optional(*stream) : std::nullopt, settings);
  }
  throw Error(ExitCode::unsupported,
              fmt::format("{} has no CMSIS-DAP v2 (bulk) interface; CMSIS-DAP v1 (HID) SWO is not supported",
                          probe.device.id()));
}

}  // namespace tp::swo
