// Firmware models of the emulated probes, following the protocol documents, not our
// implementation: the LPC-Link2's proprietary SWO port (seed spec; epochs, fill levels,
// 0x82 flushes that repeat 0x04 data), a CMSIS-DAP v2 probe (SWO commands, streaming
// endpoint or DAP_SWO_Data) and ST-Links (V3; V2 with old firmware). Each delivers the
// bytes of `swo` as the target "sends" them and records what the host could have got.
#pragma once

#include <cstdint>
#include <optional>
#include <set>

#include "usbfs_emulator.hpp"

namespace usbemu {

struct LpcLink2Options {
  Bytes swo;                            // what the target sends
  std::size_t bytes_per_poll = 300;     // what arrives between two polls
  std::uint32_t clock_hz = 96'000'000;  // rates are clock / divider, divider >= 8
  std::uint8_t first_epoch = 1;
  std::set<std::uint8_t> lose_flush_of;           // epochs whose 0x82 never reaches the host
  std::optional<std::uint8_t> skip_epochs_after;  // after this epoch, 3 epochs vanish entirely
  std::size_t answer_polls = 0;                   // stop answering after this many polls (0 = always answer)
  std::string serial = "LPC2EMU1";
  int address = 2;
};

class LpcLink2 final : public DeviceModel {
 public:
  explicit LpcLink2(LpcLink2Options options);
  void on_out(std::uint8_t endpoint, const Bytes& command) override;

  // Under `mutex`: what the host received once each (in order), and what it could not.
  Bytes delivered;
  std::size_t lost = 0;
  std::uint32_t rate = 0;
  std::size_t polls = 0;

 private:
  void poll(Bytes& reply);
  void arrive(std::size_t count);
  LpcLink2Options options_;
  std::size_t sent_ = 0;  // bytes of swo that have "arrived" at the probe
  std::uint8_t epoch_;
  Bytes buffer_;  // the current epoch's capture buffer
  Bytes spill_;   // arrived while the buffer was full (double buffering)
  std::size_t reported_ = 0;
};

struct CmsisDapOptions {
  Bytes swo;
  bool streaming = true;    // a third (SWO) bulk endpoint and capability bit 6
  bool manchester = false;  // capability bit 3
  std::uint32_t clock_hz = 72'000'000;
  std::size_t bytes_per_poll = 2000;
  bool report_overrun = false;  // SWO_Status reports one overrun
  std::string serial = "DAPEMU01";
};

class CmsisDapV2 final : public DeviceModel {
 public:
  explicit CmsisDapV2(CmsisDapOptions options);
  void on_out(std::uint8_t endpoint, const Bytes& command) override;
  void on_in_wanted(std::uint8_t endpoint, std::size_t length) override;

  std::uint8_t mode = 0;
  bool running = false;
  std::uint32_t rate = 0;
  std::size_t sent = 0;

 private:
  void reply(Bytes bytes) { push_in_locked(0x81, std::move(bytes)); }
  CmsisDapOptions options_;
  bool overrun_reported_ = false;
};

struct StLinkOptions {
  Bytes swo;
  bool v3 = true;  // false: ST-Link/V2 (0x3748) with firmware J12, no trace
  std::size_t bytes_per_poll = 3000;
  std::string serial = "STLEMU0001";
};

class StLink final : public DeviceModel {
 public:
  explicit StLink(StLinkOptions options);
  void on_out(std::uint8_t endpoint, const Bytes& command) override;

  bool running = false;
  std::uint32_t rate = 0;
  std::size_t sent = 0;

 private:
  StLinkOptions options_;
  std::uint8_t trace_endpoint_;
  std::uint8_t reply_endpoint_ = 0x81;
};

}  // namespace usbemu
