#include "probe_models.hpp"

#include <algorithm>
#include <string>

namespace usbemu {
namespace {

constexpr std::size_t lpc_buffer = 1022;  // seed spec: the flush unit
constexpr std::size_t lpc_packet = 1024;
constexpr std::size_t lpc_max_data = lpc_packet - 5;

std::uint32_t load_u32(const Bytes& bytes, std::size_t at) {
  return bytes[at] | static_cast<std::uint32_t>(bytes[at + 1]) << 8U |
         static_cast<std::uint32_t>(bytes[at + 2]) << 16U | static_cast<std::uint32_t>(bytes[at + 3]) << 24U;
}

void append_u32(Bytes& bytes, std::uint32_t value) {
  for (unsigned i = 0; i < 4; ++i) bytes.push_back(static_cast<std::uint8_t>(value >> (8U * i)));
}

// A probe's UART: the closest rate at or below the request that clock / divider gives.
std::uint32_t divided_rate(std::uint32_t clock, std::uint32_t requested, std::uint32_t min_divider) {
  if (requested == 0) return 0;
  const std::uint32_t divider = std::max(min_divider, (clock + requested - 1) / requested);
  return clock / divider;
}

DeviceSpec lpclink2_spec(const LpcLink2Options& options) {
  DeviceSpec spec;
  spec.vendor_id = 0x1fc9;
  spec.product_id = 0x0090;
  spec.device_class = 0xef;
  spec.device_subclass = 2;
  spec.device_protocol = 1;
  spec.manufacturer = "NXP Semiconductors";
  spec.product = "LPC-LINK2 CMSIS-DAP V5.361";
  spec.serial = options.serial;
  spec.address = options.address;
  spec.sysfs_path = "/devices/pci0000:00/0000:00:14.0/usb1/1-" + std::to_string(options.address + 10);
  const Bytes hid{9, 0x21, 0x11, 0x01, 0, 1, 0x22, 33, 0};
  spec.interfaces = {
      {0x03, 0, 0, "LPC-LINK2 CMSIS-DAP V5.361", {{0x81, ep_interrupt, 1024, 1}, {0x01, ep_interrupt, 1024, 1}}, hid},
      {0x02, 2, 1, "LPC-LINK2 UART", {{0x83, ep_interrupt, 16, 8}}, {}},
      {0x0a, 0, 0, "LPC-LINK2 UART", {{0x82, ep_bulk, 512, 0}, {0x02, ep_bulk, 512, 0}}, {}},
      {0xff, 0, 0, "LPC-LINK2 SPARE", {}, {}},
      {0x03, 0, 0, "LPC-LINK2 DATA PORT", {{0x84, ep_interrupt, 1024, 1}, {0x04, ep_interrupt, 1024, 1}}, hid},
  };
  return spec;
}

}  // namespace

LpcLink2::LpcLink2(LpcLink2Options options)
    : DeviceModel(lpclink2_spec(options)), options_(std::move(options)), epoch_(options_.first_epoch) {
  kernel_driver_bound = {0, 4};  // usbhid holds the HID interfaces, as on a real host
}

void LpcLink2::arrive(std::size_t count) {
  const std::size_t n = std::min(count, options_.swo.size() - sent_);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t byte = options_.swo[sent_ + i];
    if (buffer_.size() < lpc_buffer) {
      buffer_.push_back(byte);
    } else {
      spill_.push_back(byte);
    }
  }
  sent_ += n;
}

void LpcLink2::poll(Bytes& reply) {
  arrive(options_.bytes_per_poll);
  if (options_.skip_epochs_after && epoch_ == static_cast<std::uint8_t>(*options_.skip_epochs_after + 1) &&
      reported_ == 0) {
    // Three epochs pass while the host is not looking: their bytes never reach it.
    options_.skip_epochs_after.reset();
    const std::size_t held = buffer_.size() + spill_.size();
    const std::size_t taken = std::min(held < 3 * lpc_buffer ? 3 * lpc_buffer - held : 0, options_.swo.size() - sent_);
    lost += held + taken;
    sent_ += taken;
    buffer_.clear();
    spill_.clear();
    epoch_ = static_cast<std::uint8_t>(epoch_ + 3);
    arrive(lpc_buffer);  // the next epoch fills before the host polls again: only its 0x82 is seen
  }
  if (buffer_.size() == lpc_buffer) {
    const bool lose = options_.lose_flush_of.contains(epoch_);
    if (lose) {
      lost += lpc_buffer - reported_;
    } else {
      reply = {0x82, epoch_};
      reply.insert(reply.end(), buffer_.begin(), buffer_.end());
      delivered.insert(delivered.end(), buffer_.begin() + static_cast<std::ptrdiff_t>(reported_), buffer_.end());
    }
    epoch_ = static_cast<std::uint8_t>(epoch_ + 1);
    const std::size_t carried = std::min(lpc_buffer, spill_.size());
    buffer_.assign(spill_.begin(), spill_.begin() + static_cast<std::ptrdiff_t>(carried));
    spill_.erase(spill_.begin(), spill_.begin() + static_cast<std::ptrdiff_t>(carried));
    reported_ = 0;
    if (!lose) return;
  }
  if (buffer_.size() > reported_) {
    const std::size_t before = reported_;
    const std::size_t after = std::min(buffer_.size(), before + lpc_max_data);
    const std::uint32_t packed = static_cast<std::uint32_t>(before) | static_cast<std::uint32_t>(after) << 12U;
    reply = {0x04, epoch_, static_cast<std::uint8_t>(packed), static_cast<std::uint8_t>(packed >> 8U),
             static_cast<std::uint8_t>(packed >> 16U)};
    reply.insert(reply.end(), buffer_.begin() + static_cast<std::ptrdiff_t>(before),
                 buffer_.begin() + static_cast<std::ptrdiff_t>(after));
    delivered.insert(delivered.end(), buffer_.begin() + static_cast<std::ptrdiff_t>(before),
                     buffer_.begin() + static_cast<std::ptrdiff_t>(after));
    reported_ = after;
    return;
  }
  reply = {0x04, epoch_, 0, 0, 0};  // nothing new: fill levels all zero
}

void LpcLink2::on_out(std::uint8_t endpoint, const Bytes& command) {
  if (endpoint != 0x04 || command.empty()) return;
  Bytes reply;
  switch (command[0]) {
    case 0x1f:
      if (command.size() >= 2 && command[1] == 0xff) reply = {0x1f, 0x38};
      break;
    case 0x03:
      reply = {0x03, 0, 0, 0, 0};
      append_u32(reply, options_.clock_hz / 8);
      break;
    case 0x01:
      if (command.size() >= 5) {
        rate = divided_rate(options_.clock_hz, load_u32(command, 1), 8);
        reply = {0x01};
        append_u32(reply, rate);
      }
      break;
    case 0x02:
      if (options_.answer_polls != 0 && polls >= options_.answer_polls) return;  // hung: never answers
      ++polls;
      poll(reply);
      break;
    default:
      return;  // unknown commands are never answered
  }
  if (reply.empty()) return;
  reply.resize(lpc_packet, 0);  // the probe pads every answer
  push_in_locked(0x84, std::move(reply));
}

namespace {

DeviceSpec cmsis_dap_spec(const CmsisDapOptions& options) {
  DeviceSpec spec;
  spec.vendor_id = 0x0d28;
  spec.product_id = 0x0204;
  spec.manufacturer = "ARM";
  spec.product = "DAPLink CMSIS-DAP";
  spec.serial = options.serial;
  spec.address = 3;
  spec.sysfs_path = "/devices/pci0000:00/0000:00:14.0/usb1/1-2";
  std::vector<Endpoint> endpoints{{0x01, ep_bulk, 512, 0}, {0x81, ep_bulk, 512, 0}};
  if (options.streaming) endpoints.push_back({0x82, ep_bulk, 512, 0});
  spec.interfaces = {{0xff, 0, 0, "CMSIS-DAP v2 Interface", endpoints, {}}};
  return spec;
}

}  // namespace

CmsisDapV2::CmsisDapV2(CmsisDapOptions options) : DeviceModel(cmsis_dap_spec(options)), options_(std::move(options)) {}

void CmsisDapV2::on_out(std::uint8_t endpoint, const Bytes& c) {
  if (endpoint != 0x01 || c.empty()) return;
  switch (c[0]) {
    case 0x00: {  // DAP_Info
      const std::uint8_t id = c.size() > 1 ? c[1] : 0;
      if (id == 0xff) {
        reply({0x00, 2, 0x00, 0x02});  // packet size 512
      } else if (id == 0xfd) {
        reply({0x00, 4, 0x00, 0x10, 0, 0});  // SWO buffer 4096
      } else if (id == 0xf0) {
        const auto caps =
            static_cast<std::uint8_t>(0x01 | 0x04 | (options_.manchester ? 0x08 : 0) | (options_.streaming ? 0x40 : 0));
        reply({0x00, 1, caps});
      } else {
        reply({0x00, 0});
      }
      break;
    }
    case 0x17:  // SWO_Transport
      reply({0x17,
             static_cast<std::uint8_t>(c.size() > 1 && (c[1] < 2 || (c[1] == 2 && options_.streaming)) ? 0 : 0xff)});
      break;
    case 0x18: {  // SWO_Mode
      const std::uint8_t wanted = c.size() > 1 ? c[1] : 0xff;
      const bool ok = wanted == 0 || wanted == 1 || (wanted == 2 && options_.manchester);
      if (ok) mode = wanted;
      reply({0x18, static_cast<std::uint8_t>(ok ? 0 : 0xff)});
      break;
    }
    case 0x19: {  // SWO_Baudrate
      rate = c.size() >= 5 ? divided_rate(options_.clock_hz, load_u32(c, 1), 1) : 0;
      Bytes answer{0x19};
      append_u32(answer, rate);
      reply(answer);
      break;
    }
    case 0x1a:  // SWO_Control
      running = c.size() > 1 && c[1] == 1;
      reply({0x1a, 0});
      break;
    case 0x1b: {  // SWO_Status
      const bool overrun = options_.report_overrun && running && sent > 0 && !overrun_reported_;
      overrun_reported_ = overrun_reported_ || overrun;
      Bytes answer{0x1b, static_cast<std::uint8_t>((running ? 0x01 : 0) | (overrun ? 0x80 : 0))};
      append_u32(answer, 0);
      reply(answer);
      break;
    }
    case 0x1c: {  // SWO_Data
      const std::size_t max = c.size() >= 3 ? (c[1] | static_cast<std::size_t>(c[2]) << 8U) : 0;
      const std::size_t n = running ? std::min({max, options_.bytes_per_poll, options_.swo.size() - sent}) : 0;
      Bytes answer{0x1c, static_cast<std::uint8_t>(running ? 0x01 : 0), static_cast<std::uint8_t>(n),
                   static_cast<std::uint8_t>(n >> 8U)};
      answer.insert(answer.end(), options_.swo.begin() + static_cast<std::ptrdiff_t>(sent),
                    options_.swo.begin() + static_cast<std::ptrdiff_t>(sent + n));
      sent += n;
      reply(answer);
      break;
    }
    default:
      reply({0xff});  // DAP_Invalid
  }
}

void CmsisDapV2::on_in_wanted(std::uint8_t endpoint, std::size_t length) {
  if (endpoint != 0x82 || !running || sent == options_.swo.size()) return;
  const std::size_t n = std::min({length, options_.bytes_per_poll, options_.swo.size() - sent});
  push_in_locked(0x82, Bytes(options_.swo.begin() + static_cast<std::ptrdiff_t>(sent),
                             options_.swo.begin() + static_cast<std::ptrdiff_t>(sent + n)));
  sent += n;
}

namespace {

DeviceSpec stlink_spec(const StLinkOptions& options) {
  DeviceSpec spec;
  spec.vendor_id = 0x0483;
  spec.product_id = options.v3 ? 0x374f : 0x3748;
  spec.manufacturer = "STMicroelectronics";
  spec.product = options.v3 ? "STLINK-V3" : "STM32 STLink";
  spec.serial = options.serial;
  spec.address = 4;
  spec.sysfs_path = "/devices/pci0000:00/0000:00:14.0/usb1/1-3";
  if (options.v3) {
    spec.interfaces = {
        {0xff, 0xff, 0xff, "ST Link", {{0x81, ep_bulk, 512, 0}, {0x01, ep_bulk, 512, 0}, {0x82, ep_bulk, 512, 0}}, {}}};
  } else {
    spec.interfaces = {
        {0xff, 0xff, 0xff, "ST Link", {{0x81, ep_bulk, 64, 0}, {0x02, ep_bulk, 64, 0}, {0x83, ep_bulk, 64, 0}}, {}}};
  }
  return spec;
}

}  // namespace

StLink::StLink(StLinkOptions options)
    : DeviceModel(stlink_spec(options)), options_(std::move(options)), trace_endpoint_(options_.v3 ? 0x82 : 0x83) {}

void StLink::on_out(std::uint8_t endpoint, const Bytes& c) {
  if (endpoint != (options_.v3 ? 0x01 : 0x02) || c.size() < 2) return;
  if (c[0] == 0xf1) {  // GET_VERSION: stlink 3 / J7, or stlink 2 / J12 (before trace, J13)
    const unsigned word = options_.v3 ? (3U << 12U | 7U << 6U) : (2U << 12U | 12U << 6U);
    push_in_locked(reply_endpoint_,
                   {static_cast<std::uint8_t>(word >> 8U), static_cast<std::uint8_t>(word), 0x83, 0x04,
                    static_cast<std::uint8_t>(spec().product_id), static_cast<std::uint8_t>(spec().product_id >> 8U)});
    return;
  }
  if (c[0] != 0xf2) return;
  switch (c[1]) {
    case 0x40: {  // START_TRACE_RX: u16 buffer size, u32 rate
      const std::uint32_t wanted = load_u32(c, 4);
      const bool ok = wanted > 0 && wanted <= (options_.v3 ? 24'000'000U : 2'250'000U);
      if (ok) {
        running = true;
        rate = wanted;
      }
      push_in_locked(reply_endpoint_, {static_cast<std::uint8_t>(ok ? 0x80 : 0x01), 0});
      break;
    }
    case 0x41:  // STOP_TRACE_RX
      running = false;
      push_in_locked(reply_endpoint_, {0x80, 0});
      break;
    case 0x42: {  // GET_TRACE_NB: what waits, then exactly that on the trace endpoint
      const std::size_t n =
          running ? std::min({options_.bytes_per_poll, std::size_t{4096}, options_.swo.size() - sent}) : 0;
      push_in_locked(reply_endpoint_, {static_cast<std::uint8_t>(n), static_cast<std::uint8_t>(n >> 8U)});
      if (n > 0) {
        push_in_locked(trace_endpoint_, Bytes(options_.swo.begin() + static_cast<std::ptrdiff_t>(sent),
                                              options_.swo.begin() + static_cast<std::ptrdiff_t>(sent + n)));
        sent += n;
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace usbemu
