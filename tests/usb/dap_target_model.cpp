#include "dap_target_model.hpp"

#include <algorithm>

namespace usbemu {
namespace {

constexpr std::uint32_t dpidr = 0x2BA01477;  // an ARM SW-DP (Cortex-M3/M4)
constexpr std::uint32_t dhcsr_address = 0xE000EDF0;
constexpr std::uint32_t history_1 = 0x20000100;
constexpr std::uint32_t history_2 = 0x20000140;
constexpr std::uint32_t history_3 = 0x20000180;
constexpr std::uint32_t log_1 = 0x20000f00;  // 256 items: 0x20000f00..0x20001300 crosses 0x20001000
constexpr std::uint32_t log_2 = 0x20001400;
constexpr std::uint32_t log_3 = 0x20001800;
constexpr std::uint32_t clocks_base = 0x20000200;
constexpr std::uint32_t log_capacity = 256;
constexpr std::size_t report_size = 64;
constexpr std::uint32_t rtt_up_buffer = 0x20001C80;
constexpr std::uint32_t rtt_up_size = 512;
constexpr std::uint32_t rtt_down_buffer = 0x20001E80;
constexpr std::uint32_t rtt_down_size = 64;

DeviceSpec spec_for(const DapTargetOptions& options) {
  DeviceSpec spec;
  spec.vendor_id = 0x0d28;
  spec.product_id = 0x0204;
  spec.manufacturer = "ARM";
  spec.product = options.hid ? "DAPLink CMSIS-DAP" : "DAPLink CMSIS-DAP v2";
  spec.serial = options.serial;
  spec.address = 5;
  spec.sysfs_path = "/devices/pci0000:00/0000:00:14.0/usb1/1-5";
  if (options.hid) {
    const Bytes hid{9, 0x21, 0x11, 0x01, 0, 1, 0x22, 33, 0};
    spec.interfaces = {{0x03, 0, 0, "CMSIS-DAP HID", {{0x81, ep_interrupt, 64, 1}, {0x01, ep_interrupt, 64, 1}}, hid}};
  } else {
    spec.interfaces = {{0xff, 0, 0, "CMSIS-DAP v2 Interface", {{0x01, ep_bulk, 512, 0}, {0x81, ep_bulk, 512, 0}}, {}}};
  }
  return spec;
}

std::uint32_t u32_at(const Bytes& bytes, std::size_t at) {
  return static_cast<std::uint32_t>(bytes[at]) | static_cast<std::uint32_t>(bytes[at + 1]) << 8U |
         static_cast<std::uint32_t>(bytes[at + 2]) << 16U | static_cast<std::uint32_t>(bytes[at + 3]) << 24U;
}

void put_u32(Bytes& bytes, std::uint32_t value) {
  for (unsigned i = 0; i < 4; ++i) bytes.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}

}  // namespace

DapTarget::DapTarget(DapTargetOptions options)
    : DeviceModel(spec_for(options)), options_(std::move(options)), ram_(ram_size, 0) {
  if (options_.hid) kernel_driver_bound = {0};
  const std::uint32_t histories[3] = {history_1, history_2, history_3};
  const std::uint32_t logs[3] = {log_1, log_2, log_3};
  for (std::uint32_t k = 0; k < 3; ++k) {
    const std::uint32_t handle = ram_base + 0x40 + 4 * k;
    set_word(reference_1 + 4 * k, handle);
    set_word(handle, histories[k]);
    const std::uint32_t h = histories[k];
    const std::uint32_t clocks = clocks_base + 0x10 * k;
    set_word(h + 0, k + 1);    // tracer_id
    set_word(h + 16, clocks);  // clocks: ptr, capacity 2, length 1
    set_word(h + 20, 2);
    set_word(h + 24, 1);
    set_word(clocks, k + 1);    // LogicalClock { id, count 0 }
    set_word(h + 28, logs[k]);  // compact_log: ptr, capacity, length
    set_word(h + 32, log_capacity);
    log_item(h, 0x80000000U | (k + 1));  // ekotrace starts its log with its clocks
    log_item(h, 0);
    written[k + 1].push_back({true, k + 1, 0, false});
  }
  ram_[history_3 + 40 - ram_base] = 1;  // tracer 3 is always inside the firmware
  run_firmware();
  if (options_.rtt) init_rtt();
}

// SEGGER_RTT.c _DoInit: the block zeroed, counts, buffer 0 up and down named "Terminal",
// the id written last.
void DapTarget::init_rtt() {
  constexpr std::uint32_t name = rtt_block + 0x60;
  set_word(rtt_block + 16, 1);  // MaxNumUpBuffers
  set_word(rtt_block + 20, 1);  // MaxNumDownBuffers
  const char terminal[12] = "Terminal";
  for (unsigned i = 0; i < sizeof terminal; ++i) ram_[name - ram_base + i] = static_cast<std::uint8_t>(terminal[i]);
  const std::uint32_t up = rtt_block + 24;
  const std::uint32_t down = rtt_block + 48;
  set_word(up, name);
  set_word(up + 4, rtt_up_buffer);
  set_word(up + 8, rtt_up_size);
  set_word(down, name);
  set_word(down + 4, rtt_down_buffer);
  set_word(down + 8, rtt_down_size);
  const char id[11] = "SEGGER RTT";
  for (unsigned i = 0; i < 10; ++i) ram_[rtt_block - ram_base + i] = static_cast<std::uint8_t>(id[i]);
}

// Two lines per call while lines are left, each stored whole or skipped (NO_BLOCK_SKIP); the
// down buffer read empty.
void DapTarget::run_rtt_firmware() {
  const std::uint32_t up = rtt_block + 24;
  if (!options_.rtt_stream.empty()) {  // a byte stream, waiting for room (BLOCK_IF_FIFO_FULL)
    const std::uint32_t read = word(up + 16);
    std::uint32_t write = word(up + 12);
    const std::uint32_t free = read > write ? read - write - 1 : rtt_up_size - (write - read) - 1;
    const std::size_t count = std::min<std::size_t>({free, 64, options_.rtt_stream.size() - rtt_stream_written});
    for (std::size_t i = 0; i < count; ++i) {
      ram_[rtt_up_buffer + write - ram_base] = options_.rtt_stream[rtt_stream_written++];
      write = (write + 1) % rtt_up_size;
    }
    set_word(up + 12, write);
    return;
  }
  for (int k = 0; k < 2 && rtt_written.size() + rtt_skipped < options_.rtt_lines; ++k) {
    const std::string line = "rtt line " + std::to_string(rtt_written.size() + rtt_skipped) + " of the model\n";
    const std::uint32_t read = word(up + 16);
    std::uint32_t write = word(up + 12);
    const std::uint32_t free = read > write ? read - write - 1 : rtt_up_size - (write - read) - 1;
    if (free < line.size()) {
      ++rtt_skipped;
      continue;
    }
    for (const char c : line) {
      ram_[rtt_up_buffer + write - ram_base] = static_cast<std::uint8_t>(c);
      write = (write + 1) % rtt_up_size;
    }
    set_word(up + 12, write);  // after the bytes (SEGGER_RTT.c: "Make sure the data is written first")
    rtt_written.push_back(line);
  }
  const std::uint32_t down = rtt_block + 48;
  std::uint32_t read = word(down + 16);
  const std::uint32_t write = word(down + 12);
  while (read != write) {
    rtt_received += static_cast<char>(ram_[rtt_down_buffer + read - ram_base]);
    read = (read + 1) % rtt_down_size;
  }
  set_word(down + 16, read);
}

std::uint32_t DapTarget::word(std::uint32_t address) const {
  return u32_at(ram_, address - ram_base);
}

void DapTarget::set_word(std::uint32_t address, std::uint32_t value) {
  for (unsigned i = 0; i < 4; ++i) ram_[address - ram_base + i] = static_cast<std::uint8_t>(value >> (8 * i));
}

void DapTarget::log_item(std::uint32_t history, std::uint32_t value) {
  const std::uint32_t length = word(history + 36);
  if (length >= log_capacity) return;  // full: the collector is too slow (the test would see the loss)
  set_word(word(history + 28) + 4 * length, value);
  set_word(history + 36, length + 1);
}

void DapTarget::run_firmware() {
  // Each run: five events per tracer, every third with a payload, a clock tick every eighth step.
  for (int i = 0; i < 5; ++i) {
    ++step_;
    for (std::uint32_t id = 1; id <= 2; ++id) {
      const std::uint32_t h = id == 1 ? history_1 : history_2;
      if (step_ % 8 == 0) {
        const std::uint32_t clocks = word(h + 16);
        set_word(clocks + 4, word(clocks + 4) + 1);
        log_item(h, 0x80000000U | id);
        log_item(h, word(clocks + 4));
        written[id].push_back({true, id, word(clocks + 4), false});
      } else if (step_ % 3 == 0) {
        log_item(h, 0x40000000U | 100U);
        log_item(h, step_ * 10 + id);
        written[id].push_back({false, 100, step_ * 10 + id, true});
      } else {
        log_item(h, 1 + step_ % 5);
        written[id].push_back({false, 1 + step_ % 5, 0, false});
      }
    }
  }
}

bool DapTarget::access(bool write, std::uint32_t address, std::uint32_t& value) {
  if (address == dhcsr_address) {
    if (write) {
      if ((value & 0xffff0000U) != 0xA05F0000U) return true;  // no key: ignored (ARMv7-M C1.6.2)
      debug_enabled = (value & 1U) != 0;
      const bool halt = debug_enabled && (value & 2U) != 0;
      if (halt && !halted) {
        run_firmware();  // it ran until now
        ++halts;
      }
      halted = halt;
      dhcsr_ = value & 0x3U;
    } else {
      value = (halted ? 1U << 17U : 0U) | (debug_enabled ? 1U : 0U) | (halted ? 2U : 0U) | (1U << 16U);
    }
    return true;
  }
  if (address < ram_base || address + 4 > ram_base + ram_size || address % 4 != 0) return false;
  if (write) {
    set_word(address, value);
  } else {
    value = word(address);
  }
  return true;
}

void DapTarget::transfer(const Bytes& c, Bytes& reply) {
  // DAP_Transfer: index, count, then per transfer a request byte (+ 4 data bytes if a write).
  const std::size_t count = c.size() > 2 ? c[2] : 0;
  std::size_t at = 3;
  std::size_t done = 0;
  std::uint8_t ack = 1;
  Bytes data;
  for (; done < count && at < c.size(); ++done) {
    const std::uint8_t request = c[at++];
    const bool ap = (request & 1U) != 0;
    const bool read = (request & 2U) != 0;
    const std::uint8_t reg = request & 0x0cU;
    std::uint32_t value = 0;
    if (!read) {
      if (at + 4 > c.size()) break;
      value = u32_at(c, at);
      at += 4;
    }
    if (!options_.target_answers) {
      ack = 7;  // no target: the lines float high
      break;
    }
    if (!ap) {
      if (reg == 0x0 && read) value = dpidr;
      if (reg == 0x0 && !read && (value & 0x1eU) != 0) {
        sticky_ = false;
        ++aborts;
      }
      if (reg == 0x4) {
        if (read) {
          value = ctrl_stat_ | ((ctrl_stat_ & 0x50000000U) << 1U) | (sticky_ ? 0x20U : 0U);
        } else {
          ctrl_stat_ = value & 0x50000000U;
        }
      }
      if (reg == 0x8 && !read) select_ = value;
    } else {
      if (sticky_ || (ctrl_stat_ & 0x50000000U) != 0x50000000U || (select_ >> 24U) != 0) {
        ack = 4;
        ++faults;
        break;
      }
      if (reg == 0x0) {
        if (read) {
          value = csw_;
        } else {
          csw_ = value;
        }
      } else if (reg == 0x4) {
        if (read) {
          value = tar_;
        } else {
          tar_ = value;
        }
      } else if (reg == 0xc) {
        if (!access(!read, tar_, value)) {
          sticky_ = true;
          ack = 4;
          ++faults;
          break;
        }
        if (((csw_ >> 4U) & 3U) == 1U) tar_ = (tar_ & ~0x3ffU) | ((tar_ + 4) & 0x3ffU);  // wraps in 1 KiB
      }
    }
    if (read) put_u32(data, value);
  }
  reply = {0x05, static_cast<std::uint8_t>(done), ack};
  if (ack == 1) reply.insert(reply.end(), data.begin(), data.end());
}

void DapTarget::reply(Bytes bytes) {
  if (options_.hid) bytes.resize(report_size, 0);
  push_in_locked(0x81, std::move(bytes));
}

void DapTarget::on_out(std::uint8_t endpoint, const Bytes& c) {
  if (endpoint != 0x01 || c.empty()) return;
  if (options_.hid && c.size() != report_size) ++short_reports;
  switch (c[0]) {
    case 0x00:  // DAP_Info: packet size
      if (c.size() > 1 && c[1] == 0xff) {
        reply({0x00, 2, static_cast<std::uint8_t>(options_.hid ? 64 : 0x00),
               static_cast<std::uint8_t>(options_.hid ? 0 : 2)});
      } else {
        reply({0x00, 0});
      }
      break;
    case 0x02:  // DAP_Connect
      reply({0x02, static_cast<std::uint8_t>(c.size() > 1 && (c[1] == 0 || c[1] == 1) ? 1 : 0)});
      break;
    case 0x03:  // DAP_Disconnect
      disconnected = true;
      reply({0x03, 0});
      break;
    case 0x04:
    case 0x11:
    case 0x12:
      reply({c[0], 0});
      break;
    case 0x05: {
      Bytes answer;
      transfer(c, answer);
      ++transfers;
      transfer_words += answer.size() > 3 ? (answer.size() - 3) / 4 : 0;
      reply(answer);
      if (options_.rtt && !halted) run_rtt_firmware();  // the core runs between commands
      break;
    }
    default:
      reply({0xff});
  }
}

}  // namespace usbemu
