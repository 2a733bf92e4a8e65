#include "dap/dap_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "core/byte_order.hpp"
#include "dap/swd_protocol.hpp"
#include "probes/cmsis_dap_protocol.hpp"
#include "probes/probe_link.hpp"

namespace tp::dap {
namespace {

constexpr std::uint8_t hid_class = 3;
constexpr int halt_polls = 50;

constexpr std::array<ChipInfo, 14> chips{{
    {"cortex-m", "any Cortex-M (generic)", "Cortex-M", 0},
    {"stm32f0", "ST STM32F0", "Cortex-M0", 0},
    {"stm32f1", "ST STM32F1", "Cortex-M3", 0},
    {"stm32f4", "ST STM32F4", "Cortex-M4", 0},
    {"stm32f7", "ST STM32F7", "Cortex-M7", 0},
    {"stm32g4", "ST STM32G4", "Cortex-M4", 0},
    {"stm32l4", "ST STM32L4", "Cortex-M4", 0},
    {"stm32h7", "ST STM32H7", "Cortex-M7", 0},
    {"stm32", "ST STM32 (other series)", "Cortex-M", 0},
    {"nrf52", "Nordic nRF52", "Cortex-M4", 0},
    {"lpc55", "NXP LPC55xx", "Cortex-M33", 0},
    {"lpc", "NXP LPC (Cortex-M series)", "Cortex-M", 0},
    {"atsamd", "Microchip SAM D", "Cortex-M0+", 0},
    {"lm3s", "TI Stellaris LM3S", "Cortex-M3", 0},
}};

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

class DapMemory final : public target::TargetMemory {
 public:
  DapMemory(probes::CommandLink link, std::string model, const ChipInfo& chip, const AttachSettings& settings)
      : link_(std::move(link)), model_(std::move(model)), chip_(chip) {
    const auto info = probes::cmsis_dap::parse_info_reply(
        exchange(probes::cmsis_dap::info_command(probes::cmsis_dap::InfoId::packet_size), "DAP_Info"));
    packet_size_ = std::clamp<std::uint32_t>(info ? probes::cmsis_dap::info_u32(*info).value_or(64) : 64, 64, 16384);
    link_.set_reply_capacity(packet_size_);
    command(swj_clock_command(settings.swd_hz), Command::swj_clock, "DAP_SWJ_Clock");
    if (!connected_swd(exchange(connect_command(), "DAP_Connect"))) {
      throw Error(ExitCode::unsupported, fmt::format("{} cannot connect over SWD", link_.name()));
    }
    connected_ = true;
    command(transfer_configure_command(2, 128, 0), Command::transfer_configure, "DAP_TransferConfigure");
    command(jtag_to_swd_command(), Command::swj_sequence, "DAP_SWJ_Sequence");
    const TransferRequest read_idr{false, true, dp_idr, 0};
    const auto idr = transfer(std::span(&read_idr, 1), 1);
    if (!idr.ok()) {
      throw Error(ExitCode::timeout,
                  fmt::format("no target answered on SWD through {} (ACK {}): is it powered and wired?", link_.name(),
                              idr.response),
                  ErrorCode::target_not_responding);
    }
    dpidr_ = idr.data.at(0);
    power_up();
    const std::array<TransferRequest, 2> select{{{false, false, dp_select, std::uint32_t{chip_.access_port} << 24U},
                                                 {true, false, ap_csw, csw_word_increment}}};
    checked(select, 0, 0, 0);
    const std::uint32_t status = read_word(dhcsr);
    debug_was_enabled_ = (status & dhcsr_debugen) != 0;
  }

  DapMemory(const DapMemory&) = delete;
  DapMemory& operator=(const DapMemory&) = delete;
  DapMemory(DapMemory&&) = delete;
  DapMemory& operator=(DapMemory&&) = delete;
  ~DapMemory() override { DapMemory::release(); }

  void halt() override {
    if (halted_) return;
    if ((read_word(dhcsr) & dhcsr_s_halt) != 0) {  // halted by someone else: leave it to them
      halted_ = true;
      halted_by_us_ = false;
      return;
    }
    write_word(dhcsr, dhcsr_key | dhcsr_halt | dhcsr_debugen);
    for (int i = 0; i < halt_polls; ++i) {
      if ((read_word(dhcsr) & dhcsr_s_halt) != 0) {
        halted_ = true;
        halted_by_us_ = true;
        return;
      }
    }
    write_word(dhcsr, dhcsr_key | dhcsr_debugen);  // withdraw the request
    throw Error(ExitCode::timeout, fmt::format("the {} did not halt (DHCSR.S_HALT stayed 0)", chip_.core),
                ErrorCode::target_not_responding);
  }

  void resume() override {
    if (!halted_) return;
    if (halted_by_us_) write_word(dhcsr, dhcsr_key | dhcsr_debugen);
    halted_ = false;
    halted_by_us_ = false;
  }

  [[nodiscard]] bool halted() const noexcept override { return halted_; }
  // The MEM-AP reaches the bus whatever the core does (ADIv5 "MEM-AP"): RTT reads it running.
  [[nodiscard]] bool reads_while_running() const noexcept override { return true; }

  std::vector<std::uint8_t> read(std::uint64_t address, std::size_t length) override {
    return read_words(address, length, {}, 0);
  }

  // A word written after the read goes into the read's last DAP_Transfer when there is room:
  // an RTT poll with data is two USB round trips (descriptor; ring and RdOff), not three.
  void read_then_write(std::uint64_t address, std::size_t length, std::uint64_t write_address,
                       std::span<const std::uint8_t> bytes, std::vector<std::uint8_t>& out) override {
    if (length == 0 || write_address % 4 != 0 || bytes.size() != 4) {
      TargetMemory::read_then_write(address, length, write_address, bytes, out);
      return;
    }
    check_range(write_address, bytes.size());
    const std::array<TransferRequest, 2> then{{{true, false, ap_tar, static_cast<std::uint32_t>(write_address)},
                                               {true, false, ap_drw, load_le32(bytes.data())}}};
    const std::vector<std::uint8_t> data = read_words(address, length, then, write_address);
    out.insert(out.end(), data.begin(), data.end());
  }

  // The word before the write read in the same command, by the address auto-increment: TAR at
  // it, a read, then the write lands on the next word.
  std::uint32_t read_check_then_write(std::uint64_t address, std::size_t length, std::uint64_t write_address,
                                      std::span<const std::uint8_t> bytes, std::vector<std::uint8_t>& out) override {
    if (length == 0 || write_address % 4 != 0 || bytes.size() != 4 || write_address < 4 ||
        (write_address & (auto_increment_span - 1)) == 0) {
      return TargetMemory::read_check_then_write(address, length, write_address, bytes, out);
    }
    check_range(write_address - 4, bytes.size() + 4);
    const std::array<TransferRequest, 3> then{{{true, false, ap_tar, static_cast<std::uint32_t>(write_address - 4)},
                                               {true, true, ap_drw, 0},
                                               {true, false, ap_drw, load_le32(bytes.data())}}};
    std::vector<std::uint32_t> checked_word;
    const std::vector<std::uint8_t> data = read_words(address, length, then, write_address, &checked_word);
    out.insert(out.end(), data.begin(), data.end());
    return checked_word.empty() ? 0 : checked_word.front();
  }

  void write(std::uint64_t address, std::span<const std::uint8_t> bytes) override {
    check_range(address, bytes.size());
    const std::uint64_t first = address & ~std::uint64_t{3};
    const std::uint64_t last = (address + bytes.size() + 3) & ~std::uint64_t{3};
    std::vector<std::uint8_t> words(last - first);
    if (first != address || last != address + bytes.size()) {  // partial words: read, merge, write
      const auto edge_first = read(first, 4);
      const auto edge_last = read(last - 4, 4);
      std::copy(edge_first.begin(), edge_first.end(), words.begin());
      std::copy(edge_last.begin(), edge_last.end(), words.end() - 4);
    }
    std::copy(bytes.begin(), bytes.end(), words.begin() + static_cast<std::ptrdiff_t>(address - first));
    const std::size_t per_command = std::min<std::size_t>((packet_size_ - 3) / 5 - 1, 254);
    for (std::uint64_t at = first; at < last;) {
      const std::uint64_t boundary = (at | (auto_increment_span - 1)) + 1;
      const auto count = std::min<std::size_t>({per_command, (last - at) / 4, (boundary - at) / 4});
      std::vector<TransferRequest> requests{{true, false, ap_tar, static_cast<std::uint32_t>(at)}};
      for (std::size_t k = 0; k < count; ++k) {
        const std::size_t o = at - first + 4 * k;
        requests.push_back({true, false, ap_drw, load_le32(words.data() + o)});
      }
      checked(requests, 0, at, count * 4);
      at += count * 4;
    }
  }

  void release() noexcept override {
    if (!connected_) return;
    try {
      resume();
      if (!debug_was_enabled_) write_word(dhcsr, dhcsr_key);  // as we found it: halting debug off
      exchange(disconnect_command(), "DAP_Disconnect");
    } catch (const std::exception&) {  // the probe may be gone; nothing more to do
    }
    connected_ = false;
  }

  [[nodiscard]] std::uint64_t round_trips() const noexcept override { return round_trips_; }

  [[nodiscard]] std::string description() const override {
    return fmt::format("{} {} over SWD, DPIDR 0x{:08x}, {} ({}) on MEM-AP {}, packet {} B", model_, link_.name(),
                       dpidr_, chip_.family, chip_.core, chip_.access_port, packet_size_);
  }

 private:
  std::span<const std::uint8_t> exchange(const std::vector<std::uint8_t>& bytes, std::string_view what) {
    ++round_trips_;
    return link_.exchange(bytes, what);
  }

  void command(const std::vector<std::uint8_t>& bytes, Command which, std::string_view what) {
    if (!probes::cmsis_dap::parse_status_reply(which, exchange(bytes, what))) {
      throw Error(ExitCode::unsupported, fmt::format("{} refused {}", link_.name(), what));
    }
  }

  static void check_range(std::uint64_t address, std::size_t length) {
    if (address + length > (std::uint64_t{1} << 32U) || address + length < address) {
      throw target::MemoryError(
          address, length, fmt::format("0x{:x}+{} is outside the 32-bit address space of a Cortex-M", address, length));
    }
  }

  TransferReply transfer(std::span<const TransferRequest> requests, std::size_t reads) {
    const auto reply = parse_transfer_reply(exchange(transfer_command(requests), "DAP_Transfer"), reads);
    if (!reply) throw Error(ExitCode::io_error, fmt::format("{}: malformed DAP_Transfer reply", link_.name()));
    return *reply;
  }

  // Reads whole words (DAP_Transfer: TAR, then DRW reads within one auto-increment span), and
  // runs `then` (writes at `then_address`) after them: in the last command when it fits.
  std::vector<std::uint8_t> read_words(std::uint64_t address, std::size_t length, std::span<const TransferRequest> then,
                                       std::uint64_t then_address, std::vector<std::uint32_t>* then_data = nullptr) {
    const auto then_reads =
        static_cast<std::size_t>(std::count_if(then.begin(), then.end(), [](const auto& r) { return r.read; }));
    check_range(address, length);
    const std::uint64_t first = address & ~std::uint64_t{3};
    const std::uint64_t last = (address + length + 3) & ~std::uint64_t{3};
    std::vector<std::uint8_t> bytes;
    bytes.reserve(last - first);
    const std::size_t per_command = std::min<std::size_t>((packet_size_ - 3) / 4, 255 - 1);
    bool then_done = then.empty();
    for (std::uint64_t at = first; at < last;) {
      const std::uint64_t boundary = (at | (auto_increment_span - 1)) + 1;
      const auto words = std::min<std::size_t>({per_command, (last - at) / 4, (boundary - at) / 4});
      std::vector<TransferRequest> requests{{true, false, ap_tar, static_cast<std::uint32_t>(at)}};
      requests.resize(words + 1, TransferRequest{true, true, ap_drw, 0});
      // Command: 3 bytes, 1 per read, 5 per write; at most 255 transfers.
      const bool with_then = at + words * 4 >= last && !then_done && 3 + 5 + words + 5 * then.size() <= packet_size_ &&
                             requests.size() + then.size() <= 255 && words + then_reads <= per_command;
      if (with_then) {
        requests.insert(requests.end(), then.begin(), then.end());
        then_done = true;
      }
      const TransferReply reply = transfer(requests, words + (with_then ? then_reads : 0));
      const bool in_then = with_then && reply.data.size() >= words;  // failed after every read: in `then`
      expect_ok(reply, in_then ? then_address : at, in_then ? 4 : words * 4);
      for (std::size_t k = 0; k < reply.data.size(); ++k) {
        if (k >= words) {
          if (then_data != nullptr) then_data->push_back(reply.data[k]);
          continue;
        }
        for (unsigned i = 0; i < 4; ++i) bytes.push_back(static_cast<std::uint8_t>(reply.data[k] >> (8 * i)));
      }
      at += words * 4;
    }
    if (!then_done) {
      const TransferReply reply = checked(then, then_reads, then_address, 4);
      if (then_data != nullptr) then_data->assign(reply.data.begin(), reply.data.end());
    }
    return {bytes.begin() + static_cast<std::ptrdiff_t>(address - first),
            bytes.begin() + static_cast<std::ptrdiff_t>(address - first + length)};
  }

  // A transfer that must succeed; `address` and `length` name the memory for a FAULT.
  TransferReply checked(std::span<const TransferRequest> requests, std::size_t reads, std::uint64_t address,
                        std::size_t length) {
    auto reply = transfer(requests, reads);
    expect_ok(reply, address, length);
    return reply;
  }

  void expect_ok(const TransferReply& reply, std::uint64_t address, std::size_t length) {
    if (reply.ok()) return;
    const auto ack = reply.response & 0x07U;
    if (ack == static_cast<unsigned>(Ack::fault)) {
      const TransferRequest clear{false, false, dp_abort, abort_clear_all};  // sticky error off, then go on
      exchange(transfer_command(std::span(&clear, 1)), "DAP_Transfer(ABORT)");
      throw target::MemoryError(
          address, length,
          fmt::format("the target refused {} bytes at 0x{:x} (SWD FAULT: bus error)", length, address));
    }
    if (ack == static_cast<unsigned>(Ack::wait)) {
      throw Error(ExitCode::timeout, fmt::format("the target kept answering WAIT at 0x{:x}", address),
                  ErrorCode::target_not_responding);
    }
    throw Error(ExitCode::io_error, fmt::format("SWD transfer failed (response 0x{:02x}){}", reply.response,
                                                (reply.response & 0x08U) != 0 ? ": parity error" : ": no ACK"));
  }

  std::uint32_t read_word(std::uint32_t address) {
    const std::array<TransferRequest, 2> requests{{{true, false, ap_tar, address}, {true, true, ap_drw, 0}}};
    return checked(requests, 1, address, 4).data.at(0);
  }

  void write_word(std::uint32_t address, std::uint32_t value) {
    const std::array<TransferRequest, 2> requests{{{true, false, ap_tar, address}, {true, false, ap_drw, value}}};
    checked(requests, 0, address, 4);
  }

  void power_up() {
    const std::array<TransferRequest, 2> requests{
        {{false, false, dp_abort, abort_clear_all}, {false, false, dp_ctrl_stat, power_up_request}}};
    checked(requests, 0, 0, 0);
    const TransferRequest status{false, true, dp_ctrl_stat, 0};
    for (int i = 0; i < halt_polls; ++i) {
      const auto reply = transfer(std::span(&status, 1), 1);
      if (reply.ok() && (reply.data.at(0) & power_up_ack) == power_up_ack) return;
    }
    throw Error(ExitCode::timeout, "the debug port did not power up (CTRL/STAT)", ErrorCode::target_not_responding);
  }

  probes::CommandLink link_;
  std::string model_;
  const ChipInfo& chip_;
  std::uint32_t packet_size_ = 64;
  std::uint32_t dpidr_ = 0;
  std::uint64_t round_trips_ = 0;
  bool connected_ = false;
  bool halted_ = false;
  bool halted_by_us_ = false;
  bool debug_was_enabled_ = true;
};

// CMSIS-DAP v1: a HID interface of a device whose product string names CMSIS-DAP.
const usb::InterfaceInfo* hid_interface(const usb::DeviceInfo& device) {
  if (device.product.find("CMSIS-DAP") == std::string::npos) return nullptr;
  for (const auto& interface : device.interfaces) {
    if (interface.class_code == hid_class && probes::find_endpoint(interface, true, usb::TransferType::interrupt) &&
        probes::find_endpoint(interface, false, usb::TransferType::interrupt)) {
      return &interface;
    }
  }
  return nullptr;
}

}  // namespace

const ChipInfo& find_chip(std::string_view chip) {
  const std::string name = lower(chip);
  if (name.starts_with("rp2040")) {
    throw Error(ExitCode::unsupported,
                "rp2040 uses multi-drop SWD (two cores on one wire), which this backend does "
                "not select; use a GDB server (OpenOCD) with --gdb-server");
  }
  for (const auto& c : chips) {
    if (name.starts_with(c.prefix)) return c;
  }
  throw Error(ExitCode::usage, fmt::format("--attach '{}': unknown chip; known:\n{}", chip, known_chips()));
}

std::string known_chips() {
  std::string out;
  for (const auto& c : chips)
    out += fmt::format("  {:<10} {} ({}, MEM-AP {})\n", c.prefix, c.family, c.core, c.access_port);
  return out;
}

std::unique_ptr<target::TargetMemory> attach_cmsis_dap(const usb::Context& context, const AttachSettings& settings) {
  const ChipInfo& chip = find_chip(settings.chip);
  std::vector<probes::ProbeInfo> probes;
  for (const auto& device : context.list([](std::uint16_t, std::uint16_t) { return true; })) {
    if (auto probe = probes::classify_probe(device); probe && probe->kind == probes::ProbeKind::cmsis_dap) {
      probes.push_back(std::move(*probe));
    } else if (hid_interface(device) != nullptr) {
      probes.push_back({probes::ProbeKind::cmsis_dap, device, "CMSIS-DAP v1", "HID"});
    }
  }
  const probes::ProbeInfo probe = probes::select_probe(probes, settings.probe);
  usb::DeviceHandle handle = context.open(probe.device);
  if (const auto* hid = hid_interface(probe.device); hid != nullptr && probe.model == "CMSIS-DAP v1") {
    handle.claim(hid->number);
    const auto* out = probes::find_endpoint(*hid, false, usb::TransferType::interrupt);
    const auto* in = probes::find_endpoint(*hid, true, usb::TransferType::interrupt);
    // HID reports are fixed-size: every command is padded to the report size.
    probes::CommandLink link(std::move(handle), *out, *in, settings.reply_timeout_ms,
                             std::max<std::size_t>(out->max_packet, 64));
    return std::make_unique<DapMemory>(std::move(link), probe.model, chip, settings);
  }
  for (const auto& interface : probe.device.interfaces) {
    if (interface.name.find("CMSIS-DAP") == std::string::npos) continue;
    const auto* out = probes::find_endpoint(interface, false, usb::TransferType::bulk);
    const auto* in = probes::find_endpoint(interface, true, usb::TransferType::bulk);
    if (out == nullptr || in == nullptr) continue;
    handle.claim(interface.number);
    return std::make_unique<DapMemory>(probes::CommandLink(std::move(handle), *out, *in, settings.reply_timeout_ms),
                                       probe.model, chip, settings);
  }
  throw Error(ExitCode::unsupported, fmt::format("{} has no usable CMSIS-DAP interface", probe.device.id()));
}

}  // namespace tp::dap
